package ensemble

import (
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// reap is the leader's container and TTL reaper (ZooKeeper's
// ContainerManager): every ReapInterval it proposes a deleteContainer for
// each empty container that has had children and each expired TTL node. The
// FSM re-checks eligibility when applying, so a child created in between
// makes the delete fail with NotEmpty instead of losing data.
func (n *Node) reap() {
	defer n.wg.Done()
	tick := time.NewTicker(n.cfg.ReapInterval)
	defer tick.Stop()
	for {
		select {
		case <-n.done:
			return
		case now := <-tick.C:
			if !n.IsLeader() {
				continue
			}
			n.reapOnce(now)
		}
	}
}

func (n *Node) reapOnce(now time.Time) {
	limit := n.cfg.ReapMaxPerMinute * int(n.cfg.ReapInterval/time.Millisecond) / 60000
	if limit < 1 {
		limit = 1
	}
	paths := reapCandidates(now.UnixMilli(), limit, n.RLockTree, n.RUnlockTree)
	if len(paths) == 0 {
		return
	}
	n.log.Debug("reaping nodes", zap.Int("count", len(paths)))
	for _, p := range paths {
		req := jute.PathRequest{Path: p}
		n.Propose(&znode.Txn{Type: jute.OpDeleteContainer, Time: now.UnixMilli(), Req: jute.Marshal(&req)}, nil)
	}
}

// reapScanChunk is how many containers and TTL nodes the reaper examines
// per hold of the tree's read lock.
const reapScanChunk = 1024

// reapCandidates returns, sorted, up to limit paths the reaper should
// delete at now (ms since the epoch), the first it finds, examining the
// containers and TTL nodes reapScanChunk at a time under the tree's read
// lock (lock and unlock take and release it) and allocating only between
// holds. One hold for all of them, sorted under the lock (half a million
// TTL nodes: 0.2-0.8 s), kept the FSM waiting, and every read behind it,
// once per ReapInterval, for as long as the clients' nodes made it; it
// also sorted them all to delete the first limit. Any path seen twice (the
// tree was replaced between two holds) is kept once.
func reapCandidates(now int64, limit int, lock func() *znode.Tree, unlock func()) []string {
	out := make([]string, 0, min(limit, reapScanChunk))
	for from, done := 0, false; !done && len(out) < limit; {
		if len(out) == cap(out) {
			out = slices.Grow(out, min(limit-len(out), cap(out)))
		}
		t := lock()
		from, done, out = t.ReapScan(now, from, reapScanChunk, min(limit, cap(out))-len(out), out)
		unlock()
	}
	slices.Sort(out)
	return slices.Compact(out)
}
