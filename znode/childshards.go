package znode

// A childSet keeps at most maxTableEntries children in one childTable, so
// no rehash moves more than that many entries (about a millisecond). A
// larger set is spread over shardCount tables by bits of the name's hash,
// each growing on its own; it goes back into one table when it falls below
// maxTableEntries/4.
const (
	maxTableEntries = 1 << 13
	shardBits       = 8
	shardCount      = 1 << shardBits
)

// childShards is a large child set: shardCount childTables.
type childShards struct {
	tables [shardCount]childTable
	n      int
}

// shardOf picks a name's table from hash bits that neither the control tag
// (bits 0-6) nor the group choice (the top bits, see childTable.probe) use.
func shardOf(h uint64) int { return int(h>>7) & (shardCount - 1) }

// newChildShards spreads the entries of t over new shards.
func newChildShards(t *childTable) *childShards {
	s := &childShards{}
	for i := range s.tables {
		s.tables[i] = newChildTable(int(t.n) / shardCount)
	}
	t.each(func(name string, n *node) { s.add(name, n, hashName(name)) })
	return s
}

// get returns the child called name (hash h), or nil.
func (s *childShards) get(name string, h uint64) *node { return s.tables[shardOf(h)].get(name, h) }

// add inserts a child (hash h); name must not be in the set.
func (s *childShards) add(name string, n *node, h uint64) {
	s.tables[shardOf(h)].add(name, n, h)
	s.n++
}

// remove deletes the child called name (hash h), if present.
func (s *childShards) remove(name string, h uint64) {
	if s.tables[shardOf(h)].remove(name, h) {
		s.n--
	}
}

// each calls f for every entry, in no particular order.
func (s *childShards) each(f func(name string, n *node)) {
	for i := range s.tables {
		s.tables[i].each(f)
	}
}

// merge returns the entries in one table.
func (s *childShards) merge() childTable {
	t := newChildTable(s.n)
	s.each(func(name string, n *node) { t.place(name, n, hashName(name)) })
	return t
}

// clone copies the shards, replacing each child by copyNode(child).
func (s *childShards) clone(copyNode func(*node) *node) *childShards {
	cp := &childShards{n: s.n}
	for i := range s.tables {
		cp.tables[i] = s.tables[i].clone(copyNode)
	}
	return cp
}
