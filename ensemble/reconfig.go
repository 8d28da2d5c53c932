package ensemble

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/raft"
	"go.uber.org/zap"

	"github.com/zkraft/zkraft/backend"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// reconfigCall is a reconfig request with its caller's context; followers
// forward it to the leader whole.
type reconfigCall struct {
	Origin uint64
	Time   int64
	Ids    []jute.Id
	Req    jute.ReconfigRequest
}

func (c *reconfigCall) encode(w *jute.Writer) {
	w.Long(int64(c.Origin))
	w.Long(c.Time)
	w.Int(int32(len(c.Ids)))
	for i := range c.Ids {
		c.Ids[i].Encode(w)
	}
	c.Req.Encode(w)
}

func (c *reconfigCall) decode(b []byte) error {
	r := jute.NewReader(b)
	c.Origin = uint64(r.Long())
	c.Time = r.Long()
	n, _ := r.Count(8)
	c.Ids = make([]jute.Id, n)
	for i := range c.Ids {
		_ = c.Ids[i].Decode(r)
	}
	return c.Req.Decode(r)
}

// Reconfig changes the ensemble's membership, as ZooKeeper's reconfig:
// incremental (joining server lines, leaving ids) or a whole new member
// list, guarded by curConfigId (-1 = any). The leader performs the Raft
// membership changes one at a time and then rewrites /zookeeper/config
// through the log; w receives that write's result (a GetDataResponse), or
// an error code in order with the session's other replies.
func (n *Node) Reconfig(req *jute.ReconfigRequest, ids []jute.Id, w backend.Waiter) {
	call := reconfigCall{Time: time.Now().UnixMilli(), Ids: ids, Req: *req}
	call.Origin = n.runID | uint64(n.seq.Add(1))
	if !n.waiters.put(call.Origin, w) {
		return
	}
	if n.stepping.Load() {
		n.failWaiter(call.Origin, errStepping)
		return
	}
	if n.IsLeader() {
		go n.runReconfig(call)
		return
	}
	n.forwardReconfig(call, 1)
}

// forwardReconfig sends call to the leader (attempt counts from 1). The
// leader accepts it at once and proposes its outcome later; should the
// forwarding connection break in between (the leader died or stopped
// leading, or another was elected), the outcome may never come, and the
// forwarder fails the waiter as it fails a write in flight (callFor).
func (n *Node) forwardReconfig(call reconfigCall, attempt int) {
	var enc jute.Writer
	call.encode(&enc)
	n.fwd.callFor(msgReconfig, enc.Buf, call.Origin, n.reconfigForwarded(call, attempt))
}

// reconfigForwardTries bounds the forwards of one reconfig to members that
// turned out not to lead; reconfigRetryPause is the wait before the next.
const (
	reconfigForwardTries = 5
	reconfigRetryPause   = 100 * time.Millisecond
)

// reconfigForwarded handles the answer to a forwarded reconfig. A member
// elected while its forwarder waited for a leader (the old one gone) runs
// the reconfig itself, as propose does with a write; one forwarded to a
// member that had lost its leadership before taking it (so did not run
// it) is sent again, to the leader then known. Anything else fails it.
func (n *Node) reconfigForwarded(call reconfigCall, attempt int) fwdCall {
	return func(status byte, payload []byte, err error) {
		switch {
		case err == nil && status == statusOK:
			return // the outcome comes through the log, or the forwarder fails it
		case errors.Is(err, errLeaderHere):
			if n.stepping.Load() {
				n.failWaiter(call.Origin, errStepping)
				return
			}
			go n.runReconfig(call) // the forwarder's lock is held here
			return
		case err == nil && status == statusNotLeader && string(payload) == reconfigNotLeader && attempt < reconfigForwardTries:
			go func() {
				select {
				case <-time.After(reconfigRetryPause):
					n.forwardReconfig(call, attempt+1)
				case <-n.done:
					n.failWaiter(call.Origin, ErrClosed)
				}
			}()
			return
		}
		if err == nil {
			err = fmt.Errorf("ensemble: leader refused reconfig: %s", payload)
		}
		n.failWaiter(call.Origin, fmt.Errorf("ensemble: forwarded reconfig: %w", err))
	}
}

// reconfigNotLeader and reconfigStepping are a forwarded reconfig's
// refusals by a member that does not lead (the sender tries again) and by
// a leader stepping out after a reconfig removed it (the sender fails it,
// as that leader fails its own).
const (
	reconfigNotLeader = "not leader"
	reconfigStepping  = "leader stepping down"
)

// errStepping fails a reconfig sent to a leader that a reconfig removed
// while it steps out: its caller's connection closes, as a ZooKeeper
// client's does while the ensemble elects a successor.
var errStepping = errors.New("ensemble: leader removed by reconfig, stepping down")

// runReconfig executes a reconfig on the leader. Only one runs at a time.
//
// A reconfig that removes the leader is complete, as in ZooKeeper, once its
// configuration commits: the leader then only steps out (Barrier and
// RemoveServer, which may take a while). A reconfig sent after that
// commit must not meet this one as in progress, so the leader marks itself
// stepping before it proposes the configuration, and Reconfig and the
// forwarding handler fail later calls instead of queueing them here.
func (n *Node) runReconfig(call reconfigCall) {
	if !n.reconfigMu.TryLock() {
		n.answerCode(call.Origin, jute.ErrReconfigInProgress)
		return
	}
	defer n.reconfigMu.Unlock()
	// The checks come in PrepRequestProcessor's order: in progress (above),
	// the version, the arguments, and only then WRITE on /zookeeper/config,
	// so a caller without it still learns of a stale version or bad
	// arguments. ZooKeeper checks for a synced quorum before the
	// permission; here that check is the membership change itself, which
	// must not run for a caller without the permission.
	current, version := n.currentMembers()
	if call.Req.CurConfigID != -1 && call.Req.CurConfigID != version {
		n.answerCode(call.Origin, jute.ErrBadVersion)
		return
	}
	next, err := nextMembers(current, &call.Req)
	if err == nil {
		err = n.checkWideIDs(next)
	}
	if err != nil {
		n.log.Info("reconfig refused", zap.Error(err))
		code := jute.ErrBadArguments
		if errors.Is(err, backend.ErrServerID) {
			// ZooKeeper's Long.parseLong throws NumberFormatException,
			// which PrepRequestProcessor answers as MarshallingError.
			code = jute.ErrMarshallingError
		}
		n.answerCode(call.Origin, code)
		return
	}
	t := n.RLockTree()
	configACL, _ := t.NodeACL(znode.ConfigPath)
	allowed := t.Permits(configACL, jute.PermWrite, call.Ids)
	n.RUnlockTree()
	if !allowed {
		n.answerCode(call.Origin, jute.ErrNoAuth)
		return
	}
	if err := n.applyMembership(current, next); err != nil {
		n.log.Warn("reconfig failed", zap.Error(err))
		n.answerCode(call.Origin, jute.ErrNewConfigNoQuorum)
		return
	}
	n.setPeers(next)
	n.logMembershipChange(current, next)
	departing := leaving(next, n.cfg.ID)
	if departing {
		n.stepping.Store(true)
	}
	n.propose(entry{Kind: kindTxn, Origin: call.Origin, Txn: &znode.Txn{
		Type: jute.OpReconfig, Time: call.Time, Ids: call.Ids, Req: []byte(backend.RenderMembers(next)),
	}}, nil)
	if departing {
		// A departing leader records the new configuration while it can
		// still commit, and only then steps out; Raft elects a successor.
		if err := n.raft.Barrier(30 * time.Second).Error(); err != nil {
			n.log.Warn("reconfig: config write not confirmed before leaving", zap.Error(err))
		}
		if err := n.raft.RemoveServer(raftID(n.cfg.ID), 0, 30*time.Second).Error(); err != nil {
			n.log.Warn("reconfig: leader could not remove itself", zap.Error(err))
		}
		// Out of the Raft configuration (or not leading any more): this
		// member forwards to, or is re-added by, the successor from now.
		n.stepping.Store(false)
	}
}

// leaving reports whether id is absent from peers.
func leaving(peers []backend.Peer, id int64) bool {
	for _, p := range peers {
		if p.ID == id {
			return false
		}
	}
	return true
}

// answerCode completes origin's waiter with code, through the log.
func (n *Node) answerCode(origin uint64, code jute.ErrCode) {
	n.propose(entry{Kind: kindBarrier, Origin: origin, Code: code}, nil)
}

// currentMembers reads the membership from /zookeeper/config, or from the
// static configuration while none was written yet (version -1... the
// bootstrap config has version 0 in /zookeeper/config terms).
func (n *Node) currentMembers() ([]backend.Peer, int64) {
	t := n.RLockTree()
	data, _, err := t.GetData(znode.ConfigPath, []jute.Id{{Scheme: "super"}})
	n.RUnlockTree()
	if err == nil && len(data) > 0 {
		if peers, version, err := backend.ParseMembers(string(data)); err == nil {
			return peers, version
		}
	}
	return n.peers(), 0
}

// peers is the static membership: Config.Peers (zoo.cfg's server lines),
// or what a reconfig on this member (a leader) made of it.
func (n *Node) peers() []backend.Peer {
	n.peersMu.Lock()
	defer n.peersMu.Unlock()
	if n.reconfigured != nil {
		return append([]backend.Peer(nil), n.reconfigured...)
	}
	return append([]backend.Peer(nil), n.cfg.Peers...)
}

// setPeers replaces the static membership (see peers). Config.Peers
// itself stays as it was, read without a lock.
func (n *Node) setPeers(peers []backend.Peer) {
	n.peersMu.Lock()
	defer n.peersMu.Unlock()
	n.reconfigured = peers
}

// nextMembers computes the membership a reconfig asks for.
func nextMembers(current []backend.Peer, req *jute.ReconfigRequest) ([]backend.Peer, error) {
	byID := map[int64]backend.Peer{}
	if req.NewMembers != "" {
		for _, item := range splitServers(req.NewMembers) {
			p, err := parseServerItem(item)
			if err != nil {
				return nil, err
			}
			byID[p.ID] = p
		}
	} else {
		for _, p := range current {
			byID[p.ID] = p
		}
		for _, id := range splitServers(req.LeavingServers) {
			v, err := backend.ParseServerID(strings.TrimPrefix(id, "server."))
			if err != nil {
				return nil, fmt.Errorf("leaving server: %w", err)
			}
			delete(byID, v)
		}
		for _, item := range splitServers(req.JoiningServers) {
			p, err := parseServerItem(item)
			if err != nil {
				return nil, err
			}
			byID[p.ID] = p
		}
	}
	var out []backend.Peer
	voters := 0
	for _, p := range byID {
		out = append(out, p)
		if !p.Observer {
			voters++
		}
	}
	if voters == 0 {
		return nil, fmt.Errorf("a configuration needs at least one voting member")
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

func splitServers(s string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '\n' }) {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func parseServerItem(item string) (backend.Peer, error) {
	k, v, ok := strings.Cut(item, "=")
	if !ok {
		return backend.Peer{}, fmt.Errorf("server %q: want server.N=host:port:port[:role][;client]", item)
	}
	return backend.ParseServerLine(k, v)
}

// applyMembership moves Raft from current to next one change at a time:
// additions and role changes first, then removals of other members. A
// leader leaving the ensemble removes itself later (see runReconfig).
func (n *Node) applyMembership(current, next []backend.Peer) error {
	old := map[int64]backend.Peer{}
	for _, p := range current {
		old[p.ID] = p
	}
	keep := map[int64]bool{}
	timeout := 30 * time.Second
	for _, p := range next {
		keep[p.ID] = true
		if o, ok := old[p.ID]; ok && o.Addr == p.Addr && o.Observer == p.Observer {
			continue
		}
		id, addr := raftID(p.ID), raft.ServerAddress(p.Addr)
		var f raft.IndexFuture
		if p.Observer {
			f = n.raft.AddNonvoter(id, addr, 0, timeout)
		} else {
			f = n.raft.AddVoter(id, addr, 0, timeout)
		}
		if err := f.Error(); err != nil {
			return fmt.Errorf("add member %d: %w", p.ID, err)
		}
	}
	for _, p := range current {
		if keep[p.ID] || p.ID == n.cfg.ID {
			continue
		}
		if err := n.raft.RemoveServer(raftID(p.ID), 0, timeout).Error(); err != nil {
			return fmt.Errorf("remove member %d: %w", p.ID, err)
		}
	}
	return nil
}

// writeInitialConfig records the static membership in /zookeeper/config
// the first time an ensemble has a leader (a lone member leaves it empty,
// as standalone ZooKeeper does), as version 0 with an mzxid of 0, as
// ZooKeeper serves it until the first reconfig.
func (n *Node) writeInitialConfig() {
	if n.fwd == nil {
		return
	}
	t := n.RLockTree()
	data, _, err := t.GetData(znode.ConfigPath, []jute.Id{{Scheme: "super"}})
	n.RUnlockTree()
	if err != nil || len(data) > 0 {
		return
	}
	n.propose(entry{Kind: kindTxn, Txn: &znode.Txn{
		Type: jute.OpReconfig, Time: time.Now().UnixMilli(), Ids: []jute.Id{{Scheme: "super"}},
		Req: []byte(backend.RenderMembers(n.peers()) + znode.InitialConfigVersion),
	}}, nil)
}

// Members is the current membership as /zookeeper/config lists it.
func (n *Node) Members() []backend.Peer {
	peers, _ := n.currentMembers()
	return peers
}

// Membership is Members with the configuration's version: the zxid of the
// reconfig that made it, 0 for the initial one (/zookeeper/config's
// "version=" line).
func (n *Node) Membership() ([]backend.Peer, int64) { return n.currentMembers() }
