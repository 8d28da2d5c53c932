package server

import (
	"fmt"

	"go.uber.org/zap"

	"github.com/zkraft/zkraft/backend"
	"github.com/zkraft/zkraft/ensemble"
	"github.com/zkraft/zkraft/internal/zookeeper/observer"
)

// seed is where a member cut over from a following server starts: the
// observer's tree, stopped at zxid.
type seed struct {
	from *observer.Backend
	zxid int64
}

// openMember opens the ensemble member st describes: the one place a
// member is assembled, whether the server starts as one or a following
// server cuts over into one. With a seed, st's data directory is first
// seeded with the observer's tree at its zxid (ZooKeeper's membership
// left out of /zookeeper/config: the new ensemble's first leader writes
// its own there), the member's changes fire the observer's watch
// registry, which holds its clients' watches, and the first voter elects
// as soon as every voter answers.
func openMember(st Config, m backend.Metrics, log *zap.Logger, sd *seed) (*ensemble.Node, error) {
	listen, dial, err := memberTransport(st)
	if err != nil {
		return nil, err
	}
	cfg := memberConfig(st, listen, dial, m, log)
	if sd != nil {
		tree, err := sd.from.CopyTree()
		if err != nil {
			return nil, err
		}
		tree.ResetConfig()
		cfg.Watches = sd.from.Watches()
		if err := ensemble.Seed(cfg, tree, uint64(sd.zxid)); err != nil {
			return nil, fmt.Errorf("seed the new ensemble: %w", err)
		}
	}
	node, err := ensemble.Open(cfg)
	if err != nil {
		if sd != nil {
			return nil, fmt.Errorf("open the new ensemble's member: %w", err)
		}
		return nil, fmt.Errorf("start ensemble member: %w", err)
	}
	return node, nil
}
