package ensemble

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/backend"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

func openNode(t *testing.T, dir string, mutate ...func(*Config)) *Node {
	t.Helper()
	cfg := Config{DataDir: dir, TickTime: 100 * time.Millisecond}
	for _, m := range mutate {
		m(&cfg)
	}
	n, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestRestartReplaysEverythingAcknowledged(t *testing.T) {
	dir := t.TempDir()
	n := openNode(t, dir, func(c *Config) { c.SnapshotThreshold = 50 })
	if _, err := n.ProposeWait(&znode.Txn{Type: jute.OpCreateSession, Session: 3, Time: 1, Timeout: 10000, Passwd: make([]byte, 16)}); err != nil {
		t.Fatal(err)
	}
	var last jute.Stat
	for i := 0; i < 120; i++ {
		res, err := n.ProposeWait(createTxn(3, "/n"+string(rune('a'+i%26))+time.Duration(i).String(), 0, int64(i)))
		if err != nil || res.Err != jute.OK {
			t.Fatalf("create %d: %v %v", i, err, res)
		}
		last = res.Resp.(*jute.Create2Response).Stat
	}
	zxid := n.LastZxid()
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}

	m := openNode(t, dir)
	defer m.Close()
	if m.LastZxid() < zxid {
		t.Fatalf("after restart lastZxid %d < %d", m.LastZxid(), zxid)
	}
	tr := m.RLockTree()
	st := tr.Stats()
	_, ok := tr.Session(3)
	m.RUnlockTree()
	if st.Nodes != 4+120 || !ok {
		t.Fatalf("after restart: %d nodes (want %d), session present %v", st.Nodes, 4+120, ok)
	}
	_ = last
}

func TestLeaderExpiresIdleSession(t *testing.T) {
	n := openNode(t, t.TempDir())
	defer n.Close()
	closed := make(chan int64, 1)
	n.SetHooks(backend.Hooks{SessionClosed: func(id int64) { closed <- id }})
	if _, err := n.ProposeWait(&znode.Txn{Type: jute.OpCreateSession, Session: 11, Time: 1, Timeout: 300, Passwd: make([]byte, 16)}); err != nil {
		t.Fatal(err)
	}
	if _, err := n.ProposeWait(createTxn(11, "/eph", jute.FlagEphemeral, 2)); err != nil {
		t.Fatal(err)
	}
	select {
	case id := <-closed:
		if id != 11 {
			t.Fatalf("closed %d", id)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("session never expired")
	}
	tr := n.RLockTree()
	_, err := tr.Exists("/eph", nil)
	n.RUnlockTree()
	if err != jute.ErrNoNode {
		t.Fatalf("ephemeral survived expiry: %v", err)
	}
}

func TestTouchedSessionStaysAlive(t *testing.T) {
	n := openNode(t, t.TempDir())
	defer n.Close()
	if _, err := n.ProposeWait(&znode.Txn{Type: jute.OpCreateSession, Session: 12, Time: 1, Timeout: 300, Passwd: make([]byte, 16)}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 15; i++ {
		n.TouchSession(12)
		time.Sleep(60 * time.Millisecond)
	}
	tr := n.RLockTree()
	_, ok := tr.Session(12)
	n.RUnlockTree()
	if !ok {
		t.Fatal("a session touched within its timeout expired")
	}
}

// unresolvedFuture is a raft.ApplyFuture that never resolves, as
// hashicorp/raft leaves the futures still queued when it shuts down.
type unresolvedFuture struct{ never chan struct{} }

func (f unresolvedFuture) Error() error          { <-f.never; return nil }
func (f unresolvedFuture) Index() uint64         { return 0 }
func (f unresolvedFuture) Response() interface{} { return nil }

// TestCloseDoesNotWaitForUnresolvedFutures checks that Close returns, and
// fails the proposal, when Raft left a proposal's future unresolved:
// waiting on it hung Close (and a test's cleanup for 20 minutes in CI).
func TestCloseDoesNotWaitForUnresolvedFutures(t *testing.T) {
	n := openNode(t, t.TempDir())
	rec := &recorder{}
	const origin = 99
	n.waiters.put(origin, rec)
	never := make(chan struct{})
	defer close(never)
	n.pending <- pending{f: unresolvedFuture{never}, origin: origin}
	for len(n.pending) > 0 { // watchFailures now waits on it
		time.Sleep(time.Millisecond)
	}
	closed := make(chan error, 1)
	go func() { closed <- n.Close() }()
	select {
	case <-closed:
	case <-time.After(20 * time.Second):
		t.Fatal("Close waits for a future Raft never resolves")
	}
	if !errors.Is(rec.failed, ErrClosed) {
		t.Fatalf("proposal awaited at Close: failed %v, result %+v", rec.failed, rec.res)
	}
}

// TestNoSync: Config.NoSync (forceSync=no) reaches the log: writes are
// applied without a single fdatasync of the journal, and with the default
// every append is synced.
func TestNoSync(t *testing.T) {
	for _, noSync := range []bool{false, true} {
		n := openNode(t, t.TempDir(), func(c *Config) { c.NoSync = noSync })
		before := n.journal.Syncs.Load()
		writeSome(t, n, 9, "/a", "/b", "/c", "/d", "/e")
		synced := n.journal.Syncs.Load() - before
		if noSync && synced != 0 || !noSync && synced < 5 {
			t.Errorf("NoSync=%v: %d journal syncs for 6 writes", noSync, synced)
		}
		if err := n.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestMemberStopsAtAnEntryItCannotApply: an undecodable entry in the log
// stops the member through Config.Fatal; a write after it is never
// answered as applied (its waiter fails, the client's connection closes).
func TestMemberStopsAtAnEntryItCannotApply(t *testing.T) {
	fatal := make(chan error, 4)
	n := openNode(t, t.TempDir(), func(c *Config) { c.Fatal = func(err error) { fatal <- err } })
	defer n.Close()
	if _, err := n.ProposeWait(&znode.Txn{Type: jute.OpCreateSession, Session: 3, Time: 1, Timeout: 10000, Passwd: make([]byte, 16)}); err != nil {
		t.Fatal(err)
	}
	n.raft.Apply([]byte{99, 0, 0, 0, 0, 0, 0, 0, 1}, 0) // an entry kind no build knows
	res, err := n.ProposeWait(createTxn(3, "/after", 0, 2))
	if err == nil {
		t.Fatalf("a write after the bad entry was answered: %+v", res)
	}
	select {
	case err := <-fatal:
		if !strings.Contains(err.Error(), "cannot be decoded") {
			t.Fatalf("fatal: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the member did not stop")
	}
	// A write proposed once the member has stopped fails at once: nothing
	// will ever apply it (it used to wait forever when it lost the race
	// with the stop, hanging this test in a busy make test).
	late := make(chan error, 1)
	go func() {
		_, err := n.ProposeWait(createTxn(3, "/later", 0, 3))
		late <- err
	}()
	select {
	case err := <-late:
		if err == nil {
			t.Fatal("a write proposed after the member stopped was answered")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a write proposed after the member stopped waits forever")
	}
	tr := n.RLockTree()
	_, _, gerr := tr.GetData("/after", nil)
	n.RUnlockTree()
	if gerr == nil {
		t.Fatal("the write after the bad entry was applied")
	}
	if len(fatal) != 0 {
		t.Fatalf("Fatal called more than once: %v", <-fatal)
	}
}
