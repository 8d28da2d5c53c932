package ensemble

import (
	"sync/atomic"

	"github.com/zkraft/zkraft/internal/base/avgminmax"
)

// proposalStats are the sizes of the entries this member appended as
// leader: ZooKeeper's Leader.getProposalStats (BufferStats), shown by srvr
// as "Proposal sizes last/min/max" and reset by srst. -1 until the first.
type proposalStats struct {
	last  atomic.Int64
	sizes avgminmax.Counter
}

func newProposalStats() *proposalStats {
	p := &proposalStats{}
	p.reset()
	return p
}

func (p *proposalStats) record(size int) {
	p.last.Store(int64(size))
	p.sizes.Add(int64(size))
}

func (p *proposalStats) reset() {
	p.last.Store(-1)
	p.sizes.Reset()
}

// values are last/min/max, -1 for none.
func (p *proposalStats) values() (last, min, max int64) {
	if p.sizes.Count() == 0 {
		return -1, -1, -1
	}
	return p.last.Load(), p.sizes.Min(), p.sizes.Max()
}

// ProposalSizes are the last, smallest and largest entry this member
// appended as leader, in bytes (-1 for none since the start or the last
// ResetProposalSizes).
func (n *Node) ProposalSizes() (last, min, max int64) { return n.proposals.values() }

// ResetProposalSizes starts ProposalSizes over (srst).
func (n *Node) ResetProposalSizes() { n.proposals.reset() }
