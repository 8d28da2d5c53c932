package ensemble

import (
	"fmt"
	"testing"

	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// TestLeaderOptionsDecideWrites: a member started with other tree options
// than the rest (here extendedTypesEnabled on member 1 only) applies every
// write as the others do: with the options of the leader that appended
// it. On 7d71c65 each member applied with its own, so a TTL create made a
// node on member 1 alone and the trees diverged for good.
func TestLeaderOptionsDecideWrites(t *testing.T) {
	c := newCluster(t, 3, func(cfg *Config) { cfg.Tree.ExtendedTypes = cfg.ID == 1 })
	leader := c.leader()
	mustPropose(t, leader, newSession(7, 30000))
	want := jute.ErrUnimplemented
	if leader.ID() == 1 {
		want = jute.OK
	}
	var last int64
	for id, n := range c.nodes {
		path := fmt.Sprintf("/ttl-%d", id)
		res, err := n.ProposeWait(&znode.Txn{Type: jute.OpCreateTTL, Session: 7, Time: 1,
			Req: jute.Marshal(&jute.CreateRequest{Path: path, ACL: open, Flags: jute.FlagPersistentTTL, HasTTL: true, TTL: 60000})})
		if err != nil {
			t.Fatal(err)
		}
		if res.Err != want {
			t.Errorf("TTL create through member %d (leader %d): %v, want %v", id, leader.ID(), res.Err, want)
		}
		last = max(last, res.Zxid)
	}
	c.converged(last)
	for id, n := range c.nodes {
		for other := range c.nodes {
			_, err := treeStat(n, fmt.Sprintf("/ttl-%d", other))
			if (err == nil) != (want == jute.OK) {
				t.Errorf("member %d: /ttl-%d %v (leader %d, extended types on member 1 only)", id, other, err, leader.ID())
			}
		}
	}
}
