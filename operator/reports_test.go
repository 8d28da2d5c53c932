package operator

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestLargeReportsTakeTurns: while a server makes one large report (its
// answer grows with every connection, session or watch), another waits
// for its turn, and is refused as busy after reportWait, on the
// AdminServer (503, Retry-After) and through a four-letter word alike;
// small answers do not wait. Without the turns, 64 /commands/watches at
// once at a million watches held 2 GB and both cores.
func TestLargeReportsTakeTurns(t *testing.T) {
	ts := startServer(t)
	hs := httptest.NewServer(NewAdmin(ts.srv).Handler("/commands"))
	defer hs.Close()
	get := func(name string) (*http.Response, string) {
		t.Helper()
		resp, err := http.Get(hs.URL + "/commands/" + name)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	defer func(d time.Duration) { reportWait = d }(reportWait)
	reportWait = 100 * time.Millisecond

	done, err := takeReportTurn(context.Background(), ts.srv)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"watches", "wchp", "dump", "cons", "stat", "wchs"} {
		resp, body := get(name)
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "1" ||
			!strings.Contains(body, `"error" : "another large report is being made on this server; try again"`) {
			t.Errorf("%s while another report is made: %s %q", name, resp.Status, body)
		}
	}
	for _, name := range []string{"ruok", "mntr", "srvr", "conf"} {
		if resp, body := get(name); resp.StatusCode != http.StatusOK || !strings.Contains(body, `"error" : null`) {
			t.Errorf("%s waited for the large report: %s %q", name, resp.Status, body)
		}
	}
	if got := string(FourLetter{}.AnswerFourLetterWord(ts.srv, "wchc")); got != errReportBusy.Error()+"\n" {
		t.Errorf("wchc while another report is made: %q", got)
	}
	if got := string(FourLetter{}.AnswerFourLetterWord(ts.srv, "ruok")); got != "imok" {
		t.Errorf("ruok: %q", got)
	}
	done()
	if resp, body := get("watches"); resp.StatusCode != http.StatusOK || !strings.Contains(body, `"session_id_to_watched_paths"`) {
		t.Errorf("watches after the turn: %s %q", resp.Status, body)
	}

	// Many at once: each gets its answer, one at a time.
	reportWait = 10 * time.Second
	var running, most atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			done, err := takeReportTurn(context.Background(), ts.srv)
			if err != nil {
				t.Error(err)
				return
			}
			n := running.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			time.Sleep(5 * time.Millisecond)
			running.Add(-1)
			done()
		}()
	}
	wg.Wait()
	if most.Load() != 1 {
		t.Errorf("%d reports at once", most.Load())
	}
}
