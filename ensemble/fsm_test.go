package ensemble

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/hashicorp/raft"
	"go.uber.org/zap"

	"github.com/zkraft/zkraft/backend"
	"github.com/zkraft/zkraft/ensemble/storage"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/watches"
	"github.com/zkraft/zkraft/znode"
)

// testFSM is an FSM with no Raft around it (the Nomad fsm_test pattern):
// entries are encoded and applied directly.
func testFSM(t *testing.T) *fsm {
	t.Helper()
	return newFSM(zap.NewNop(), znode.Options{}, watches.New(), newWaiters(), newExpiry())
}

func makeLog(t *testing.T, index uint64, origin uint64, txn *znode.Txn) *raft.Log {
	t.Helper()
	var w jute.Writer
	e := entry{Kind: kindTxn, Origin: origin, Txn: txn}
	e.encode(&w)
	return &raft.Log{Index: index, Type: raft.LogCommand, Data: w.Buf}
}

var open = []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "world", ID: "anyone"}}}

func createTxn(session int64, path string, flags int32, time int64) *znode.Txn {
	return &znode.Txn{Type: jute.OpCreate2, Session: session, Time: time,
		Req: jute.Marshal(&jute.CreateRequest{Path: path, Data: []byte(path), ACL: open, Flags: flags})}
}

type recorder struct {
	res    *znode.Result
	failed error
}

func (r *recorder) Applied(res *znode.Result, _ *znode.Tree) { r.res = res }
func (r *recorder) Failed(err error)                         { r.failed = err }

func TestFSMApplyUsesIndexAsZxidAndProposerTime(t *testing.T) {
	f := testFSM(t)
	rec := &recorder{}
	f.waiters.put(42, rec)
	f.ApplyBatch([]*raft.Log{
		makeLog(t, 7, 0, &znode.Txn{Type: jute.OpCreateSession, Session: 1, Time: 1000, Timeout: 4000, Passwd: make([]byte, 16)}),
		{Index: 8, Type: raft.LogConfiguration},
		makeLog(t, 9, 42, createTxn(1, "/a", 0, 123456)),
	})
	if rec.res == nil || rec.res.Err != jute.OK {
		t.Fatalf("waiter not completed: %+v", rec.res)
	}
	cr := rec.res.Resp.(*jute.Create2Response)
	if cr.Stat.Czxid != 9 || cr.Stat.Ctime != 123456 || cr.Stat.Mtime != 123456 {
		t.Fatalf("stat %+v: want czxid 9 (the Raft index) and the proposer's time", cr.Stat)
	}
	if f.lastZxid.Load() != 9 {
		t.Fatalf("lastZxid %d", f.lastZxid.Load())
	}
}

func TestFSMSessionCloseFiresHookAndDeletesEphemerals(t *testing.T) {
	f := testFSM(t)
	var closed []int64
	f.hooks.Store(&backend.Hooks{SessionClosed: func(id int64) { closed = append(closed, id) }})
	f.ApplyBatch([]*raft.Log{
		makeLog(t, 1, 0, &znode.Txn{Type: jute.OpCreateSession, Session: 5, Time: 1, Timeout: 4000, Passwd: make([]byte, 16)}),
		makeLog(t, 2, 0, createTxn(5, "/e", jute.FlagEphemeral, 2)),
		makeLog(t, 3, 0, &znode.Txn{Type: jute.OpCloseSession, Session: 5, Time: 3}),
	})
	if len(closed) != 1 || closed[0] != 5 {
		t.Fatalf("hook calls %v", closed)
	}
	if _, err := f.tree.Exists("/e", nil); err != jute.ErrNoNode {
		t.Fatalf("ephemeral survived its session: %v", err)
	}
}

func TestFSMSnapshotRestoreIsExact(t *testing.T) {
	f := testFSM(t)
	logs := []*raft.Log{makeLog(t, 1, 0, &znode.Txn{Type: jute.OpCreateSession, Session: 9, Time: 1, Timeout: 4000, Passwd: bytes.Repeat([]byte{7}, 16)})}
	for i, p := range []string{"/a", "/a/b", "/a/c"} {
		logs = append(logs, makeLog(t, uint64(2+i), 0, createTxn(9, p, 0, int64(10+i))))
	}
	logs = append(logs, makeLog(t, 5, 0, &znode.Txn{Type: jute.OpDelete, Session: 9, Time: 20,
		Req: jute.Marshal(&jute.PathVersionRequest{Path: "/a/b", Version: -1})}))
	f.ApplyBatch(logs)

	image := snapshotImage(t, f)
	g := testFSM(t)
	if err := g.Restore(io.NopCloser(bytes.NewReader(image))); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/", "/a", "/a/c", "/zookeeper"} {
		_, s1, err1 := f.tree.GetData(p, nil)
		_, s2, err2 := g.tree.GetData(p, nil)
		if err1 != nil || err2 != nil || s1 != s2 {
			t.Errorf("%s: before %+v (%v) after %+v (%v)", p, s1, err1, s2, err2)
		}
	}
	if info, ok := g.tree.Session(9); !ok || !bytes.Equal(info.Passwd, bytes.Repeat([]byte{7}, 16)) {
		t.Fatalf("session not restored: %+v %v", info, ok)
	}
	if g.lastZxid.Load() != 5 {
		t.Fatalf("lastZxid after restore %d", g.lastZxid.Load())
	}
}

// TestFSMRestoreFailsAwaitedProposals checks that a snapshot replacing the
// state fails the proposals this member still awaits: the entries it
// covers are never applied here, so without this their requests (a
// follower's forwarded writes) would never be answered.
func TestFSMRestoreFailsAwaitedProposals(t *testing.T) {
	f := testFSM(t)
	f.ApplyBatch([]*raft.Log{makeLog(t, 1, 0, createTxn(0, "/a", 0, 1))})
	image := snapshotImage(t, f)
	g := testFSM(t)
	awaited := &recorder{}
	g.waiters.put(7, awaited)
	if err := g.Restore(io.NopCloser(bytes.NewReader(image))); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(awaited.failed, errRestored) || awaited.res != nil {
		t.Fatalf("awaited proposal after a restore: failed %v, result %+v", awaited.failed, awaited.res)
	}
	if g.waiters.take(7) != nil {
		t.Fatal("waiter still registered")
	}
}

// snapshotImage is f's snapshot as Persist writes it.
func snapshotImage(t *testing.T, f *fsm) []byte {
	t.Helper()
	snap, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Release()
	sink := &memSink{}
	if err := snap.Persist(sink); err != nil {
		t.Fatal(err)
	}
	return sink.Bytes()
}

// memSink is a raft.SnapshotSink in memory.
type memSink struct{ bytes.Buffer }

func (m *memSink) ID() string    { return "mem" }
func (m *memSink) Cancel() error { return nil }
func (m *memSink) Close() error  { return nil }

// TestFSMAppliesOnlyDurableEntries checks a batch waits for its last entry
// to be on this member's disk before anything in it is applied or
// answered (asynclog.go).
func TestFSMAppliesOnlyDurableEntries(t *testing.T) {
	f := testFSM(t)
	rec := &recorder{}
	f.waiters.put(42, rec)
	var waitedFor uint64
	f.durable = func(index uint64) error {
		waitedFor = index
		if rec.res != nil || f.lastZxid.Load() != 0 {
			t.Error("applied before the durable wait")
		}
		return nil
	}
	f.ApplyBatch([]*raft.Log{
		makeLog(t, 3, 0, &znode.Txn{Type: jute.OpCreateSession, Session: 1, Time: 1000, Timeout: 4000, Passwd: make([]byte, 16)}),
		makeLog(t, 4, 42, createTxn(1, "/a", 0, 1)),
	})
	if waitedFor != 4 || rec.res == nil {
		t.Fatalf("waited for %d, result %+v", waitedFor, rec.res)
	}
}

// TestFSMApplicableRunsBeforeApply: the applicable hook (the leader's early
// commit notices) sees the batch before any of it is applied.
func TestFSMApplicableRunsBeforeApply(t *testing.T) {
	f := testFSM(t)
	var before []uint64
	var existed bool
	f.applicable = func(logs []*raft.Log) {
		for _, l := range logs {
			before = append(before, l.Index)
		}
		_, _, err := f.tree.GetData("/a", nil)
		existed = err == nil
	}
	f.ApplyBatch([]*raft.Log{
		makeLog(t, 1, 0, &znode.Txn{Type: jute.OpCreateSession, Session: 1, Time: 1, Timeout: 4000, Passwd: make([]byte, 16)}),
		makeLog(t, 2, 0, createTxn(1, "/a", 0, 1)), makeLog(t, 3, 0, createTxn(1, "/b", 0, 1)),
	})
	if len(before) != 3 || before[0] != 1 || before[2] != 3 || existed {
		t.Fatalf("applicable saw %v, /a existed: %v", before, existed)
	}
	if _, _, err := f.tree.GetData("/b", nil); err != nil {
		t.Fatalf("batch not applied: %v", err)
	}
}

// TestHasWork: only a batch of nothing but commit nudges has no work.
func TestHasWork(t *testing.T) {
	nudge := &raft.Log{Type: raft.LogCommand, Data: nudgeEntry}
	if hasWork([]*raft.Log{nudge, nudge}) {
		t.Error("a batch of nudges has work")
	}
	if !hasWork([]*raft.Log{nudge, makeLog(t, 2, 0, createTxn(0, "/a", 0, 1))}) {
		t.Error("a create is no work")
	}
	if !hasWork([]*raft.Log{{Type: raft.LogConfiguration}}) {
		t.Error("a configuration change is no work")
	}
	var w jute.Writer
	(&entry{Kind: kindBarrier, Origin: 9}).encode(&w)
	if !hasWork([]*raft.Log{{Type: raft.LogCommand, Data: w.Buf}}) {
		t.Error("an awaited barrier (sync) is no work")
	}
}

// TestFSMStopsWhenEntriesAreNotDurable: when the log write behind a batch
// failed (a full disk), the FSM must neither apply nor answer any of it,
// and must stop for good: answering would acknowledge a write that the
// member's log does not hold (on 7d71c65 the wait's error was ignored and
// the write answered OK just before the process exited).
func TestFSMStopsWhenEntriesAreNotDurable(t *testing.T) {
	f := testFSM(t)
	rec := &recorder{}
	f.waiters.put(42, rec)
	diskFull := errors.New("no space left on device")
	f.durable = func(uint64) error { return diskFull }
	var stopped []error
	f.stop = func(err error) { stopped = append(stopped, err) }
	batch := []*raft.Log{
		makeLog(t, 3, 0, &znode.Txn{Type: jute.OpCreateSession, Session: 1, Time: 1000, Timeout: 4000, Passwd: make([]byte, 16)}),
		makeLog(t, 4, 42, createTxn(1, "/a", 0, 1)),
	}
	f.ApplyBatch(batch)
	if rec.res != nil || f.lastZxid.Load() != 0 {
		t.Fatalf("applied or answered an entry that is not durable: %+v", rec.res)
	}
	if len(stopped) != 1 || !errors.Is(stopped[0], diskFull) {
		t.Fatalf("stop calls: %v", stopped)
	}
	f.durable = func(uint64) error { return nil }
	f.ApplyBatch([]*raft.Log{makeLog(t, 5, 0, createTxn(1, "/b", 0, 1))})
	if f.lastZxid.Load() != 0 || len(stopped) != 1 {
		t.Fatalf("a stopped FSM applied more (last zxid %d, stops %d)", f.lastZxid.Load(), len(stopped))
	}
}

// TestFSMStopsOnUndecodableEntry: an entry this build cannot decode (a bug,
// or a newer member's format in a rolling upgrade) stops the member at that
// entry: what precedes it in the batch is applied, nothing after it, and
// it is never skipped (7d71c65 logged and skipped it, so a member that
// could decode it diverged from one that could not).
func TestFSMStopsOnUndecodableEntry(t *testing.T) {
	f := testFSM(t)
	var stopped []error
	f.stop = func(err error) { stopped = append(stopped, err) }
	rec := &recorder{}
	f.waiters.put(43, rec)
	f.ApplyBatch([]*raft.Log{
		makeLog(t, 1, 0, &znode.Txn{Type: jute.OpCreateSession, Session: 1, Time: 1000, Timeout: 4000, Passwd: make([]byte, 16)}),
		makeLog(t, 2, 0, createTxn(1, "/a", 0, 1)),
		{Index: 3, Term: 2, Type: raft.LogCommand, Data: []byte{99, 0, 0, 0, 0, 0, 0, 0, 1, 7}},
		makeLog(t, 4, 43, createTxn(1, "/b", 0, 1)),
	})
	if len(stopped) != 1 || !strings.Contains(stopped[0].Error(), "log entry 3 (term 2) cannot be decoded") {
		t.Fatalf("stop calls: %v", stopped)
	}
	if f.lastZxid.Load() != 2 || rec.res != nil {
		t.Fatalf("last zxid %d (want 2), later entry answered: %+v", f.lastZxid.Load(), rec.res)
	}
	if _, _, err := f.tree.GetData("/b", nil); err == nil {
		t.Fatal("an entry after the undecodable one was applied")
	}
}

// TestFSMWithoutStopPanics: an FSM nobody can stop refuses to go on.
func TestFSMWithoutStopPanics(t *testing.T) {
	f := testFSM(t)
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	f.ApplyBatch([]*raft.Log{{Index: 1, Type: raft.LogCommand, Data: []byte{99, 0, 0, 0, 0, 0, 0, 0, 1}}})
}

// TestHaltedFSMRefusesSnapshots: once an entry could not be applied (here
// its batch is not durable, as every batch of a closing member), Raft
// still counts the batch as applied; a snapshot then would be labelled
// past the tree's state, and a member restarted from it would never apply
// the entries between. Snapshot refuses instead.
func TestHaltedFSMRefusesSnapshots(t *testing.T) {
	f := testFSM(t)
	f.ApplyBatch([]*raft.Log{makeLog(t, 1, 0, &znode.Txn{Type: jute.OpCreateSession, Session: 1, Time: 1, Timeout: 10000, Passwd: make([]byte, 16)})})
	halted := make(chan error, 1)
	f.stop = func(err error) { halted <- err }
	f.durable = func(uint64) error { return storage.ErrLogClosed }
	if out := f.ApplyBatch([]*raft.Log{makeLog(t, 2, 0, createTxn(1, "/never", 0, 2))}); out[0] != nil {
		t.Fatalf("applied %v past a batch that is not durable", out[0])
	}
	if err := <-halted; !errors.Is(err, storage.ErrLogClosed) {
		t.Fatalf("halted with %v", err)
	}
	if snap, err := f.Snapshot(); err == nil {
		snap.Release()
		t.Fatal("a halted FSM took a snapshot")
	}
}

// zxidAtNotify records the member's last zxid when each notification is
// queued.
type zxidAtNotify struct {
	f    *fsm
	seen []int64
}

func (w *zxidAtNotify) Notify(string, jute.EventType, int64) {
	w.seen = append(w.seen, w.f.lastZxid.Load())
}
func (w *zxidAtNotify) Ids() []jute.Id { return nil }

// TestLastZxidPublishedAfterItsEvents: the zxid a reply may carry off the
// tree's lock (LastZxid) reaches an entry only once its watch events are
// queued, so no client is told of a zxid before the events it caused.
func TestLastZxidPublishedAfterItsEvents(t *testing.T) {
	f := testFSM(t)
	f.ApplyBatch([]*raft.Log{makeLog(t, 1, 0, &znode.Txn{Type: jute.OpCreateSession, Session: 1, Time: 1, Timeout: 10000, Passwd: make([]byte, 16)})})
	w := &zxidAtNotify{f: f}
	f.watches.AddExist("/n", w)
	f.ApplyBatch([]*raft.Log{makeLog(t, 2, 0, createTxn(1, "/n", 0, 2))})
	if len(w.seen) != 1 || w.seen[0] != 1 {
		t.Fatalf("last zxid when NodeCreated of zxid 2 was queued: %v, want [1]", w.seen)
	}
	if f.lastZxid.Load() != 2 {
		t.Fatalf("last zxid %d after the apply, want 2", f.lastZxid.Load())
	}
}
