package operator

import (
	"context"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"slices"
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

// TestLargeReportTurnEndsOnAPanic: a large report whose making panics
// (net/http recovers the handler's panic and serves on) still ends its
// turn; otherwise every later large report of the server would wait
// reportWait and be refused, for as long as the process runs.
func TestLargeReportTurnEndsOnAPanic(t *testing.T) {
	ts := startServer(t)
	defer func(d time.Duration) { reportWait = d }(reportWait)
	reportWait = 100 * time.Millisecond
	// The report panics once; set before the server starts, and put back
	// once it ran, so the handler's goroutines see each in turn.
	i := slices.IndexFunc(adminCommands, func(c adminCommand) bool { return c.names[0] == "watches" })
	run, ran := adminCommands[i].run, make(chan struct{})
	adminCommands[i].run = func(view) jsonObj { close(ran); panic("a report's bug") }
	hs := httptest.NewUnstartedServer(NewAdmin(ts.srv).Handler("/commands"))
	hs.Config.ErrorLog = log.New(io.Discard, "", 0) // the recovered panic
	hs.Start()
	defer hs.Close()

	if resp, err := http.Get(hs.URL + "/commands/watches"); err == nil {
		resp.Body.Close()
		t.Fatalf("the panicking report answered %s", resp.Status)
	}
	<-ran
	adminCommands[i].run = run

	resp, err := http.Get(hs.URL + "/commands/watches")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `"session_id_to_watched_paths"`) {
		t.Fatalf("watches after a report panicked: %s %q", resp.Status, b)
	}
}
