package znode

import "slices"

// reapable reports whether the reaper may delete n at now (ms): a container
// without children that has had at least one child, or a TTL node without
// children whose TTL has passed since its last modification.
func (t *Tree) eligible(n *node, now int64) bool {
	if n.numChildren() > 0 {
		return false
	}
	switch n.kind() {
	case kindContainer:
		return n.cversion() > 0
	case kindTTL:
		return t.opts.ExtendedTypes && now-n.mtime > n.owner // owner is the TTL
	}
	return false
}

// ReapCandidates returns, sorted, the paths of the containers and TTL nodes
// the reaper should delete at now (ms since the epoch); propose
// NewDeleteContainerTxn for each. Apply re-checks eligibility. It examines
// every container and TTL node at once: a caller holding the tree's lock
// scans with ReapScan, a chunk per hold, instead.
func (t *Tree) ReapCandidates(now int64) []string {
	n := len(t.reapOrder)
	_, _, out := t.ReapScan(now, 0, n, n, make([]string, 0, n))
	slices.Sort(out)
	return out
}

// ReapScan examines the containers and TTL nodes of the reaper's index
// from place from on, at most places of them, and appends to out, unsorted,
// the paths of those the reaper should delete at now (ms since the epoch),
// at most want of them. It returns the place the next scan starts from and
// whether this one reached the end of the index.
//
// A caller that lets the tree's lock go between scans, so that each hold
// examines a bounded number of nodes however many the clients created
// (and gives out the capacity for want first, so that nothing is
// allocated under the lock), may miss a node a deletion moved meanwhile,
// until its next round; a node it returns may be gone or busy by the time
// its deleteContainer applies, which Apply re-checks.
func (t *Tree) ReapScan(now int64, from, places, want int, out []string) (next int, done bool, _ []string) {
	end := min(from+places, len(t.reapOrder))
	i := min(from, end)
	for found := 0; i < end && found < want; i++ {
		if p := t.reapOrder[i]; t.eligible(t.lookup(p), now) {
			out = append(out, p)
			found++
		}
	}
	return i, i >= len(t.reapOrder), out
}
