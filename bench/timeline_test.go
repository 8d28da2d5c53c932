package bench

import (
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/jute"
)

func TestTimelineFindsStall(t *testing.T) {
	r := &run{cfg: &Config{}, win: newWindow()}
	rec := r.newRecorder()
	r.win.start.Store(nowNanos())
	tl := startTimeline(r, false)
	busy := func(d time.Duration) {
		for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
			now := nowNanos()
			rec.done(classGet, now, now+1000, jute.OK)
		}
	}
	busy(1200 * time.Millisecond)
	time.Sleep(1300 * time.Millisecond) // the "server" stalls
	busy(1100 * time.Millisecond)
	r.win.end.Store(nowNanos())
	res := &Result{}
	tl.finish(res)
	if res.LongestStallMs < 1100 || res.LongestStallMs > 1600 {
		t.Fatalf("longest stall %v ms, want about 1300", res.LongestStallMs)
	}
	if len(res.PerSecond) < 2 {
		t.Fatalf("per-second samples %v", res.PerSecond)
	}
	if !strings.Contains(strings.Join(res.Notes, ";"), "no reply at all for 1.") {
		t.Fatalf("notes %v", res.Notes)
	}
}
