package ensemble

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/raft"
)

// Leader is the id and member address of the leader this member knows of;
// ok is false while there is none (an election, or a lone member not yet
// elected).
func (n *Node) Leader() (id int64, addr string, ok bool) {
	if n.raft == nil {
		return 0, "", false
	}
	a, sid := n.raft.LeaderWithID()
	if a == "" {
		return 0, "", false
	}
	v, _ := memberID(sid)
	return v, string(a), true
}

// Term is the current Raft term, the counterpart of ZooKeeper's epoch.
func (n *Node) Term() uint64 {
	if n.raft == nil {
		return 0
	}
	return n.raft.CurrentTerm()
}

// LastSnapshot is the log index (the zxid) of the newest snapshot on this
// member's disk and when it was taken; ok is false when there is none.
func (n *Node) LastSnapshot() (index uint64, at time.Time, ok bool) {
	if n.snaps == nil {
		return 0, time.Time{}, false
	}
	list, err := n.snaps.List()
	if err != nil || len(list) == 0 {
		return 0, time.Time{}, false
	}
	meta := list[0] // newest first
	// hashicorp/raft names file snapshots term-index-unixMillis.
	if parts := strings.Split(meta.ID, "-"); len(parts) == 3 {
		if ms, err := strconv.ParseInt(parts[2], 10, 64); err == nil {
			at = time.UnixMilli(ms)
		}
	}
	return meta.Index, at, true
}

// SessionDeadlines is when each session this member tracks will expire
// without further traffic. The leader's figures are the ones that count;
// a follower's are refreshed only by traffic it sees itself.
func (n *Node) SessionDeadlines() map[int64]time.Time {
	e := n.tracker
	e.mu.RLock()
	defer e.mu.RUnlock()
	out := make(map[int64]time.Time, len(e.m))
	for id, l := range e.m {
		out[id] = time.Unix(0, l.deadline.Load())
	}
	return out
}

// LeaderUptime is how long this member has led, 0 when it does not lead
// (ZooKeeper's leader_uptime).
func (n *Node) LeaderUptime() time.Duration {
	since := n.leaderSince.Load()
	if since == 0 || !n.IsLeader() {
		return 0
	}
	return time.Since(time.Unix(0, since))
}

// Snapshot takes a snapshot of this member's state now (as snapCount
// entries would) and compacts its log.
func (n *Node) Snapshot() error {
	if err := n.raft.Snapshot().Error(); err != nil {
		return fmt.Errorf("ensemble: snapshot: %w", err)
	}
	return nil
}

// SyncedFollowers is, on a leader, how many voting followers and observers
// answered its heartbeats within the last election timeout (syncLimit
// ticks; heartbeats go every tenth to fifth of it): the learners in sync
// that ZooKeeper's leader counts for mntr (a member that is down or cut
// off drops out). Zero on any other member.
func (n *Node) SyncedFollowers() (voters, observers int) {
	if n.trans == nil || !n.IsLeader() {
		return 0, 0
	}
	window := n.electionTimeout()
	for _, p := range n.Members() {
		if p.ID == n.cfg.ID || !n.trans.answeredWithin(raft.ServerAddress(p.Addr), window) {
			continue
		}
		if p.Observer {
			observers++
		} else {
			voters++
		}
	}
	return voters, observers
}

// QuorumSize is the number of voting members (ZooKeeper's quorum_size).
func (n *Node) QuorumSize() int {
	size := 0
	for _, p := range n.Members() {
		if !p.Observer {
			size++
		}
	}
	return size
}
