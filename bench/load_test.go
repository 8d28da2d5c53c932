package bench

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// loadOptions are small load-class options against addr, sessions held
// in this process.
func loadOptions(t *testing.T, addr string) LoadOptions {
	return LoadOptions{Servers: []string{addr}, SessionTimeout: 10 * time.Second, Log: testLog{t}}
}

// testLog writes the classes' notes to the test's log.
type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(string(bytes.TrimRight(p, "\n")))
	return len(p), nil
}

// TestHerdAgainstZkraft: every watcher is notified and re-reads in every
// round, and no session breaks.
func TestHerdAgainstZkraft(t *testing.T) {
	addr := startZkraft(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := RunHerd(ctx, HerdConfig{LoadOptions: loadOptions(t, addr), Watchers: 50, Rounds: 2, Gap: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rounds) != 2 || res.Broken != 0 || res.Lost != 0 || res.Unexpected != 0 {
		t.Fatalf("herd: %+v", res)
	}
	for i, r := range res.Rounds {
		if r.Rereads != 50 || r.BadRereads != 0 || r.LastReread <= 0 || r.LastEvent > r.LastReread {
			t.Errorf("round %d: %+v", i, r)
		}
	}
}

// TestTableInWorkerProcesses: sessions held by two `zkraft bench
// --worker` processes all open, stay, and are closed.
func TestTableInWorkerProcesses(t *testing.T) {
	addr, bin := startZkraftBin(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	o := loadOptions(t, addr)
	o.Bin, o.PerWorker = bin, 60
	held := 0
	res, err := RunTable(ctx, TableConfig{LoadOptions: o, Sessions: 100, Hold: func() error {
		held = aliveConnections(t, addr)
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Sessions != 100 || res.Lost != 0 || res.Connect <= 0 || held < 100 {
		t.Fatalf("table: %+v, %d connections while held", res, held)
	}
	for deadline := time.Now().Add(10 * time.Second); aliveConnections(t, addr) > 1; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d connections left after the table closed", aliveConnections(t, addr))
		}
	}
}

// TestOverloadSmall: a short overload measures a capacity, offers three
// times it, keeps every session and recovers.
func TestOverloadSmall(t *testing.T) {
	addr := startZkraft(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	samples := 0
	res, err := RunOverload(ctx, OverloadConfig{LoadOptions: loadOptions(t, addr), Sessions: 8, Idle: 20, Keys: 50,
		Capacity: time.Second, Duration: 3 * time.Second, Recovery: 10 * time.Second,
		Sample: func() []int64 { samples++; return []int64{int64(samples)} }})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", res)
	if res.Capacity <= 0 || res.Offered != 3*res.Capacity || res.Throughput <= 0 || res.Recovery < 0 {
		t.Errorf("figures: capacity %.0f, offered %.0f, throughput %.0f, recovery %v", res.Capacity, res.Offered, res.Throughput, res.Recovery)
	}
	if res.Expired != 0 || res.Lost != 0 || res.LoadErrors != 0 {
		t.Errorf("sessions expired %d, lost %d, load errors %d (%s)", res.Expired, res.Lost, res.LoadErrors, res.FirstError)
	}
	if res.LoadSeconds != 3 || len(res.Seconds) < 3 || res.Seconds[1].RSS == nil {
		t.Errorf("%d seconds (%d of load), second 1's sample %v", len(res.Seconds), res.LoadSeconds, res.Seconds[1].RSS)
	}
}

// TestStormOnAnEnsembleThatDoesNotComeBack: a storm whose ensemble never
// serves again (its only member killed) is a finding, not a failed run:
// every session not back, "never" for the resumption, and no count of
// the ephemerals, with the reason.
func TestStormOnAnEnsembleThatDoesNotComeBack(t *testing.T) {
	t.Parallel() // mostly waiting for the sessions to give up
	addr, _, srv := startZkraftProc(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	o := loadOptions(t, addr)
	o.SessionTimeout = 2 * time.Second
	res, err := RunStorm(ctx, StormConfig{LoadOptions: o, Sessions: 4, Watch: 500 * time.Millisecond, Kill: func() (string, error) {
		return "the only member", srv.Process.Kill()
	}})
	if err != nil {
		t.Fatalf("storm: %v", err)
	}
	if res.Resumed != 0 || res.NotBack+res.Expired != 4 || res.AllBack != -1 || res.ResumeP50 != -1 || res.ResumeP99 != -1 {
		t.Errorf("storm: %+v; want no session back, and never", res)
	}
	if res.Ephemerals != -1 || !strings.Contains(res.Unserved, "no member served") {
		t.Errorf("storm: %d ephemerals (%q); want none counted, and why", res.Ephemerals, res.Unserved)
	}
}
