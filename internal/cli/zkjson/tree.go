package zkjson

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/go-zookeeper/zk"
)

// TreeFormat names the subtree file format in Tree.Format.
const TreeFormat = "zkraft-subtree/1"

// Tree is a subtree as a JSON file: what the web console exports and
// imports, written so that any tool holding a ZooKeeper connection can
// read or write it (ReadTree, Tree.Check). Nodes come parents first;
// each is named relative to the exported root ("" for the root itself,
// "a/b" below it), so the file can be imported under any path. Data is
// base64 (JSON's []byte). ACL ids are as ZooKeeper stores them (a digest
// entry is user:base64(sha1), never a password). Ephemeral nodes are not
// in the file (they belong to a session); Skipped lists them.
type Tree struct {
	Format  string     `json:"format"`
	Root    string     `json:"root"` // the path it was exported from
	Nodes   []TreeNode `json:"nodes"`
	Skipped []string   `json:"skipped,omitempty"` // ephemeral nodes left out, absolute paths
}

// TreeNode is one znode of a Tree.
type TreeNode struct {
	Path string `json:"path"` // relative to the root: "" or "a/b"
	Data []byte `json:"data"`
	ACL  []ACL  `json:"acl"`
}

// ACL is one ACL entry: scheme, id and permissions in zkCli's letters
// (cdrwa).
type ACL struct {
	Scheme string `json:"scheme"`
	ID     string `json:"id"`
	Perms  string `json:"perms"`
}

// permLetters are the permission bits in zkCli's order.
var permLetters = []struct {
	bit    int32
	letter byte
}{{zk.PermCreate, 'c'}, {zk.PermDelete, 'd'}, {zk.PermRead, 'r'}, {zk.PermWrite, 'w'}, {zk.PermAdmin, 'a'}}

// ACLOf is list's file form, ids as stored.
func ACLOf(list []zk.ACL) []ACL {
	out := make([]ACL, 0, len(list))
	for _, a := range list {
		out = append(out, ACL{Scheme: a.Scheme, ID: a.ID, Perms: PermString(a.Perms)})
	}
	return out
}

// PermString is perms in zkCli's letters, in its order ("cdrwa").
func PermString(perms int32) string {
	var b strings.Builder
	for _, p := range permLetters {
		if perms&p.bit != 0 {
			b.WriteByte(p.letter)
		}
	}
	return b.String()
}

// ParsePerms reads permissions in zkCli's letters; a letter that is not
// one of cdrwa is an error.
func ParsePerms(letters string) (int32, error) {
	var perms int32
	for i := 0; i < len(letters); i++ {
		found := false
		for _, p := range permLetters {
			if letters[i] == p.letter {
				perms |= p.bit
				found = true
			}
		}
		if !found {
			return 0, fmt.Errorf("permission %q is not one of cdrwa", letters[i])
		}
	}
	return perms, nil
}

// ZK is the ACL of a file's node; an empty one is world:anyone:cdrwa.
func (n TreeNode) ZK() ([]zk.ACL, error) {
	if len(n.ACL) == 0 {
		return zk.WorldACL(zk.PermAll), nil
	}
	out := make([]zk.ACL, 0, len(n.ACL))
	for _, a := range n.ACL {
		perms, err := ParsePerms(a.Perms)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", n.Path, err)
		}
		out = append(out, zk.ACL{Perms: perms, Scheme: a.Scheme, ID: a.ID})
	}
	return out, nil
}

// Under is the absolute path of a node named rel below root.
func Under(root, rel string) string {
	switch {
	case rel == "":
		return root
	case root == "/":
		return "/" + rel
	}
	return root + "/" + rel
}

// ErrTreeTooLarge is a file with more nodes than its reader allows.
var ErrTreeTooLarge = errors.New("too many nodes")

// Check validates t: its format, at most maxNodes nodes, the root first,
// every other node's parent before it, no path twice, no empty, "." or
// ".." component.
func (t *Tree) Check(maxNodes int) error {
	if t.Format != TreeFormat {
		return fmt.Errorf("not a subtree file: format %q, want %q", t.Format, TreeFormat)
	}
	if len(t.Nodes) > maxNodes {
		return fmt.Errorf("%d nodes, at most %d: %w", len(t.Nodes), maxNodes, ErrTreeTooLarge)
	}
	if len(t.Nodes) == 0 || t.Nodes[0].Path != "" {
		return fmt.Errorf("the first node must be the root (path \"\")")
	}
	seen := make(map[string]bool, len(t.Nodes))
	seen[""] = true
	for _, n := range t.Nodes[1:] {
		for _, part := range strings.Split(n.Path, "/") {
			if part == "" || part == "." || part == ".." {
				return fmt.Errorf("bad node path %q", n.Path)
			}
		}
		if seen[n.Path] {
			return fmt.Errorf("node %q is listed twice", n.Path)
		}
		parent := ""
		if i := strings.LastIndexByte(n.Path, '/'); i >= 0 {
			parent = n.Path[:i]
		}
		if !seen[parent] {
			return fmt.Errorf("node %q comes before its parent", n.Path)
		}
		seen[n.Path] = true
	}
	for _, n := range t.Nodes {
		if _, err := n.ZK(); err != nil {
			return err
		}
	}
	return nil
}

// ReadTree reads and checks a subtree file of at most maxNodes nodes.
func ReadTree(r io.Reader, maxNodes int) (*Tree, error) {
	var t Tree
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&t); err != nil {
		return nil, fmt.Errorf("read subtree file: %w", err)
	}
	if err := t.Check(maxNodes); err != nil {
		return nil, fmt.Errorf("read subtree file: %w", err)
	}
	return &t, nil
}
