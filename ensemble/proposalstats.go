package ensemble

import (
	"sync/atomic"

	"github.com/zkraft/zkraft/internal/base/avgminmax"
)

// proposalStats are the sizes of the entries this member appended as
// leader: ZooKeeper's Leader.getProposalStats (BufferStats), shown by srvr
// as "Proposal sizes last/min/max" and reset by srst. -1 until the first.
// The count of those committed is ZooKeeper's commit_count (the sizes'
// count its proposal_count), reset with them.
type proposalStats struct {
	last      atomic.Int64
	sizes     avgminmax.Counter
	committed atomic.Int64
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
	p.committed.Store(0)
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

// ProposalCounts are the entries this member appended as leader and those
// of them Raft committed, since the start or the last ResetProposalSizes:
// ZooKeeper's proposal_count and commit_count (its Leader's).
func (n *Node) ProposalCounts() (proposed, committed int64) {
	return n.proposals.sizes.Count(), n.proposals.committed.Load()
}

// UnrecoverableErrors counts the errors that stopped the member for good
// (ZooKeeper's unrecoverable_error_count): 0 while it serves, since such
// an error ends the process unless Config.Fatal says otherwise.
func (n *Node) UnrecoverableErrors() int64 { return n.unrecoverable.Load() }
