package observer

import (
	"errors"
	"testing"
	"time"

	"github.com/zkraft/zkraft/backend"
	"github.com/zkraft/zkraft/internal/zookeeper/learner"
	"github.com/zkraft/zkraft/znode"
)

// TestMemberView: what the four-letter words and the AdminServer read of
// an observer: its role, zoo.cfg's servers until the followed tree holds
// a configuration, ZooKeeper's leader among them while synced, and none
// of a leader's or a Raft member's figures.
func TestMemberView(t *testing.T) {
	fx := start(t)
	b := fx.b
	if b.ID() != observerID || b.Mode() != "observer" || b.IsLeader() || b.Term() != 1 {
		t.Errorf("id %d mode %q leader %v term %d", b.ID(), b.Mode(), b.IsLeader(), b.Term())
	}
	if id, addr, ok := b.Leader(); id != 0 || addr != fx.ldr.Addr() || !ok {
		t.Errorf("Leader() before SetMembers: %d %s %v, want id 0 at the address followed", id, addr, ok)
	}
	if b.QuorumSize() != 0 || len(b.Members()) != 0 {
		t.Errorf("quorum %d of %v before SetMembers", b.QuorumSize(), b.Members())
	}
	static := []backend.Peer{
		{ID: 1, Addr: "127.0.0.1:1"},
		{ID: 2, Addr: fx.ldr.Addr()},
		{ID: 3, Addr: "127.0.0.1:3"},
		{ID: observerID, Addr: "127.0.0.1:5", Observer: true},
	}
	b.SetMembers(static)
	static[0].ID = 9 // SetMembers keeps a copy
	if peers, version := b.Membership(); len(peers) != 4 || peers[0].ID != 1 || version != 0 || b.QuorumSize() != 3 {
		t.Errorf("membership %+v version %d quorum %d, want zoo.cfg's at version 0, three voters", peers, version, b.QuorumSize())
	}
	if id, _, ok := b.Leader(); id != 2 || !ok {
		t.Errorf("Leader() %d %v, want server 2, whose quorum address is followed", id, ok)
	}
	if v, o := b.SyncedFollowers(); v != 0 || o != 0 || b.LeaderUptime() != 0 {
		t.Errorf("followers %d %d, leader uptime %v: an observer leads nothing", v, o, b.LeaderUptime())
	}
	if last, lo, hi := b.ProposalSizes(); last != 0 || lo != 0 || hi != 0 || b.FsyncTimes() != (backend.FsyncTimes{}) {
		t.Error("an observer has proposal sizes or fsync times")
	}
	if _, _, ok := b.LastSnapshot(); ok || !errors.Is(b.Snapshot(), ErrNoSnapshots) || b.SessionDeadlines() != nil {
		t.Error("an observer has snapshots or session deadlines")
	}
	b.AnnounceSession(sessionA, nil) // a session moves by REVALIDATE instead
	fx.noneForwarded()

	fx.c.Close()
	fx.waitFor(func(st learner.Status) bool { return !st.Synced })
	if _, addr, ok := b.Leader(); ok || addr != "" {
		t.Errorf("Leader() %s %v with no leader followed", addr, ok)
	}
}

// TestProposeWaitFails: ProposeWait hands back a write's failure.
func TestProposeWaitFails(t *testing.T) {
	b, err := New(learner.Config{ID: observerID, Servers: []string{"127.0.0.1:1"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.ProposeWait(create(sessionA, "/x", "")); !errors.Is(err, learner.ErrNotSynced) {
		t.Errorf("ProposeWait: %v, want ErrNotSynced", err)
	}
	// A sync of a waiter that names no session is forwarded as session
	// 0's, and fails the same way here.
	w := &plainWaiter{done: make(chan error, 1)}
	b.Barrier(w)
	select {
	case err := <-w.done:
		if !errors.Is(err, learner.ErrNotSynced) {
			t.Errorf("barrier: %v", err)
		}
	case <-time.After(wait):
		t.Fatal("barrier never answered")
	}
}

// plainWaiter is a Waiter that tells nothing of itself.
type plainWaiter struct{ done chan error }

func (w *plainWaiter) Applied(*znode.Result, *znode.Tree) { w.done <- nil }
func (w *plainWaiter) Failed(err error)                   { w.done <- err }
