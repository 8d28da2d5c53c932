package znode

import (
	"slices"
	"strings"
)

// quotaTrie is ZooKeeper's PathTrie of quota'd paths (DataTree.pTrie): a
// tree keyed by path components, so a quota on "/a" covers "/a/b" but not
// "/ab". As PathTrie.split does, components are the non-blank pieces
// between slashes (Java's trim: characters up to ' ' are blank), so
// "/ /a" and "/a" are the same key. A path carries a quota when its trie
// node has the property; removing one clears the property and keeps the
// quotas below it, as PathTrie.deletePath does in 3.9. Every operation
// costs O(len(path)); the deepest-quota lookup allocates nothing.
type quotaTrie struct {
	root quotaNode
	n    int // nodes carrying a quota
}

// quotaNode is one trie node. key is the canonical path of a node that
// carries a quota ("/" + its components joined by "/"), "" otherwise.
type quotaNode struct {
	kids map[string]*quotaNode
	key  string
}

// blank reports a component PathTrie.split drops: empty or only
// characters <= ' ' (Java String.trim).
func blank(seg string) bool {
	for i := 0; i < len(seg); i++ {
		if seg[i] > ' ' {
			return false
		}
	}
	return true
}

// eachComponent calls f with every non-blank component of path, in
// order, until f returns false.
func eachComponent(path string, f func(seg string) bool) {
	for rest := path; rest != ""; {
		seg, tail, _ := strings.Cut(rest, "/")
		if !blank(seg) && !f(seg) {
			return
		}
		rest = tail
	}
}

// quotaKey is the canonical form of a quota'd path: "/" and the
// non-blank components joined by "/", "" when there are none (the root,
// which never carries a quota).
func quotaKey(path string) string {
	var b strings.Builder
	eachComponent(path, func(seg string) bool {
		b.WriteByte('/')
		b.WriteString(seg)
		return true
	})
	return b.String()
}

// len is the number of quota'd paths.
func (q *quotaTrie) len() int { return q.n }

// add gives path a quota (PathTrie.addPath). It returns the canonical key
// and whether anything changed; a path without components changes
// nothing (ZooKeeper would mark the trie's root, which no lookup reads).
func (q *quotaTrie) add(path string) (string, bool) {
	key := quotaKey(path)
	if key == "" {
		return "", false
	}
	n := &q.root
	eachComponent(key, func(seg string) bool {
		c := n.kids[seg]
		if c == nil {
			if n.kids == nil {
				n.kids = make(map[string]*quotaNode)
			}
			c = &quotaNode{}
			n.kids[strings.Clone(seg)] = c
		}
		n = c
		return true
	})
	if n.key != "" {
		return key, false
	}
	n.key = key
	q.n++
	return key, true
}

// remove takes path's quota away (PathTrie.deletePath), keeping any below
// it, and drops the trie nodes left carrying nothing. It returns the
// canonical key and whether anything changed.
func (q *quotaTrie) remove(path string) (string, bool) {
	key := quotaKey(path)
	if key == "" {
		return "", false
	}
	var trail []*quotaNode // the root and every node down to key's
	n := &q.root
	found := true
	eachComponent(key, func(seg string) bool {
		trail = append(trail, n)
		if n = n.kids[seg]; n == nil {
			found = false
		}
		return found
	})
	if !found || n.key == "" {
		return key, false
	}
	n.key = ""
	q.n--
	// Prune the chain of nodes that now carry nothing and lead nowhere.
	segs := strings.Split(key[1:], "/")
	for i := len(trail) - 1; i >= 0 && n.key == "" && len(n.kids) == 0; i-- {
		delete(trail[i].kids, segs[i])
		n = trail[i]
	}
	return key, true
}

// maxPrefix is DataTree.getMaxPrefixWithQuota: the key of the deepest
// quota'd path that is path or one of its ancestors, "" when none.
func (q *quotaTrie) maxPrefix(path string) string {
	if q.n == 0 {
		return ""
	}
	deepest := ""
	n := &q.root
	eachComponent(path, func(seg string) bool {
		if n = n.kids[seg]; n == nil {
			return false
		}
		if n.key != "" {
			deepest = n.key
		}
		return true
	})
	return deepest
}

// paths returns every quota'd path's key, sorted.
func (q *quotaTrie) paths() []string {
	out := make([]string, 0, q.n)
	var walk func(n *quotaNode)
	walk = func(n *quotaNode) {
		if n.key != "" {
			out = append(out, n.key)
		}
		for _, c := range n.kids {
			walk(c)
		}
	}
	walk(&q.root)
	slices.Sort(out)
	return out
}

// clone returns an independent copy.
func (q *quotaTrie) clone() quotaTrie {
	var cp func(n *quotaNode) quotaNode
	cp = func(n *quotaNode) quotaNode {
		out := quotaNode{key: n.key}
		if n.kids != nil {
			out.kids = make(map[string]*quotaNode, len(n.kids))
			for seg, c := range n.kids {
				cc := cp(c)
				out.kids[seg] = &cc
			}
		}
		return out
	}
	return quotaTrie{root: cp(&q.root), n: q.n}
}

// verify checks the trie: every key is the path of its node, every
// component non-blank and slash-free, the count right, and no node that
// carries nothing is a leaf (remove prunes those).
func (q *quotaTrie) verify() error {
	count := 0
	var walk func(n *quotaNode, path string, root bool) error
	walk = func(n *quotaNode, path string, root bool) error {
		if n.key != "" {
			count++
			if n.key != path || !canonical(path) {
				return inconsistent("quota trie: node at %q has key %q", path, n.key)
			}
		} else if !root && len(n.kids) == 0 {
			return inconsistent("quota trie: empty leaf at %q", path)
		}
		for seg, c := range n.kids {
			if blank(seg) || strings.IndexByte(seg, '/') >= 0 {
				return inconsistent("quota trie: component %q under %q", seg, path)
			}
			if err := walk(c, path+"/"+seg, false); err != nil {
				return err
			}
		}
		return nil
	}
	if q.root.key != "" {
		return inconsistent("quota trie: the root carries a quota")
	}
	if err := walk(&q.root, "", true); err != nil {
		return err
	}
	if count != q.n {
		return inconsistent("quota trie: %d quotas counted, %d recorded", count, q.n)
	}
	return nil
}
