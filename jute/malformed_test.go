package jute

import (
	"errors"
	"runtime"
	"slices"
	"testing"
)

// TestTruncation: every proper prefix of every record's encoding fails to
// decode with ErrMalformed (and never panics), except where a prefix is
// itself a valid encoding.
func TestTruncation(t *testing.T) {
	for _, tc := range rtCases() {
		b := Marshal(tc.rec)
		for n := 0; n < len(b); n++ {
			if slices.Contains(tc.prefixOK, n) {
				continue
			}
			r := NewReader(b[:n])
			err := tc.fresh().Decode(r)
			if err == nil {
				t.Errorf("%s: prefix of %d/%d bytes decoded without error", tc.name, n, len(b))
				continue
			}
			if !errors.Is(err, ErrMalformed) {
				t.Errorf("%s: prefix %d: error %v does not wrap ErrMalformed", tc.name, n, err)
			}
		}
	}
}

// TestGoldenTruncation cuts every captured request at every offset and
// decodes header and body the way a server does.
func TestGoldenTruncation(t *testing.T) {
	for _, g := range loadGolden(t) {
		if !g.req || g.op == "connect" {
			continue
		}
		for n := 0; n < len(g.data); n++ {
			if _, err := decodeRequest(g.data[:n]); err == nil {
				t.Errorf("%s: prefix of %d/%d bytes decoded", g.name, n, len(g.data))
			}
		}
	}
}

// decodeRequest decodes a request frame strictly, as a server would.
func decodeRequest(b []byte) (Record, error) {
	r := NewReader(b)
	var h RequestHeader
	if err := h.Decode(r); err != nil {
		return nil, err
	}
	rec, ok := NewRequest(h.Type)
	if !ok {
		return nil, errors.New("unknown op")
	}
	if err := rec.Decode(r); err != nil {
		return nil, err
	}
	if r.Remaining() != 0 {
		return nil, ErrMalformed
	}
	return rec, nil
}

// TestAbsurdCounts: huge vector, string and buffer lengths are rejected
// without allocating anything near their size.
func TestAbsurdCounts(t *testing.T) {
	hostile := func(prefix func(w *Writer), n int32) []byte {
		var w Writer
		prefix(&w)
		w.Int(n)
		w.Raw(make([]byte, 64)) // some bytes, far fewer than claimed
		return w.Buf
	}
	none := func(*Writer) {}
	path := func(w *Writer) { w.String("/p") }
	cases := []struct {
		name string
		rec  Record
		b    []byte
	}{
		{"strings", &StringsResponse{}, hostile(none, 0x7fffffff)},
		{"strings 1M", &StringsResponse{}, hostile(none, 1<<20)},
		{"children2", &GetChildren2Response{}, hostile(none, 0x10000000)},
		{"acl", &GetACLResponse{}, hostile(none, 0x7fffffff)},
		{"create acl", &CreateRequest{}, hostile(func(w *Writer) { w.String("/p"); w.Buffer(nil) }, 0x7ffffff0)},
		{"setACL acl", &SetACLRequest{}, hostile(path, 1<<30)},
		{"setWatches", &SetWatches{}, hostile(func(w *Writer) { w.Long(1) }, 0x7fffffff)},
		{"whoAmI", &WhoAmIResponse{}, hostile(none, 0x7fffffff)},
		{"string", &PathRequest{}, hostile(none, 0x7fffffff)},
		{"buffer", &GetDataResponse{}, hostile(none, 0x7fffffff)},
		{"negative count", &StringsResponse{}, hostile(none, -2)},
		{"negative string", &PathRequest{}, hostile(none, -5)},
		{"negative buffer", &AuthPacket{}, hostile(func(w *Writer) { w.Int(0); w.String("digest") }, -100)},
	}
	for _, tc := range cases {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		err := tc.rec.Decode(NewReader(tc.b))
		runtime.ReadMemStats(&after)
		if !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: err = %v, want ErrMalformed", tc.name, err)
		}
		if d := after.TotalAlloc - before.TotalAlloc; d > 64<<10 {
			t.Errorf("%s: allocated %d bytes", tc.name, d)
		}
	}
	// Count itself never trusts a count larger than the input, whatever
	// element size the caller claims.
	for _, minElem := range []int{-1, 0, 1, 8} {
		var w Writer
		w.Int(1000)
		w.Raw(make([]byte, 10))
		r := NewReader(w.Buf)
		if n, _ := r.Count(minElem); n != 0 || r.Err() == nil {
			t.Errorf("Count(%d) accepted %d elements in 10 bytes", minElem, n)
		}
	}
}

// TestMultiLimits: a multi that never ends, or has an unknown op, fails.
func TestMultiLimits(t *testing.T) {
	var w Writer
	for range 3 {
		(&MultiHeader{Type: OpCheck, Err: -1}).Encode(&w)
		(&PathVersionRequest{Path: "/"}).Encode(&w)
	}
	if err := (&MultiRequest{}).Decode(NewReader(w.Buf)); !errors.Is(err, ErrMalformed) {
		t.Errorf("unterminated multi: %v", err)
	}
	for _, op := range []Op{OpMulti, OpSync, OpAuth, OpPing, 0, 99} {
		var w Writer
		(&MultiHeader{Type: op, Err: -1}).Encode(&w)
		(&PathRequest{Path: "/"}).Encode(&w)
		multiEnd.Encode(&w)
		if err := (&MultiRequest{}).Decode(NewReader(w.Buf)); !errors.Is(err, ErrMalformed) {
			t.Errorf("multi with op %d: %v", op, err)
		}
		if err := (&MultiResponse{}).Decode(NewReader(w.Buf)); !errors.Is(err, ErrMalformed) {
			t.Errorf("multi response with type %d: %v", op, err)
		}
	}
}
