package storage

import (
	"errors"
	"fmt"
	"math/rand"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
)

// gatedLogStore holds every StoreLogs until the test lets it through.
type gatedLogStore struct {
	raft.LogStore
	gate  chan struct{}
	mu    sync.Mutex
	calls int
}

func (g *gatedLogStore) StoreLogs(logs []*raft.Log) error {
	<-g.gate
	g.mu.Lock()
	g.calls++
	g.mu.Unlock()
	return g.LogStore.StoreLogs(logs)
}

func newGatedAsyncStore(t *testing.T) (*AsyncLogStore, *gatedLogStore) {
	t.Helper()
	g := &gatedLogStore{LogStore: raft.NewInmemStore(), gate: make(chan struct{})}
	s, err := NewAsyncLogStore(g, func(err error) { t.Errorf("write failed: %v", err) })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		close(g.gate)
		s.Close()
	})
	return s, g
}

// TestAsyncLogStoreReadsBeforeDurable checks entries are readable as soon
// as StoreLogs returns, while the durable index and waits follow the disk.
func TestAsyncLogStoreReadsBeforeDurable(t *testing.T) {
	s, g := newGatedAsyncStore(t)
	if err := s.StoreLogs([]*raft.Log{testEntry(1, 1), testEntry(2, 1)}); err != nil {
		t.Fatal(err)
	}
	var got raft.Log
	if err := s.GetLog(2, &got); err != nil || !sameEntry(&got, testEntry(2, 1)) {
		t.Fatalf("queued entry: %v %+v", err, got)
	}
	if last, _ := s.LastIndex(); last != 2 {
		t.Fatalf("last %d", last)
	}
	if s.DurableIndex() != 0 {
		t.Fatalf("durable %d before the write", s.DurableIndex())
	}
	if err := s.StoreLogs([]*raft.Log{testEntry(4, 1)}); err == nil {
		t.Fatal("a gap was accepted")
	}
	waited := make(chan error, 1)
	go func() { waited <- s.waitDurable(2, nil) }()
	stillWaiting(t, waited, "waitDurable returned before the write")
	g.gate <- struct{}{}
	if err := <-waited; err != nil {
		t.Fatal(err)
	}
	if s.DurableIndex() != 2 || s.AcceptedSeq() != 1 {
		t.Fatalf("durable %d accepted %d", s.DurableIndex(), s.AcceptedSeq())
	}
	stop := make(chan struct{})
	close(stop)
	if err := s.StoreLogs([]*raft.Log{testEntry(3, 1)}); err != nil {
		t.Fatal(err)
	}
	if err := s.WaitStored(2, stop); !errors.Is(err, ErrLogClosed) {
		t.Fatalf("stopped wait: %v", err)
	}
}

// TestAsyncLogStoreTruncationWaits checks a suffix deletion waits for the
// writes queued before it and lowers the durable index.
func TestAsyncLogStoreTruncationWaits(t *testing.T) {
	s, g := newGatedAsyncStore(t)
	for i := uint64(1); i <= 5; i++ {
		if err := s.StoreLogs([]*raft.Log{testEntry(i, 1)}); err != nil {
			t.Fatal(err)
		}
	}
	deleted := make(chan error, 1)
	go func() { deleted <- s.DeleteRange(4, 5) }()
	select {
	case <-deleted:
		t.Fatal("truncation ran before the queued writes")
	case <-time.After(50 * time.Millisecond):
	}
	// The writer takes whatever has queued when it wakes: the first entry
	// alone if it woke before the others were queued, then the rest.
	for done := false; !done; {
		select {
		case g.gate <- struct{}{}:
		case err := <-deleted:
			if err != nil {
				t.Fatal(err)
			}
			done = true
		}
	}
	if g.calls > 2 {
		t.Fatalf("%d inner writes for five queued entries, want at most two batches", g.calls)
	}
	if last, _ := s.LastIndex(); last != 3 || s.DurableIndex() != 3 {
		t.Fatalf("last %d durable %d after truncation", last, s.DurableIndex())
	}
	var l raft.Log
	if err := s.GetLog(4, &l); !errors.Is(err, raft.ErrLogNotFound) {
		t.Fatalf("truncated entry: %v", err)
	}
	if err := s.StoreLogs([]*raft.Log{testEntry(4, 2)}); err != nil {
		t.Fatal(err)
	}
}

// TestAsyncLogStoreAgainstModel runs random appends, compactions and
// truncations over packs in a real bolt file, closing and reopening it:
// everything accepted before Close is on disk afterwards.
func TestAsyncLogStoreAgainstModel(t *testing.T) {
	path := filepath.Join(t.TempDir(), "raft.db")
	open := func() (*raftboltdb.BoltStore, *AsyncLogStore) {
		b, err := raftboltdb.NewBoltStore(path)
		if err != nil {
			t.Fatal(err)
		}
		p, err := NewPackedLogStore(ChunkedLogStore{b})
		if err != nil {
			t.Fatal(err)
		}
		s, err := NewAsyncLogStore(p, func(err error) { t.Errorf("write failed: %v", err) })
		if err != nil {
			t.Fatal(err)
		}
		return b, s
	}
	b, s := open()
	rng := rand.New(rand.NewSource(7))
	want := map[uint64]*raft.Log{}
	var first, last, term uint64 = 0, 0, 1
	check := func(when string) {
		t.Helper()
		f, _ := s.FirstIndex()
		l, _ := s.LastIndex()
		if f != first || l != last {
			t.Fatalf("%s: first/last %d/%d want %d/%d", when, f, l, first, last)
		}
		for i := first; first != 0 && i <= last; i++ {
			var got raft.Log
			if err := s.GetLog(i, &got); err != nil || !sameEntry(&got, want[i]) {
				t.Fatalf("%s: entry %d: %v", when, i, err)
			}
		}
	}
	for step := 0; step < 400; step++ {
		switch r := rng.Intn(10); {
		case r < 6:
			n := 1 + rng.Intn(20)
			if rng.Intn(20) == 0 {
				n = 600
			}
			var logs []*raft.Log
			for i := 0; i < n; i++ {
				l := testEntry(last+1+uint64(i), term)
				logs = append(logs, l)
				want[l.Index] = l
			}
			if err := s.StoreLogs(logs); err != nil {
				t.Fatal(err)
			}
			if first == 0 {
				first = logs[0].Index
			}
			last = logs[n-1].Index
		case r < 7 && last > first+10:
			if err := s.waitDurable(last, nil); err != nil {
				t.Fatal(err)
			}
			cut := first + uint64(rng.Intn(int(last-first)))
			if err := s.DeleteRange(first, cut); err != nil {
				t.Fatal(err)
			}
			first = cut + 1
		case r < 8 && last > first+10:
			cut := last - uint64(rng.Intn(10))
			if err := s.DeleteRange(cut, last); err != nil {
				t.Fatal(err)
			}
			last, term = cut-1, term+1
		case r < 9:
			check(fmt.Sprint("step ", step))
		default:
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
			b, s = open()
			if s.DurableIndex() != last {
				t.Fatalf("durable %d after reopening, want %d", s.DurableIndex(), last)
			}
			// A pack straddling the compaction point comes back whole.
			if f, _ := s.FirstIndex(); f <= first && f != 0 {
				first = f
			}
			check("after reopening")
		}
	}
	s.Close()
	b.Close()
}

// TestAsyncLogStoreApplicableOnLeaderCommit checks that a committed entry
// may be applied before this member's own write once a leader's commit
// index covers it (that index counts only entries on a majority's disks),
// and that without one the wait follows this member's disk.
func TestAsyncLogStoreApplicableOnLeaderCommit(t *testing.T) {
	s, g := newGatedAsyncStore(t)
	if err := s.StoreLogs([]*raft.Log{testEntry(1, 1), testEntry(2, 1), testEntry(3, 1)}); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- s.WaitApplicable(2, nil) }()
	stillWaiting(t, waited, "applicable before the write or a leader's commit index")
	s.NoteLeaderCommit(1) // does not cover 2
	stillWaiting(t, waited, "applicable on a commit index below it")
	s.NoteLeaderCommit(2)
	select {
	case err := <-waited:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a leader's commit index did not release the wait")
	}
	if s.DurableIndex() != 0 {
		t.Fatalf("durable %d: nothing was written yet", s.DurableIndex())
	}
	s.NoteLeaderCommit(1) // an older index changes nothing
	if err := s.WaitApplicable(2, nil); err != nil {
		t.Fatal(err)
	}
	go func() { waited <- s.WaitApplicable(3, nil) }()
	stillWaiting(t, waited, "entry 3 applicable before its write")
	g.gate <- struct{}{}
	if err := <-waited; err != nil {
		t.Fatal(err)
	}
}

// stillWaiting fails with msg if the wait reporting to ch has returned
// within 50 ms.
func stillWaiting(t *testing.T, ch <-chan error, msg string) {
	t.Helper()
	select {
	case <-ch:
		t.Fatal(msg)
	case <-time.After(50 * time.Millisecond):
	}
}

// waitDurable waits until entry idx is on disk (what the tests check the
// writer against; members wait with WaitApplicable).
func (s *AsyncLogStore) waitDurable(idx uint64, stop <-chan struct{}) error {
	return s.wait(func() bool { return s.durable >= idx }, stop)
}
