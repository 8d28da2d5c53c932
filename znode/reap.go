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
// NewDeleteContainerTxn for each. Apply re-checks eligibility.
func (t *Tree) ReapCandidates(now int64) []string {
	var out []string
	for p := range t.reapable {
		if t.eligible(t.lookup(p), now) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}
