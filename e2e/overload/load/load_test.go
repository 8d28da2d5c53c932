package load

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/zkraft/zkraft/bench"
	"github.com/zkraft/zkraft/internal/cli/fourletter"
	"github.com/zkraft/zkraft/internal/testing/benchcluster"
	"github.com/zkraft/zkraft/internal/testing/testenv"
)

// zkraftBin is the zkraft binary TestMain builds once for every test.
var zkraftBin string

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(testenv.CollectingRaces(func() int {
		if testing.Short() {
			return m.Run() // every test skips
		}
		dir, err := os.MkdirTemp("", "zkraft-load-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		zkraftBin = filepath.Join(dir, "zkraft")
		// go test puts its own GOROOT/bin first on PATH.
		args := append([]string{"build", "-o", zkraftBin}, testenv.BuildFlags()...)
		build := exec.Command("go", append(args, "../../../cmd/zkraft")...)
		if out, err := build.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "build zkraft: %v\n%s", err, out)
			return 1
		}
		return m.Run()
	}))
}

// sessionTimeout is every test session's: long enough that a loaded
// machine does not expire sessions that ping, short enough for the
// storm to wait out one after the resumptions.
const sessionTimeout = 12 * time.Second

// startEnsemble starts three zkraft members (process groups of their own
// that get SIGKILL if the test binary dies; killed in Cleanup) and waits
// until they serve.
func startEnsemble(t *testing.T) *benchcluster.Ensemble {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: starts three members and thousands of sessions")
	}
	e, err := benchcluster.New(benchcluster.Config{Name: "zkraft", Root: t.TempDir(), Bin: zkraftBin, Size: 3,
		Settings: []string{"maxSessionTimeout=60000"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		e.Stop()
		if t.Failed() {
			for _, m := range e.Members {
				t.Logf("member %d's log ends:\n%s", m.ID, benchcluster.LogTail(m.LogPath(), 30))
			}
		}
	})
	if _, err := e.WaitServing(time.Minute, 0); err != nil {
		t.Fatal(err)
	}
	return e
}

// options are the load options for e; bin set holds the sessions in
// worker processes of perWorker each, else in the test's process.
func options(t *testing.T, e *benchcluster.Ensemble, bin string, perWorker int) bench.LoadOptions {
	return bench.LoadOptions{Servers: e.Addrs(), Bin: bin, PerWorker: perWorker, SessionTimeout: sessionTimeout, Log: testLog{t}}
}

// testLog writes the classes' notes to the test's log.
type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(string(bytes.TrimRight(p, "\n")))
	return len(p), nil
}

// liveness bounds a whole class: far beyond what it takes on a loaded
// machine, there only so that a hang fails the test instead of the run.
func liveness(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// TestHerd: 2,000 watchers over three members hold a data watch on one
// znode; after each write every one of them is notified and re-reads it
// (re-arming its watch), round after round, and no session is lost.
func TestHerd(t *testing.T) {
	e := startEnsemble(t)
	const n = 2000
	res, err := bench.RunHerd(liveness(t), bench.HerdConfig{LoadOptions: options(t, e, "", 0), Watchers: n, Rounds: 3, Gap: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rounds) != 3 {
		t.Fatalf("%d rounds completed, want 3", len(res.Rounds))
	}
	for i, r := range res.Rounds {
		if r.Rereads != n || r.BadRereads != 0 {
			t.Errorf("round %d: %d of %d watchers re-read, %d re-reads failed", i+1, r.Rereads, n, r.BadRereads)
		}
	}
	if res.Broken != 0 || res.Lost != 0 || res.Unexpected != 0 {
		t.Errorf("%d watcher connections broke, %d sessions lost, %d unexpected notifications", res.Broken, res.Lost, res.Unexpected)
	}
	if res.Bystander.Failed != 0 {
		t.Errorf("%d of the bystander's requests failed during the rounds", res.Bystander.Failed)
	}
}

// TestReconnectStorm: 3,000 sessions over three members, each with an
// ephemeral and pinging from the moment it opens; the leader gets kill
// -9; every session whose connection broke resumes on a survivor (same
// id and password, its last zxid) and none expires: a session timeout
// after the last resumption every session answers and every ephemeral
// is there. The sessions are held by two worker processes, as
// scripts/overload holds tens of thousands.
func TestReconnectStorm(t *testing.T) {
	e := startEnsemble(t)
	const n = 3000
	var victim *benchcluster.Member
	kill := func() (string, error) {
		if victim = e.Leader(); victim == nil {
			return "", fmt.Errorf("no leader")
		}
		victim.Kill()
		return "the leader, member " + strconv.Itoa(victim.ID), nil
	}
	res, err := bench.RunStorm(liveness(t), bench.StormConfig{LoadOptions: options(t, e, zkraftBin, n/2), Sessions: n, Kill: kill})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", *res)
	if res.Resumed < n/3 || res.Disconnects < n/3 {
		t.Errorf("%d sessions resumed after %d broken connections: want at least the killed member's %d", res.Resumed, res.Disconnects, n/3)
	}
	if res.Expired != 0 || res.NotBack != 0 {
		t.Errorf("%d sessions expired, %d neither resumed nor expired (%s)", res.Expired, res.NotBack, res.FirstError)
	}
	if res.Answering != n || res.Ephemerals != n {
		t.Errorf("a session timeout after the storm, %d of %d sessions answer and %d ephemerals are left %s", res.Answering, n, res.Ephemerals, res.Unserved)
	}
}

// rssCeiling bounds a member's resident memory under any class here: a
// few thousand sessions and a thousand small znodes need a fraction of
// it, so only a member whose queues grow without bound reaches it.
const rssCeiling = 1 << 30

// TestOverload: with three times the write capacity offered for ten
// seconds (64 requests in flight per load session at most), no session
// expires (500 idle ones ping throughout) and no request fails, the
// members' memory stays below a ceiling and goes no higher in the second
// half than in the first (but for a margin), every request is answered once the load stops, and then
// every member answers a new client at once.
func TestOverload(t *testing.T) {
	e := startEnsemble(t)
	sample := func() []int64 {
		v := make([]int64, len(e.Members))
		for i, m := range e.Members {
			v[i], _ = m.RSS()
		}
		return v
	}
	res, err := bench.RunOverload(liveness(t), bench.OverloadConfig{LoadOptions: options(t, e, "", 0), Sessions: 32, Window: 64, Idle: 500,
		Capacity: 6 * time.Second, Duration: 10 * time.Second, Recovery: 30 * time.Second, Sample: sample})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("capacity %.0f setData/s, %.0f offered, %.0f answered per second (p99 %v then %v), bystander p99 %v (quiet %v), drain %v, recovery %v",
		res.Capacity, res.Offered, res.Throughput, res.P99FirstHalf, res.P99SecondHalf, res.Bystander.P99, res.Baseline.P99, res.Drain, res.Recovery)
	if res.Expired != 0 || res.Lost != 0 || res.LoadErrors != 0 {
		t.Errorf("%d sessions expired, %d lost, %d setData failed (%s)", res.Expired, res.Lost, res.LoadErrors, res.FirstError)
	}
	if res.Throughput <= 0 {
		t.Error("no setData answered during the overload")
	}
	if res.Drain >= 30*time.Second {
		t.Errorf("requests still unanswered %v after the load stopped", res.Drain)
	}
	// A collected heap rises and falls under a steady load; what must not
	// happen is a member going higher in the second half than in the
	// first by more than a margin.
	secs := res.Seconds[:min(res.LoadSeconds, len(res.Seconds))]
	mid := len(secs) / 2
	if len(secs) < 4 {
		t.Fatalf("%d seconds of overload sampled", len(secs))
	}
	for m := range e.Members {
		var first, second int64
		for i, s := range secs {
			if m >= len(s.RSS) {
				t.Fatalf("second %d: %d members sampled", i, len(s.RSS))
			}
			if s.RSS[m] > rssCeiling {
				t.Errorf("second %d: member %d holds %d MiB", i, m+1, s.RSS[m]>>20)
			}
			if i < mid {
				first = max(first, s.RSS[m])
			} else {
				second = max(second, s.RSS[m])
			}
		}
		if second > first*3/2+64<<20 {
			t.Errorf("member %d went up to %d MiB in the overload's second half, from at most %d MiB in its first", m+1, second>>20, first>>20)
		}
	}
	answersAtOnce(t, e)
}

// answersAtOnce checks that every member serves a new client: a session
// that creates, writes, reads and deletes a znode, within a few seconds.
func answersAtOnce(t *testing.T, e *benchcluster.Ensemble) {
	t.Helper()
	for _, m := range e.Members {
		start := time.Now()
		res, err := bench.Run(context.Background(), bench.Config{Servers: []string{m.ClientAddr}, Workload: "create-delete", Sessions: 1, Inflight: 1,
			ValueSize: 10, Keys: 1, Duration: 200 * time.Millisecond, ReadRatio: 0.5, Watchers: 1, Nodes: 1,
			SessionTimeout: sessionTimeout, ConnectTimeout: 5 * time.Second, Root: "/after-load", Seed: 1}, nil, nil)
		if err != nil {
			t.Errorf("member %d after the load: %v", m.ID, err)
			continue
		}
		if res.TotalOps() == 0 || res.TotalErrors() != 0 || time.Since(start) > 10*time.Second {
			t.Errorf("member %d after the load: %d ops, %d errors in %v", m.ID, res.TotalOps(), res.TotalErrors(), time.Since(start))
		}
	}
}

// TestConnectionTable: 5,000 idle sessions, held by two worker
// processes, all connect, every member counts its share of connections,
// the members' memory stays bounded (a generous 64 KiB per session over
// all three), none is lost while held, and all are gone once closed.
func TestConnectionTable(t *testing.T) {
	e := startEnsemble(t)
	const n = 5000
	rss := func() (sum int64) {
		for _, m := range e.Members {
			v, _ := m.RSS()
			sum += v
		}
		return sum
	}
	before := rss()
	res, err := bench.RunTable(liveness(t), bench.TableConfig{LoadOptions: options(t, e, zkraftBin, n/2), Sessions: n, Hold: func() error {
		if got := connections(e); got < n {
			t.Errorf("the members count %d client connections while %d sessions are open", got, n)
		}
		if grown := rss() - before; grown > 64<<10*n {
			t.Errorf("the members grew by %d MiB for %d sessions", grown>>20, n)
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Lost != 0 {
		t.Errorf("%d of %d idle sessions lost while held", res.Lost, n)
	}
	for deadline := time.Now().Add(30 * time.Second); connections(e) > 0; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d client connections left 30 s after the sessions closed", connections(e))
		}
	}
}

// connections sums the members' client connections (srvr), less the
// one asking each.
func connections(e *benchcluster.Ensemble) int {
	n := 0
	for _, m := range e.Members {
		c, _ := strconv.Atoi(fourletter.Field(fourletter.Ask(m.ClientAddr, "srvr"), "Connections: "))
		n += max(c-1, 0)
	}
	return n
}
