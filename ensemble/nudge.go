package ensemble

import (
	"bytes"

	"github.com/hashicorp/raft"

	"github.com/zkraft/zkraft/jute"
)

// Commit nudges.
//
// hashicorp/raft tells a follower the commit index only with the next
// AppendEntries it sends: the next batch of entries or, when there is none,
// an empty one after CommitTimeout (5-10 ms here). A follower answers its
// clients' writes once it has applied them, and its watchers hear of a
// change only then, so at light load that timer would be most of a write's
// latency (a lone setData through a follower: ~10 ms; ZooKeeper, which
// sends COMMIT at once: ~1.3 ms).
//
// So when the leader has applied a batch with anything a client can see,
// it nudges: it sends every follower with an open pipeline a commit
// notice, an empty AppendEntries carrying the new commit index
// (appendtransport.go), unless that pipeline already carried it. No log
// entry, no disk write; an idle ensemble sends none.
//
// Without any open pipeline (just after an election) the nudge is a
// barrier entry that nobody waits for, whose AppendEntries carries the
// commit index — skipped when a newer entry is already in the log, since
// that entry's own apply asks again. A barrier nudge takes a log index,
// so zxids may skip one, which ZooKeeper clients never rely on (they only
// compare zxids).
//
// Lowering CommitTimeout instead would do the same at light load but cost
// an empty RPC to each follower every 1-2 ms even when idle (measured: three
// idle members used 48% of a core with 1 ms, 19% with 5 ms; with nudges
// CommitTimeout is a 50 ms fallback and they use 5%).

// startNudger starts the leader's nudge loop (members of an ensemble only;
// a lone member has nobody to tell). Raft is running: the FSM may already
// be applying, so the loop is switched on by an atomic flag.
func (n *Node) startNudger() {
	n.nudges = make(chan struct{}, 1)
	n.wg.Add(1)
	go n.nudgeLoop()
	n.nudging.Store(true)
}

// beforeApply runs on the leader's FSM goroutine once a batch may be
// applied and before it is: the commit notices go out at once, so the
// followers apply while the leader does. Sent after the apply, as they
// were, they waited behind the leader's own apply and watch fan-out: the
// goroutine sending them became runnable after every session writer the
// fan-out woke (a round of 100 watchers: ~0.45 ms later). An entry is
// committed before any member applies it, so a follower may apply it
// first; ZooKeeper's leader likewise sends COMMIT before applying.
//
// Only a batch already on this member's disk is noticed here: a notice
// carries no commit index beyond the leader's durable one (asynclog.go).
// Anything else, and every batch when no pipeline is open, is left to the
// nudge after the apply.
func (n *Node) beforeApply(logs []*raft.Log) {
	if !n.nudging.Load() || n.trans == nil || !hasWork(logs) || n.raft.State() != raft.Leader {
		return
	}
	last := logs[len(logs)-1]
	if n.async.DurableIndex() < last.Index {
		return
	}
	if n.trans.notifyCommit(last.Index, last.Term) > 0 {
		n.noticedAt.Store(last.Index)
	}
}

// hasWork reports whether a batch holds anything but commit nudges.
func hasWork(logs []*raft.Log) bool {
	for _, l := range logs {
		if l.Type != raft.LogCommand || !bytes.Equal(l.Data, nudgeEntry) {
			return true
		}
	}
	return false
}

// nudgeEntry is a nudge's log entry: a barrier nobody waits for.
var nudgeEntry = func() []byte {
	var enc jute.Writer
	e := entry{Kind: kindBarrier}
	e.encode(&enc)
	return enc.Buf
}()

// afterApply runs on the FSM goroutine after each batch.
func (n *Node) afterApply(last uint64, work bool) {
	n.appliedAt.Store(last)
	skipped := n.nudgeSkipped.Swap(false)
	if (work && n.noticedAt.Load() < last) || skipped {
		n.nudge(last)
	}
}

// nudge asks for a nudge unless an entry after last is in the log by the
// time it would be sent. Besides afterApply, a follower's read-index
// request asks for one: the entries the FSM never sees (the no-op that
// opens a term) must reach the followers that wait to catch up with it.
func (n *Node) nudge(last uint64) {
	if !n.nudging.Load() || n.raft.State() != raft.Leader {
		return
	}
	for {
		cur := n.nudgeAt.Load()
		if cur >= last || n.nudgeAt.CompareAndSwap(cur, last) {
			break
		}
	}
	select {
	case n.nudges <- struct{}{}:
	default: // the loop has yet to run; it reads nudgeAt then
	}
}

// noticeCommit sends a commit notice for index down every open pipeline
// (appendtransport.go): an empty AppendEntries that costs no log entry and
// no disk write. With no pipeline open (just elected, or replication
// falling back to single calls) it reports false and a barrier entry does
// the job instead.
func (n *Node) noticeCommit(index uint64) bool {
	if n.trans == nil || index == 0 {
		return false
	}
	var l raft.Log
	if err := n.logs.GetLog(index, &l); err != nil {
		return false
	}
	return n.trans.notifyCommit(index, l.Term) > 0
}

// nudgeLoop appends the nudges. A nudge is skipped when a newer entry is
// in the log: that entry's own apply asks again. The newer entry may be a
// nudge, which asks for nothing, or may already have been applied, so a
// skip is recorded (nudgeSkipped) before appliedAt is compared: either the
// next apply sees the flag and asks again, or this loop sees that
// everything is applied and nudges now (both are sequentially consistent
// atomics, so one of the two always happens).
func (n *Node) nudgeLoop() {
	defer n.wg.Done()
	nudge := nudgeEntry
	for {
		select {
		case <-n.nudges:
			if n.raft.State() != raft.Leader {
				continue
			}
			if n.noticeCommit(n.nudgeAt.Load()) {
				continue
			}
			if n.raft.LastIndex() > n.nudgeAt.Load() {
				n.nudgeSkipped.Store(true)
				// Raft's own applied index also covers entries the FSM
				// never sees (a term's no-op, barriers).
				if max(n.appliedAt.Load(), n.raft.AppliedIndex()) < n.raft.LastIndex() {
					continue // the next apply asks again
				}
				n.nudgeSkipped.Store(false)
			}
			n.raft.Apply(nudge, 0) // nobody waits: a failed nudge is harmless
		case <-n.done:
			return
		}
	}
}
