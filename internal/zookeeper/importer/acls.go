package importer

import (
	"fmt"

	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// danglingACLs are the znodes of a fuzzy snapshot whose ACL index is not
// in its ACL cache, with that index. ZooKeeper writes the cache before the
// nodes, so a node given a new ACL while the snapshot is written can refer
// to one the cache lacks; the change that gave it is logged after the
// snapshot, and its replay sets the ACL.
type danglingACLs map[string]int64

// settle applies ZooKeeper's replay rules for a node's ACL once step s has
// been replayed with result code: a create that finds its node sets the
// logged ACL on it (DataTree.createNode), and a setACL whose version the
// node is already past sets the logged ACL and aversion all the same
// (DataTree.setACL sets both unconditionally; a later setACL, replayed
// next, brings the node back to where the snapshot had it). A node whose
// ACL is set, or that is created or deleted, no longer dangles.
func (d danglingACLs) settle(tree *znode.Tree, s step, code jute.ErrCode) error {
	switch {
	case s.kind == stepCreate && code == jute.ErrNodeExists:
		if _, err := tree.ReplaceACL(s.path, s.acl, -1); err != nil {
			return err
		}
	case s.kind == stepSetACL && code == jute.ErrBadVersion:
		if _, err := tree.ReplaceACL(s.path, s.acl, s.version); err != nil {
			return err
		}
	case code != jute.OK || (s.kind != stepCreate && s.kind != stepDelete && s.kind != stepSetACL):
		return nil
	}
	delete(d, s.path)
	return nil
}

// check fails if a node still refers to an ACL the snapshot lacks after
// the replay: no logged change set it, so the data directory is damaged
// (ZooKeeper would fail on reading the node).
func (d danglingACLs) check(tree *znode.Tree) error {
	for p, idx := range d {
		if _, _, ok := tree.ChildMeta(p); ok {
			return fmt.Errorf("importer: %s: ACL %d is neither in the snapshot's ACL cache nor set by a logged change", p, idx)
		}
	}
	return nil
}
