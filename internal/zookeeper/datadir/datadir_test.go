package datadir

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/golang/snappy"
	"github.com/zkraft/zkraft/jute"
)

// golden is a ZooKeeper 3.8 data directory; see internal/zookeeper/importer's test.
var golden = filepath.Join("testdata", "zk38")

// TestLoadGolden reads ZooKeeper's newest snapshot and the transactions
// after it, from the log holding the next zxid on.
func TestLoadGolden(t *testing.T) {
	d, err := Load(golden, "")
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(d.SnapshotFile) != "snapshot.15" || d.Snapshot.Zxid != 0x15 {
		t.Fatalf("snapshot %s zxid %#x", d.SnapshotFile, d.Snapshot.Zxid)
	}
	if len(d.Logs) != 2 || filepath.Base(d.Logs[0]) != "log.11" {
		t.Fatalf("logs %v, want log.11 and log.17", d.Logs)
	}
	var types []jute.Op
	for _, x := range d.Txns {
		types = append(types, x.Type)
	}
	want := []jute.Op{jute.OpDelete, jute.OpCloseSession, jute.OpCreateSession, jute.OpCloseSession}
	if len(types) != len(want) || d.Txns[0].Zxid != 0x16 || d.LastZxid() != 0x19 {
		t.Fatalf("txns %v (first %#x, last %#x), want %v from 0x16 to 0x19", types, d.Txns[0].Zxid, d.LastZxid(), want)
	}
	for i := range want {
		if types[i] != want[i] {
			t.Fatalf("txns %v, want %v", types, want)
		}
	}
	root := d.Snapshot.Nodes[0]
	if root.Path != "/" || root.ACL != OpenACL || len(d.Snapshot.Sessions) != 1 {
		t.Fatalf("root %+v, sessions %v", root, d.Snapshot.Sessions)
	}
}

// TestCorruptFiles: damaged snapshots and logs are reported, never
// half-read; a torn or preallocated log tail is the log's end.
func TestCorruptFiles(t *testing.T) {
	snap, err := os.ReadFile(filepath.Join(golden, "version-2", "snapshot.15"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ReadSnapshot(snap, 0x15); err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{
		"flipped byte": flip(snap, len(snap)/2),
		"truncated":    snap[:len(snap)/2],
		"bad magic":    flip(snap, 0),
		"empty":        nil,
	} {
		if _, err := ReadSnapshot(b, 0x15); !errors.Is(err, ErrCorrupt) {
			t.Errorf("snapshot %s: err %v, want ErrCorrupt", name, err)
		}
	}

	log, err := os.ReadFile(filepath.Join(golden, "version-2", "log.11"))
	if err != nil {
		t.Fatal(err)
	}
	count := func(b []byte) (int, error) {
		n := 0
		err := ReadLog(b, func(Txn) error { n++; return nil })
		return n, err
	}
	all, err := count(log)
	if err != nil || all == 0 {
		t.Fatalf("log.11: %d txns, %v", all, err)
	}
	end := strings.LastIndexFunc(string(log), func(r rune) bool { return r != 0 }) + 1
	if n, err := count(log[:end-3]); err != nil || n != all-1 {
		t.Errorf("a torn last record: %d txns, %v; want %d, nil", n, err, all-1)
	}
	if _, err := count(flip(log, 16+12+3)); !errors.Is(err, ErrCorrupt) {
		t.Errorf("a damaged first record: %v, want ErrCorrupt", err)
	}
}

func flip(b []byte, i int) []byte {
	c := append([]byte(nil), b...)
	c[i] ^= 0x5a
	return c
}

// FuzzReadSnapshot: no input makes the snapshot reader panic or hang.
func FuzzReadSnapshot(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join(golden, "version-2", "snapshot.f")); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = ReadSnapshot(b, 1)
	})
}

// FuzzReadLog: no input makes the log reader panic or hang.
func FuzzReadLog(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join(golden, "version-2", "log.9")); err == nil {
		f.Add(b[:512])
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = ReadLog(b, func(Txn) error { return nil })
	})
}

// TestSnapshotRoundTrip writes ZooKeeper's snapshot back with
// SnapshotWriter and reads the same sessions, ACL cache and nodes.
func TestSnapshotRoundTrip(t *testing.T) {
	want, out := rewriteGoldenSnapshot(t)
	got, err := ReadSnapshot(out, 0x15)
	if err != nil {
		t.Fatalf("reading what SnapshotWriter wrote: %v", err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip differs:\ngot  %+v\nwant %+v", got, want)
	}
}

// TestUnsnappy reads snappy-java's stream (header, length-prefixed raw
// blocks) and a bare raw block, and reports damage.
func TestUnsnappy(t *testing.T) {
	want := bytes.Repeat([]byte("zookeeper snapshot "), 500)
	var stream bytes.Buffer
	stream.Write(xerialMagic)
	stream.Write([]byte{0, 0, 0, 1, 0, 0, 0, 1})
	for _, part := range [][]byte{want[:4000], want[4000:]} {
		block := snappy.Encode(nil, part)
		stream.Write(binary.BigEndian.AppendUint32(nil, uint32(len(block))))
		stream.Write(block)
	}
	for name, in := range map[string][]byte{"stream": stream.Bytes(), "raw block": snappy.Encode(nil, want)} {
		if got, err := unsnappy(in); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: %d bytes, %v", name, len(got), err)
		}
	}
	for name, in := range map[string][]byte{
		"short header":   xerialMagic,
		"torn block":     stream.Bytes()[:stream.Len()-5],
		"garbage block":  append(append([]byte{}, stream.Bytes()[:16]...), 0, 0, 0, 3, 0xff, 0xff, 0xff),
		"garbage stream": []byte("not snappy at all"),
	} {
		if _, err := unsnappy(in); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", name, err)
		}
	}
}

// rewriteGoldenSnapshot reads ZooKeeper's golden snapshot.15 and returns
// it with the file SnapshotWriter writes from it.
func rewriteGoldenSnapshot(t *testing.T) (*Snapshot, []byte) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(golden, "version-2", "snapshot.15"))
	if err != nil {
		t.Fatal(err)
	}
	snap, err := ReadSnapshot(b, 0x15)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	sw := NewSnapshotWriter(&out, snap.Sessions, snap.ACLs)
	for _, n := range snap.Nodes {
		sw.Node(n)
	}
	if err := sw.Close(); err != nil {
		t.Fatal(err)
	}
	return snap, out.Bytes()
}
