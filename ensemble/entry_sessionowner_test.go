package ensemble

import (
	"bytes"
	"encoding/hex"
	"testing"

	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// TestSessionOwnerEntryGolden: a session owner entry for a member id that
// fits a byte keeps the exact bytes of releases before wide ids (kind 3,
// origin, session, one id byte), which those releases decode during a
// rolling upgrade.
func TestSessionOwnerEntryGolden(t *testing.T) {
	e := sessionOwnerEntry(0x0102030405060708, 255)
	e.Origin = 0x1112131415161718
	var w jute.Writer
	e.encode(&w)
	want := "03" + "1112131415161718" + "0102030405060708" + "ff"
	if got := hex.EncodeToString(w.Buf); got != want {
		t.Fatalf("encoded %s, want %s", got, want)
	}
	if len(w.Buf) > e.encodedSize() {
		t.Fatalf("encoded %d bytes, encodedSize %d", len(w.Buf), e.encodedSize())
	}
}

// TestSessionOwnerEntryRoundTrip: both forms decode to the member id
// written, whichever the id; ids outside 0..255 take the wide kind (6)
// with the id in 8 bytes, and a truncated or padded entry is refused.
func TestSessionOwnerEntryRoundTrip(t *testing.T) {
	for _, c := range []struct {
		member int64
		kind   entryKind
		size   int
	}{
		{0, kindSessionOwner, 18}, {1, kindSessionOwner, 18}, {255, kindSessionOwner, 18},
		{256, kindSessionOwnerWide, 25}, {300, kindSessionOwnerWide, 25}, {-1, kindSessionOwnerWide, 25},
		{-9223372036854775808, kindSessionOwnerWide, 25}, {9223372036854775807, kindSessionOwnerWide, 25},
	} {
		e := sessionOwnerEntry(-42, c.member)
		e.Origin = 7
		var w jute.Writer
		e.encode(&w)
		if e.Kind != c.kind || len(w.Buf) != c.size || e.encodedSize() < c.size || entryKind(w.Buf[0]) != c.kind {
			t.Errorf("member %d: kind %d, %d bytes (encodedSize %d); want kind %d, %d bytes", c.member, e.Kind, len(w.Buf), e.encodedSize(), c.kind, c.size)
			continue
		}
		var dec znode.TxnDecoder
		back, err := decodeEntry(w.Buf, &dec)
		if err != nil || back.Kind != c.kind || back.Session != -42 || back.Member != c.member || back.Origin != 7 {
			t.Errorf("member %d: decoded %+v, %v", c.member, back, err)
		}
		for _, bad := range [][]byte{w.Buf[:len(w.Buf)-1], append(bytes.Clone(w.Buf), 0)} {
			if _, err := decodeEntry(bad, &dec); err == nil {
				t.Errorf("member %d: %d-byte entry decoded", c.member, len(bad))
			}
		}
	}
}
