package ensemble

import (
	"errors"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// waitEnsemble waits until every running member holds level and one id,
// and returns it.
func (c *cluster) waitEnsemble(level int) EnsembleID {
	c.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		var id EnsembleID
		same := true
		for _, n := range c.nodes {
			if n.EnsembleLevel() != level || n.EnsembleID().IsZero() || (!id.IsZero() && n.EnsembleID() != id) {
				same = false
			}
			id = n.EnsembleID()
		}
		if same {
			return id
		}
		if time.Now().After(deadline) {
			for i, n := range c.nodes {
				c.t.Logf("member %d: level %d, id %s", i, n.EnsembleLevel(), n.EnsembleID())
			}
			c.t.Fatalf("the members do not agree on level %d and one id", level)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestClusterFormsWithOneEnsembleID(t *testing.T) {
	c := newCluster(t, 3, nil)
	id := c.waitEnsemble(2)
	mustPropose(t, c.leader(), newSession(1, 60000))
	// Kept across a restart.
	f := c.follower().ID()
	c.stop(f)
	c.restart(f)
	if got := c.waitEnsemble(2); got != id {
		t.Fatalf("a restart changed the id from %s to %s", id, got)
	}
	// Kept by a member wiped and restarted that catches up by the leader's
	// snapshot (the snapshot's ensemble section).
	c.stop(f)
	c.dirs[f] = t.TempDir()
	l := c.leader()
	for i := 0; i < 20; i++ {
		mustPropose(t, l, createTxn(1, "/n"+string(rune('a'+i)), 0, 1))
	}
	compactAll(t, l) // the log the wiped member needs is compacted away
	c.restart(f)
	if got := c.waitEnsemble(2); got != id {
		t.Fatalf("the id changed from %s to %s", id, got)
	}
	// On a busy machine the restore may be counted a little after the
	// members agree: wait for it rather than look once.
	for deadline := time.Now().Add(20 * time.Second); c.nodes[f].fsm.restores.Load() == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the wiped member did not catch up by snapshot")
		}
	}
}

// An ensemble formed anew on the addresses of an old one whose leftover
// member still runs: the old member cannot capture the new one (before
// ensemble ids it handed its log and membership to the new members), and
// both sides say why in their logs.
func TestClusterLeftoverMemberCannotCaptureANewEnsemble(t *testing.T) {
	defer func(s time.Duration) { clockSlack = s }(clockSlack)
	clockSlack = 0
	core, logs := observer.New(zapcore.InfoLevel)
	c := newCluster(t, 3, func(cfg *Config) { cfg.Logger = zap.New(core).With(zap.Int64("server", cfg.ID)) })
	old := c.waitEnsemble(2)
	mustPropose(t, c.leader(), newSession(1, 60000))
	for i := 0; i < 5; i++ {
		mustPropose(t, c.leader(), createTxn(1, "/old"+string(rune('a'+i)), 0, 1))
	}
	// Members 1 and 2 are wiped and started again: a new ensemble. Member
	// 3 keeps running with the old state.
	c.stop(1)
	c.stop(2)
	time.Sleep(10 * time.Millisecond)
	c.dirs[1], c.dirs[2] = t.TempDir(), t.TempDir()
	done := make(chan struct{})
	go func() { c.nodes[1] = c.open(1); close(done) }()
	n2 := c.open(2)
	<-done
	c.nodes[2] = n2
	deadline := time.Now().Add(15 * time.Second)
	for c.nodes[1].EnsembleID().IsZero() || c.nodes[1].EnsembleID() != c.nodes[2].EnsembleID() {
		if time.Now().After(deadline) {
			t.Fatalf("the new members did not form one ensemble: %s %s", c.nodes[1].EnsembleID(), c.nodes[2].EnsembleID())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if c.nodes[1].EnsembleID() == old {
		t.Fatal("the new members took the old ensemble's id")
	}
	// The new ensemble holds none of the old one's nodes, and keeps it so.
	time.Sleep(2 * time.Second)
	for _, id := range []int64{1, 2} {
		tr := c.nodes[id].RLockTree()
		_, _, err := tr.GetData("/olda", nil)
		c.nodes[id].RUnlockTree()
		if err == nil {
			t.Fatalf("member %d holds the old ensemble's /olda", id)
		}
	}
	if c.nodes[3].EnsembleID() != old {
		t.Fatal("the leftover member changed ensemble")
	}
	refusedAt := logs.FilterMessageSnippet("refused").FilterField(zap.Int64("server", 3)).Len()
	refusedByNew := logs.FilterMessageSnippet("refused").Filter(func(e observer.LoggedEntry) bool {
		for _, f := range e.Context {
			if f.Key == "server" && (f.Integer == 1 || f.Integer == 2) {
				return true
			}
		}
		return false
	}).Len()
	if refusedAt == 0 || refusedByNew == 0 {
		for _, e := range logs.FilterMessageSnippet("refused").All() {
			t.Log(e.Message, e.ContextMap())
		}
		t.Fatalf("refusal lines: %d on the leftover member, %d on the new ones; want both", refusedAt, refusedByNew)
	}
}

// An ensemble formed before levels (zkraft v0.1's, upgraded) stays at level
// 1 until the operator raises it on the leader.
func TestClusterRaiseLevel(t *testing.T) {
	defer func(l uint64) { formingLevel = l }(formingLevel)
	formingLevel = 0
	c := newCluster(t, 3, nil)
	mustPropose(t, c.leader(), newSession(1, 60000))
	for _, n := range c.nodes {
		if n.EnsembleLevel() != 1 || !n.EnsembleID().IsZero() {
			t.Fatalf("member %d: level %d id %s before the raise", n.ID(), n.EnsembleLevel(), n.EnsembleID())
		}
	}
	if _, err := c.follower().RaiseLevel(time.Second); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("on a follower: %v", err)
	}
	st, err := c.leader().RaiseLevel(2 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if st.Level != 2 || len(st.Members) != 2 || st.Members[0].BuildLevel != BinaryLevel {
		t.Fatalf("status %+v", st)
	}
	id := c.waitEnsemble(2)
	// Again: nothing changes.
	if st, err := c.leader().RaiseLevel(2 * time.Second); err != nil || st.EnsembleID != id.String() {
		t.Fatalf("a second raise: %+v %v", st, err)
	}
	// A member that cannot be asked stops the raise.
	formingLevel = 0
	c2 := newCluster(t, 3, nil)
	l := c2.leader()
	for id := range c2.nodes {
		if c2.nodes[id] != l {
			c2.stop(id)
			break
		}
	}
	if _, err := l.RaiseLevel(time.Second); err == nil {
		t.Fatal("raised with a member down")
	}
	if l.EnsembleLevel() != 1 {
		t.Fatal("the level changed")
	}
}

// A member started late into a running ensemble (or wiped and started
// again without zkraft rejoin), long after the ensemble's id was minted,
// joins it: the voters it hears from hold that id.
func TestClusterLateMemberJoinsTheRunningEnsemble(t *testing.T) {
	defer func(s time.Duration) { clockSlack = s }(clockSlack)
	clockSlack = 0 // every id minted before a member starts counts as older
	c := newCluster(t, 3, nil)
	id := c.waitEnsemble(2)
	mustPropose(t, c.leader(), newSession(1, 60000))
	late := c.follower().ID()
	c.stop(late)
	c.dirs[late] = t.TempDir()
	res := mustPropose(t, c.leader(), createTxn(1, "/while-away", 0, 1))
	time.Sleep(10 * time.Millisecond)
	start := time.Now()
	c.restart(late)
	c.converged(res.Zxid)
	if got := c.waitEnsemble(2); got != id {
		t.Fatalf("the late member holds %s, want %s", got, id)
	}
	t.Logf("the late member caught up in %v", time.Since(start).Round(time.Millisecond))
}

// A member formed fresh by this build and put in place of a broken member
// of a level-1 ensemble (one upgraded from zkraft v0.1, not finished)
// joins it as it is: it neither waits for a level entry nor writes one,
// which would stop the ensemble's v0.1 members.
func TestClusterFreshMemberJoinsALevelOneEnsemble(t *testing.T) {
	defer func(l uint64) { formingLevel = l }(formingLevel)
	formingLevel = 0
	c := newCluster(t, 3, nil)
	mustPropose(t, c.leader(), newSession(1, 60000))
	f := c.follower().ID()
	c.stop(f)
	c.dirs[f] = t.TempDir()
	res := mustPropose(t, c.leader(), createTxn(1, "/while-away", 0, 1))
	formingLevel = BinaryLevel
	c.restart(f)
	c.converged(res.Zxid)
	time.Sleep(200 * time.Millisecond)
	for id, n := range c.nodes {
		if n.EnsembleLevel() != 1 || !n.EnsembleID().IsZero() {
			t.Fatalf("member %d: level %d, id %s: the fresh member raised a level-1 ensemble", id, n.EnsembleLevel(), n.EnsembleID())
		}
	}
	if c.nodes[f].formationPending() {
		t.Fatal("the fresh member still waits for a formation")
	}
	// The ensemble can still be raised, with the fresh member in it.
	if _, err := c.leader().RaiseLevel(2 * time.Second); err != nil {
		t.Fatal(err)
	}
	c.waitEnsemble(2)
}
