package zkdata

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/zkraft/zkraft/jute"
)

// TestReadSnapshotBody reads a snapshot as a leader streams it to a
// learner (no header, no seal, the signature after it) and gets what the
// file reader gets, leaving the stream at the signature; a cut or a
// garbage length is ErrCorrupt.
func TestReadSnapshotBody(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(golden, "version-2", "snapshot.15"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := ReadSnapshot(b, 0x15)
	if err != nil {
		t.Fatal(err)
	}
	var file bytes.Buffer
	sw := NewSnapshotWriter(&file, want.Sessions, want.ACLs)
	for _, n := range want.Nodes {
		sw.Node(n)
	}
	if err := sw.Close(); err != nil {
		t.Fatal(err)
	}
	// The header is 16 bytes; the seal a long and the string "/".
	body := file.Bytes()[16 : file.Len()-13]
	var sig jute.Writer
	sig.String("BenWasHere")
	stream := append(append([]byte(nil), body...), sig.Buf...)

	s := NewStreamReader(bufio.NewReader(bytes.NewReader(stream)))
	got, err := ReadSnapshotBody(s, 0x15)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("streamed snapshot differs:\ngot  %+v\nwant %+v", got, want)
	}
	if rest := s.String(); rest != "BenWasHere" || s.Err() != nil {
		t.Errorf("after the tree: %q, %v", rest, s.Err())
	}

	for name, in := range map[string][]byte{
		"cut":         body[:len(body)/2],
		"huge length": {0, 0, 0, 0, 0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff}, // no sessions, no ACLs, a 2 GB path
	} {
		_, err := ReadSnapshotBody(NewStreamReader(bufio.NewReader(bytes.NewReader(in))), 1)
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", name, err)
		}
	}
}

// FuzzReadSnapshotBody: no stream makes the streamed snapshot reader
// panic, hang or allocate past its bound.
func FuzzReadSnapshotBody(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join(golden, "version-2", "snapshot.15")); err == nil && len(b) > 16+13 {
		f.Add(b[16 : len(b)-13])
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s := NewStreamReader(bufio.NewReader(bytes.NewReader(b)))
		_, _ = ReadSnapshotBody(s, 1)
		_ = s.String()
	})
}
