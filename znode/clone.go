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
		root:     cloneNode(t.root),
		count:    t.count,
		sessions: make(map[int64]*session, len(t.sessions)),
		acls:     t.acls.clone(),
		lastZxid: t.lastZxid,
		dataSize: t.dataSize,
		nEphem:   t.nEphem,
		parents:  make(map[string]*nodeExt, len(t.parents)),
		reapable: maps.Clone(t.reapable),
		quotas:   maps.Clone(t.quotas),
	}
	for p := range t.parents {
		c.parents[p] = c.walk(p).ext
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

// cloneNode copies n and, recursively, its children. The node's ACL
// reference stays valid because the cache is cloned slot for slot.
func cloneNode(n *node) *node {
	cp := *n
	if n.ext != nil {
		ext := *n.ext
		ext.kids = n.ext.kids.clone(cloneNode)
		cp.ext = &ext
	}
	return &cp
}
