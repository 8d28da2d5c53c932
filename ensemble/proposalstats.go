package ensemble

import "sync/atomic"

// proposalStats are the sizes of the entries this member appended as
// leader: ZooKeeper's Leader.getProposalStats (BufferStats), shown by srvr
// as "Proposal sizes last/min/max" and reset by srst. -1 until the first.
type proposalStats struct {
	last, min, max atomic.Int64
}

func newProposalStats() *proposalStats {
	p := &proposalStats{}
	p.reset()
	return p
}

func (p *proposalStats) record(size int) {
	v := int64(size)
	p.last.Store(v)
	for {
		cur := p.min.Load()
		if (cur != -1 && cur <= v) || p.min.CompareAndSwap(cur, v) {
			break
		}
	}
	for {
		cur := p.max.Load()
		if cur >= v || p.max.CompareAndSwap(cur, v) {
			break
		}
	}
}

func (p *proposalStats) reset() {
	p.last.Store(-1)
	p.min.Store(-1)
	p.max.Store(-1)
}

// ProposalSizes are the last, smallest and largest entry this member
// appended as leader, in bytes (-1 for none since the start or the last
// ResetProposalSizes).
func (n *Node) ProposalSizes() (last, min, max int64) {
	return n.proposals.last.Load(), n.proposals.min.Load(), n.proposals.max.Load()
}

// ResetProposalSizes starts ProposalSizes over (srst).
func (n *Node) ResetProposalSizes() { n.proposals.reset() }
