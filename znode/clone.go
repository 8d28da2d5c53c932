package znode

import "maps"

// Clone returns an independent copy of the tree and session table. Data and
// ACL slices are immutable and therefore shared; everything mutable is
// copied. It lets a caller hold its lock only for the copy and then write a
// snapshot of the clone (WriteSnapshot) while Apply goes on with the
// original.
func (t *Tree) Clone() *Tree {
	c := &Tree{
		opts:     t.opts,
		nodes:    make(map[string]*node, len(t.nodes)),
		sessions: make(map[int64]*session, len(t.sessions)),
		acls:     &aclCache{lists: make(map[string]*aclEntry, len(t.acls.lists))},
		lastZxid: t.lastZxid,
		dataSize: t.dataSize,
		nEphem:   t.nEphem,
		reapable: maps.Clone(t.reapable),
		quotas:   maps.Clone(t.quotas),
	}
	for k, e := range t.acls.lists {
		c.acls.lists[k] = &aclEntry{list: e.list, refs: e.refs}
	}
	for p, n := range t.nodes {
		cp := *n
		if n.children != nil {
			cp.children = maps.Clone(n.children)
		}
		c.nodes[p] = &cp
	}
	for id, s := range t.sessions {
		cs := &session{info: s.info}
		if s.ephemerals != nil {
			cs.ephemerals = maps.Clone(s.ephemerals)
		}
		c.sessions[id] = cs
	}
	return c
}
