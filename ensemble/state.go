package ensemble

import (
	"encoding/binary"
	"sync"
	"time"

	"github.com/hashicorp/raft"

	"github.com/zkraft/zkraft/watches"
	"github.com/zkraft/zkraft/znode"
)

// RLockTree read-locks the tree and returns it; call RUnlockTree after.
// Watch registrations made while holding the lock cannot miss an event.
func (n *Node) RLockTree() *znode.Tree {
	n.fsm.mu.RLock()
	return n.fsm.tree
}

// RUnlockTree releases RLockTree.
func (n *Node) RUnlockTree() { n.fsm.mu.RUnlock() }

// LastZxid is the zxid of the last applied transaction.
func (n *Node) LastZxid() int64 { return n.fsm.lastZxid.Load() }

// Watches is the member's watch registry.
func (n *Node) Watches() *watches.Registry { return n.watches }

// HasQuorum reports whether this member is part of a working majority: it
// leads with a quorum of voters in contact (quorum.go), or it follows a
// known leader. A lone member always has one.
func (n *Node) HasQuorum() bool {
	if n.fwd == nil {
		return true
	}
	if n.IsLeader() {
		term := n.raft.CurrentTerm()
		if n.lostTerm.Load() == term {
			return false
		}
		ok, _, _ := n.leaderQuorum(term, false)
		return ok
	}
	addr, _ := n.raft.LeaderWithID()
	return addr != ""
}

// ID is this member's server id.
func (n *Node) ID() int64 { return n.cfg.ID }

// IsLeader reports whether this member currently leads.
func (n *Node) IsLeader() bool { return n.raft != nil && n.raft.State() == raft.Leader }

// Mode is the member's role as ZooKeeper's srvr reports it: "standalone"
// for a one-member ensemble, else "leader", "follower" or "observer".
func (n *Node) Mode() string {
	switch {
	case n.fwd == nil:
		return "standalone"
	case n.IsLeader():
		return "leader"
	}
	for _, p := range n.peers() {
		if p.ID == n.cfg.ID && p.Observer {
			return "observer"
		}
	}
	return "follower"
}

// TouchSession records activity on a session, postponing its expiry. A
// follower batches touches and reports them to the leader every half tick.
func (n *Node) TouchSession(id int64) {
	if n.fwd == nil || n.IsLeader() {
		n.tracker.touch(id)
		return
	}
	n.touched.add(id)
}

// touchSet collects session ids touched on a follower since the last report.
type touchSet struct {
	mu sync.Mutex
	m  map[int64]struct{}
}

func (s *touchSet) add(id int64) {
	s.mu.Lock()
	s.m[id] = struct{}{}
	s.mu.Unlock()
}

// drain returns the ids as a msgTouch payload and empties the set.
func (s *touchSet) drain() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.m) == 0 {
		return nil
	}
	b := make([]byte, 0, 8*len(s.m))
	for id := range s.m {
		b = binary.BigEndian.AppendUint64(b, uint64(id))
		delete(s.m, id)
	}
	return b
}

// flushTouches reports a follower's session activity to the leader.
func (n *Node) flushTouches() {
	defer n.wg.Done()
	tick := time.NewTicker(n.halfTick())
	defer tick.Stop()
	for {
		select {
		case <-n.done:
			return
		case <-tick.C:
			if n.IsLeader() {
				continue
			}
			if b := n.touched.drain(); b != nil {
				n.fwd.call(msgTouch, b, nil)
			}
		}
	}
}

// BeginClose is Close's first step, which a server that closes its client
// connections before the member takes early: every request waiting for a
// reachable leader to forward it to fails at once with ErrClosed, as does
// every later one, so no connection's reader waits out the forwarder's
// two election timeouts while the server waits for its readers. Requests
// already forwarded, and a leader's own proposals, go on until Close.
func (n *Node) BeginClose() { n.beginOnce.Do(func() { close(n.closing) }) }

// Close stops the member. Acknowledged writes are already durable in the
// log; Close only stops background work and releases files.
func (n *Node) Close() error {
	var err error
	n.closeOnce.Do(func() {
		n.BeginClose()
		close(n.done)
		if n.fwd != nil {
			n.fwd.close()
		}
		n.closeForwards()
		if n.raft != nil {
			f := n.raft.Shutdown()
			// The member port refuses from now on, before the streams
			// below end: a follower that sees its leader's stream end
			// finds the port refused and elects at once (leaderloss.go),
			// where a port still accepting would mean "leader alive".
			if n.mux != nil {
				n.mux.close()
			}
			// Raft's goroutines stop once their calls return: those
			// to members that do not answer fail now (dialed.go).
			n.dialed.closeAll()
			err = f.Error()
		}
		if n.mux != nil {
			n.mux.close()
		}
		n.wg.Wait()
		// Raft has stopped: nothing will apply or fail what is still
		// awaited (a proposal whose future Raft left unresolved, a write
		// forwarded to a leader). Its outcome is unknown to the requester.
		n.waiters.stop(ErrClosed)
		if n.async != nil {
			n.async.Close() // writes what Raft queued before bolt closes
		}
		if n.journal != nil {
			if cerr := n.journal.Close(); err == nil {
				err = cerr
			}
		}
		if n.store != nil {
			if cerr := n.store.Close(); err == nil {
				err = cerr
			}
		}
	})
	return err
}
