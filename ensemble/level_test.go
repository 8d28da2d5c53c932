package ensemble

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"errors"
	"io"
	"testing"

	"go.uber.org/zap"

	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

func TestEnsembleEntryRoundTrip(t *testing.T) {
	id := EnsembleID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	e := entry{Kind: kindEnsemble, Origin: 42, Level: 2, ID: id, Minted: 1_700_000_000_123_456_789}
	w := jute.Writer{Buf: make([]byte, 0, e.encodedSize())}
	e.encode(&w)
	if len(w.Buf) > e.encodedSize() {
		t.Fatalf("encoded %d bytes, encodedSize %d", len(w.Buf), e.encodedSize())
	}
	var dec znode.TxnDecoder
	got, err := decodeEntry(w.Buf, &dec)
	if err != nil {
		t.Fatal(err)
	}
	if got.Kind != kindEnsemble || got.Origin != 42 || got.Level != 2 || got.ID != id || got.Minted != e.Minted {
		t.Fatalf("round trip: %+v", got)
	}
	// The layout is part of the log format: kind, origin, level, id, minted.
	const golden = "04" + "000000000000002a" + "02" + "0102030405060708090a0b0c0d0e0f10" + "17979cfe3d85cd15"
	if hex.EncodeToString(w.Buf) != golden {
		t.Fatalf("encoding changed:\n got %x\nwant %s", w.Buf, golden)
	}
	for _, cut := range []int{10, 25, len(w.Buf) - 1} {
		if _, err := decodeEntry(w.Buf[:cut], &dec); err == nil {
			t.Fatalf("a %d-byte ensemble entry decoded", cut)
		}
	}
}

// Level 1 entries are byte for byte what zkraft v0.1 writes and reads: a
// v0.1 member in the ensemble reads every entry a v0.2 member writes at
// level 1.
func TestLevelOneEntriesAreVersionOnes(t *testing.T) {
	for _, c := range []struct {
		e      entry
		golden string
	}{
		{entry{Kind: kindBarrier, Origin: 7, Code: jute.ErrNoNode}, "02" + "0000000000000007" + "ffffff9b"},
		{entry{Kind: kindSessionOwner, Origin: 9, Session: 0x0102030405060708, Member: 3}, "03" + "0000000000000009" + "0102030405060708" + "03"},
	} {
		w := jute.Writer{}
		c.e.encode(&w)
		if hex.EncodeToString(w.Buf) != c.golden {
			t.Errorf("kind %d: %x, want %s", c.e.Kind, w.Buf, c.golden)
		}
	}
}

func TestApplyEnsembleKeepsTheIDAndOnlyRaises(t *testing.T) {
	a, b := EnsembleID{1}, EnsembleID{2}
	s := ensembleState{}.raise(2, a, 100)
	if s.level() != 2 || s.ID != a || s.Minted != 100 {
		t.Fatalf("first raise: %+v", s)
	}
	s = s.raise(1, b, 200)
	if s.level() != 2 || s.ID != a || s.Minted != 100 {
		t.Fatalf("a lower level or a second id changed the state: %+v", s)
	}
	if (ensembleState{}).level() != LevelLegacy {
		t.Fatal("an ensemble with no level entry is not at level 1")
	}
}

func TestEnsembleSection(t *testing.T) {
	// Level 1: nothing after the tree, as v0.1 writes.
	var buf bytes.Buffer
	if err := writeEnsembleSection(&buf, ensembleState{}); err != nil || buf.Len() != 0 {
		t.Fatalf("level 1 wrote %d bytes (%v)", buf.Len(), err)
	}
	got, err := readEnsembleSection(bufio.NewReader(&buf))
	if err != nil || got != (ensembleState{}) {
		t.Fatalf("no section: %+v %v", got, err)
	}
	want := ensembleState{Level: 2, ID: EnsembleID{9, 8, 7}, Minted: 12345}
	if err := writeEnsembleSection(&buf, want); err != nil {
		t.Fatal(err)
	}
	raw := append([]byte(nil), buf.Bytes()...)
	got, err = readEnsembleSection(bufio.NewReader(bytes.NewReader(raw)))
	if err != nil || got != want {
		t.Fatalf("section: %+v %v", got, err)
	}
	flipped := append([]byte(nil), raw...)
	flipped[6] ^= 1
	if _, err := readEnsembleSection(bufio.NewReader(bytes.NewReader(flipped))); err == nil {
		t.Fatal("a flipped byte passed the CRC")
	}
	if _, err := readEnsembleSection(bufio.NewReader(bytes.NewReader(raw[:10]))); err == nil {
		t.Fatal("a truncated section was read")
	}
	higher := ensembleState{Level: BinaryLevel + 1, ID: EnsembleID{1}}
	buf.Reset()
	_ = writeEnsembleSection(&buf, higher)
	if _, err := readEnsembleSection(bufio.NewReader(&buf)); !errors.Is(err, errLevelTooHigh) {
		t.Fatalf("a level above this build's: %v", err)
	}
}

// A snapshot carries the ensemble's state after the tree, and a member
// restoring it gets it back; one written at level 1 is v0.1's.
func TestSnapshotCarriesTheEnsemble(t *testing.T) {
	for _, want := range []ensembleState{{}, {Level: 2, ID: EnsembleID{5, 5}, Minted: 77}} {
		f := newFSM(zap.NewNop(), znode.Options{}, nil, newWaiters(), newExpiry())
		f.ens.Store(&want)
		snap, err := f.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := snap.(*treeSnapshot).write(&buf); err != nil {
			t.Fatal(err)
		}
		snap.Release()
		var tree bytes.Buffer
		_ = znode.NewTree(znode.Options{}).WriteSnapshot(&tree)
		if want.Level < 2 && !bytes.Equal(buf.Bytes(), tree.Bytes()) {
			t.Fatal("a level-1 snapshot is not the tree's alone")
		}
		g := newFSM(zap.NewNop(), znode.Options{}, nil, newWaiters(), newExpiry())
		if err := g.Restore(io.NopCloser(bytes.NewReader(buf.Bytes()))); err != nil {
			t.Fatal(err)
		}
		if got := g.ensemble(); got != want {
			t.Fatalf("restored %+v, want %+v", got, want)
		}
	}
}
