package ensemble

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"testing"
)

// TestReadSizedReservesNothingForABogusLength: a forwarding frame or an
// append field that declares 64 MiB and ends after a few bytes is refused
// having allocated about what arrived (a member port peer that sent such
// a header and went silent held 64 MiB per stream), and whole ones of
// either size are read.
func TestReadSizedReservesNothingForABogusLength(t *testing.T) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := readSized(bytes.NewReader([]byte("short")), 64<<20); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("a 64 MiB frame of 5 bytes: %v, want ErrUnexpectedEOF", err)
	}
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
		t.Fatalf("allocated %d bytes for 5 that arrived", grew)
	}
	for _, n := range []int{0, 100, eagerAlloc, eagerAlloc + 1, 1 << 20} {
		want := bytes.Repeat([]byte{7}, n)
		got, err := readSized(bytes.NewReader(append(want, 1, 2, 3)), uint64(n))
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%d bytes: %d read, %v", n, len(got), err)
		}
	}
}
