package ensemble

import (
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
	t := n.RLockTree()
	paths := t.ReapCandidates(now.UnixMilli())
	n.RUnlockTree()
	if len(paths) == 0 {
		return
	}
	limit := n.cfg.ReapMaxPerMinute * int(n.cfg.ReapInterval/time.Millisecond) / 60000
	if limit < 1 {
		limit = 1
	}
	if len(paths) > limit {
		paths = paths[:limit]
	}
	n.log.Debug("reaping nodes", zap.Int("count", len(paths)))
	for _, p := range paths {
		req := jute.PathRequest{Path: p}
		n.Propose(&znode.Txn{Type: jute.OpDeleteContainer, Time: now.UnixMilli(), Req: jute.Marshal(&req)}, nil)
	}
}
