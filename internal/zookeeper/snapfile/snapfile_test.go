package snapfile

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/zkraft/zkraft/internal/zookeeper/datadir"
	"github.com/zkraft/zkraft/jute"
)

// sample is a small tree in ZooKeeper's snapshot format: two sessions,
// one with two ephemerals, a container, a TTL node and one large node.
func sample(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	open := []jute.ACL{{Perms: jute.PermRead, ID: jute.Id{Scheme: "world", ID: "anyone"}}}
	sw := datadir.NewSnapshotWriter(&b, []datadir.Session{{ID: 0x100, Timeout: 4000}, {ID: 0x200, Timeout: 6000}},
		map[int64][]jute.ACL{1: open})
	node := func(path string, data string, owner int64) {
		sw.Node(datadir.Node{Path: path, Data: []byte(data), ACL: datadir.OpenACL, Stat: jute.Stat{Czxid: 3, Mzxid: 5, Pzxid: 7, EphemeralOwner: owner}})
	}
	node("/", "", 0)
	node("/app", "v1", 0)
	node("/app/big", string(make([]byte, 1000)), 0)
	node("/app/lock", "", math.MinInt64)
	node("/app/lock/n1", "a", 0x100)
	node("/app/lock/n2", "b", 0x100)
	node("/app/t", "x", int64(-1)<<56|5000) // a TTL node: EphemeralType 0xFF
	node("/svc", "", 0)
	node("/svc/m1", "c", 0x200)
	node("/zookeeper", "", 0)
	if err := sw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func writeSample(t *testing.T) (string, []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "backup.snap")
	snap := sample(t)
	if err := WriteFile(path, snap, Meta{Zxid: 0x2a, Znodes: 10, Sessions: 2, Source: "test"}); err != nil {
		t.Fatal(err)
	}
	return path, snap
}

// TestRoundTrip: a file written is read back with its meta and tree; no
// temporary file is left beside it.
func TestRoundTrip(t *testing.T) {
	path, snap := writeSample(t)
	f, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if f.Kind != KindZkraft || f.Meta.Zxid != 0x2a || f.Meta.SnapshotBytes != int64(len(snap)) || f.Snapshot.Zxid != 0x2a || len(f.Snapshot.Nodes) != 10 {
		t.Fatalf("read back %+v (%d nodes)", f.Meta, len(f.Snapshot.Nodes))
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Fatalf("directory holds %d entries, want the file alone", len(entries))
	}
}

// TestDamageRefused: a flipped byte anywhere, a truncated file, a file of
// another format version and meta that disagrees with the tree are all
// refused as ErrCorrupt.
func TestDamageRefused(t *testing.T) {
	path, _ := writeSample(t)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	damaged := map[string][]byte{}
	for _, at := range []int{len(Magic) + 40, len(good) - 50, len(good) - 1} {
		b := bytes.Clone(good)
		b[at] ^= 0x10
		damaged[fmt.Sprintf("byte %d flipped", at)] = b
	}
	damaged["truncated"] = good[:len(good)-100]
	damaged["empty"] = nil
	v2 := bytes.Clone(good)
	v2[len(Magic)-1] = '2'
	damaged["format 2"] = v2
	for name, b := range damaged {
		p := filepath.Join(t.TempDir(), "f")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Read(p); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", name, err)
		}
	}
	// Meta that disagrees with the tree, the digest recomputed.
	p := filepath.Join(t.TempDir(), "lying")
	if err := WriteFile(p, sample(t), Meta{Zxid: 0x2a, Znodes: 11, Sessions: 2}); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(p); !errors.Is(err, ErrCorrupt) {
		t.Errorf("meta with 11 znodes for 10: %v, want ErrCorrupt", err)
	}
	// A ZooKeeper snapshot with a damaged seal.
	zk := sample(t)
	zk[30] ^= 1
	p = filepath.Join(t.TempDir(), "snapshot.2a")
	if err := os.WriteFile(p, zk, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(p); !errors.Is(err, ErrCorrupt) {
		t.Errorf("damaged ZooKeeper snapshot: %v, want ErrCorrupt", err)
	}
}

// TestZooKeeperFile: a plain ZooKeeper snapshot is read, its zxid from
// its name, or from its nodes under another name; ZooKeeper's own golden
// file too.
func TestZooKeeperFile(t *testing.T) {
	dir := t.TempDir()
	for name, zxid := range map[string]Zxid{"snapshot.2a": 0x2a, "tree.bin": 7} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, sample(t), 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := Read(p)
		if err != nil {
			t.Fatal(err)
		}
		if f.Kind != KindZooKeeper || f.Meta.Zxid != zxid || f.Meta.Znodes != 10 {
			t.Errorf("%s: %s %+v, want zookeeper at %s", name, f.Kind, f.Meta, zxid)
		}
	}
	f, err := Read(filepath.Join("..", "datadir", "testdata", "zk38", "version-2", "snapshot.15"))
	if err != nil || f.Meta.Zxid != 0x15 {
		t.Fatalf("ZooKeeper 3.8's snapshot.15: %+v %v", f, err)
	}
}

// TestInspect counts the sample's kinds of node, its bytes, its largest
// subtrees and its ephemerals by session.
func TestInspect(t *testing.T) {
	path, _ := writeSample(t)
	f, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	r := Inspect(f, 2, 3)
	if r.Znodes != 10 || r.Ephemerals != 3 || r.Containers != 1 || r.TTLs != 1 || r.Sessions != 2 || r.ACLs != 1 {
		t.Fatalf("counts %+v", r)
	}
	if r.DataBytes != 1006 || r.Largest.Path != "/app/big" || r.Largest.Bytes != 1000 {
		t.Fatalf("data %d, largest %+v", r.DataBytes, r.Largest)
	}
	var paths int64
	for _, n := range f.Snapshot.Nodes {
		paths += int64(len(n.Path))
	}
	if r.Bytes != paths+1006 {
		t.Fatalf("bytes %d, want %d", r.Bytes, paths+1006)
	}
	wantBytes := []string{"/app", "/app/big", "/app/lock"}
	wantNodes := []Subtree{{"/app", 6, 0}, {"/app/lock", 3, 0}, {"/svc", 2, 0}}
	for i, st := range r.ByBytes {
		if st.Path != wantBytes[i] {
			t.Errorf("by bytes %d: %+v, want %s", i, st, wantBytes[i])
		}
	}
	for i, st := range r.ByZnodes {
		if st.Path != wantNodes[i].Path || st.Znodes != wantNodes[i].Znodes {
			t.Errorf("by znodes %d: %+v, want %+v", i, st, wantNodes[i])
		}
	}
	if len(r.EphemeralsBySession) != 2 {
		t.Fatalf("ephemerals by session %+v", r.EphemeralsBySession)
	}
	first := r.EphemeralsBySession[0]
	if first.Session != 0x100 || first.TimeoutMs != 4000 || first.Count != 2 || first.Paths[1] != "/app/lock/n2" {
		t.Errorf("first session %+v", first)
	}
}
