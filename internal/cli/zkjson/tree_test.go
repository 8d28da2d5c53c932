package zkjson

import (
	"errors"
	"strings"
	"testing"

	"github.com/go-zookeeper/zk"
)

// TestReadTree: a well-formed file reads, with its ACLs as ZooKeeper's;
// a file of another format, with a node before its parent, a path twice,
// a bad component, an unknown permission or too many nodes does not.
func TestReadTree(t *testing.T) {
	good := `{"format":"zkraft-subtree/1","root":"/a","nodes":[{"path":"","data":"aGk=","acl":[{"scheme":"world","id":"anyone","perms":"rw"}]},{"path":"b","data":null},{"path":"b/c","data":null}]}`
	tr, err := ReadTree(strings.NewReader(good), 10)
	if err != nil {
		t.Fatal(err)
	}
	if acl, _ := tr.Nodes[0].ZK(); len(acl) != 1 || acl[0].Perms != zk.PermRead|zk.PermWrite {
		t.Fatalf("root ACL %v", acl)
	}
	if acl, _ := tr.Nodes[1].ZK(); len(acl) != 1 || acl[0].Perms != zk.PermAll {
		t.Fatalf("no ACL should be world:anyone:cdrwa, got %v", acl)
	}
	if got := Under("/x", "b/c"); got != "/x/b/c" {
		t.Fatalf("Under: %s", got)
	}
	if got := Under("/", "b"); got != "/b" {
		t.Fatalf("Under /: %s", got)
	}
	if _, err := ReadTree(strings.NewReader(good), 2); !errors.Is(err, ErrTreeTooLarge) {
		t.Fatalf("3 nodes with a bound of 2: %v", err)
	}
	for name, nodes := range map[string]string{
		"child first": `[{"path":"b"},{"path":""}]`,
		"orphan":      `[{"path":""},{"path":"b/c"}]`,
		"twice":       `[{"path":""},{"path":"b"},{"path":"b"}]`,
		"dot-dot":     `[{"path":""},{"path":".."}]`,
		"empty part":  `[{"path":""},{"path":"b//c"}]`,
		"bad perm":    `[{"path":"","acl":[{"scheme":"world","id":"anyone","perms":"x"}]}]`,
		"no root":     `[]`,
	} {
		raw := `{"format":"zkraft-subtree/1","root":"/a","nodes":` + nodes + `}`
		if _, err := ReadTree(strings.NewReader(raw), 10); err == nil {
			t.Errorf("%s: read", name)
		}
	}
	if _, err := ReadTree(strings.NewReader(`{"format":"other","root":"/","nodes":[{"path":""}]}`), 10); err == nil {
		t.Error("another format read")
	}
}
