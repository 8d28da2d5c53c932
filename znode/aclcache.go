package znode

import (
	"strconv"
	"strings"

	"github.com/zkraft/zkraft/jute"
)

// aclCache interns ACL lists so nodes with equal lists share one slice. It
// counts references so lists no node uses any more are dropped.
type aclCache struct {
	lists map[string]*aclEntry
}

type aclEntry struct {
	list []jute.ACL
	refs int
}

func newACLCache() *aclCache { return &aclCache{lists: make(map[string]*aclEntry)} }

// aclKey is a canonical string for an ACL list (order-sensitive, as in ZooKeeper).
func aclKey(list []jute.ACL) string {
	var b strings.Builder
	for _, a := range list {
		b.WriteString(strconv.Itoa(int(a.Perms)))
		b.WriteByte(0)
		b.WriteString(strconv.Itoa(len(a.ID.Scheme)))
		b.WriteByte(0)
		b.WriteString(a.ID.Scheme)
		b.WriteString(a.ID.ID)
		b.WriteByte(0)
	}
	return b.String()
}

// acquire returns the interned copy of list and takes a reference on it.
func (c *aclCache) acquire(list []jute.ACL) []jute.ACL {
	k := aclKey(list)
	e := c.lists[k]
	if e == nil {
		cp := make([]jute.ACL, len(list))
		copy(cp, list)
		e = &aclEntry{list: cp}
		c.lists[k] = e
	}
	e.refs++
	return e.list
}

// release drops a reference taken by acquire.
func (c *aclCache) release(list []jute.ACL) {
	k := aclKey(list)
	e := c.lists[k]
	if e == nil {
		return
	}
	e.refs--
	if e.refs <= 0 {
		delete(c.lists, k)
	}
}
