package ensemble

import (
	"errors"
	"syscall"

	"github.com/hashicorp/raft"
)

// A follower learns that its leader's process died the way ZooKeeper's
// followers do: the kernel closes the dead process's connections, and the
// follower's append streams from it end. A stream can also end with its
// leader alive (it closed the stream, a partition broke it), so an ended
// stream only starts a check: the follower dials the leader's member port
// (probe) until the dial is refused, which only a port nobody listens on
// does, or the leader is heard from again, or P has passed. A leader that
// is slow, stopped (SIGSTOP) or behind a partition is never declared
// dead here: its kernel still accepts connections, or nothing answers at
// all; Raft's patient timers handle it (timeouts.go).

// leaderStreamLost is called by the transport when an append stream from
// leader (its address) ended without this member closing it; the
// campaign goroutine checks whether the leader is gone.
func (n *Node) leaderStreamLost(leader string) {
	if !n.raftSet.Load() || n.raft.State() != raft.Follower {
		return
	}
	if addr, _ := n.raft.LeaderWithID(); string(addr) != leader {
		return // a stream from a former leader
	}
	select {
	case n.lostLeader <- leader:
	default: // a loss is already waiting to be checked
	}
}

// probeResult is what dialing a member's port tells about its process.
type probeResult int

const (
	// probeRefused: nothing listens on the port; the process is gone.
	probeRefused probeResult = iota + 1
	// probeAnswered: the port accepted the connection; the process is
	// alive, however slow (the kernel accepts for a stopped process too).
	probeAnswered
	// probeUnreachable: no answer at all (a partition, a dead host);
	// nothing can be concluded.
	probeUnreachable
)

// probe dials addr's member port and closes the connection at once (the
// member drops a connection that sends no header).
func (n *Node) probe(addr string) probeResult {
	c, err := n.cfg.Dial(addr, n.dialTimeout())
	if err == nil {
		c.Close()
		return probeAnswered
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		return probeRefused
	}
	return probeUnreachable
}
