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
	// The "server" stalls for 1.5 s. The timeline sees it at its ticks'
	// resolution (100 ms, two ticks at the edges), and on a loaded machine
	// a late tick can cost a few more: the bounds allow for that.
	time.Sleep(1500 * time.Millisecond)
	busy(1100 * time.Millisecond)
	r.win.end.Store(nowNanos())
	res := &Result{}
	tl.finish(res)
	if res.LongestStallMs < 1150 || res.LongestStallMs > 1900 {
		t.Fatalf("longest stall %v ms, want about 1500", res.LongestStallMs)
	}
	if len(res.PerSecond) < 2 {
		t.Fatalf("per-second samples %v", res.PerSecond)
	}
	if !strings.Contains(strings.Join(res.Notes, ";"), "no reply at all for 1.") {
		t.Fatalf("notes %v", res.Notes)
	}
}
