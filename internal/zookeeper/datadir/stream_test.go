package datadir

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"testing"

	"github.com/zkraft/zkraft/jute"
)

// TestReadSnapshotBody reads a snapshot as a leader streams it to a
// learner (no header, no seal, the signature after it) and gets what the
// file reader gets, leaving the stream at the signature; a cut or a
// garbage length is ErrCorrupt.
func TestReadSnapshotBody(t *testing.T) {
	want, file := rewriteGoldenSnapshot(t)
	// The header is 16 bytes; the seal a long and the string "/".
	body := file[16 : len(file)-13]
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

// TestStreamLengthCostsNoMemory: a field's length is not memory until its
// bytes arrive. A stream that names a 255 MiB path and then ends (twelve
// bytes from a hostile or broken leader) is corrupt, and reading it
// allocates far less than the length said.
func TestStreamLengthCostsNoMemory(t *testing.T) {
	in := []byte{0, 0, 0, 0, 0, 0, 0, 0, 0x0f, 0xf0, 0, 0, 'x'}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := ReadSnapshotBody(NewStreamReader(bufio.NewReader(bytes.NewReader(in))), 1)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrCorrupt) || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("a cut 255 MiB path: %v, want ErrCorrupt and an unexpected EOF", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 4<<20 {
		t.Errorf("reading it allocated %d MiB", got>>20)
	}
	// A large field that does arrive whole is read whole.
	data := bytes.Repeat([]byte("d"), 300<<10)
	field := append(binary.BigEndian.AppendUint32(nil, uint32(len(data))), data...)
	s := NewStreamReader(bufio.NewReader(bytes.NewReader(field)))
	if got := s.Buffer(); !bytes.Equal(got, data) || s.Err() != nil {
		t.Errorf("a 300 KiB field: %d bytes, %v", len(got), s.Err())
	}
}
