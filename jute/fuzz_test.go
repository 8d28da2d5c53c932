package jute

import (
	"bytes"
	"errors"
	"testing"
)

// allRequestOps are the opcodes NewRequest knows.
var allRequestOps = []Op{OpCreate, OpDelete, OpExists, OpGetData, OpSetData, OpGetACL, OpSetACL, OpGetChildren,
	OpSync, OpPing, OpGetChildren2, OpCheck, OpMulti, OpCreate2, OpReconfig, OpCheckWatches, OpRemoveWatches,
	OpCreateContainer, OpDeleteContainer, OpCreateTTL, OpMultiRead, OpAuth, OpSetWatches, OpGetEphemerals,
	OpGetAllChildrenNumber, OpSetWatches2, OpAddWatch, OpWhoAmI, OpCloseSession}

// seedGolden adds every golden frame accepted by keep to f's corpus.
func seedGolden(f *testing.F, keep func(golden) bool) {
	for _, g := range loadGolden(f) {
		if keep(g) {
			f.Add(g.data)
		}
	}
}

// checkStable re-encodes a decoded record and decodes that again: the
// second encoding must equal the first (decode∘encode is a fixed point even
// where the input was not canonical: non-1 booleans, null strings).
func checkStable(t *testing.T, first []byte, fresh func() Record) {
	again := fresh()
	if err := Unmarshal(first, again); err != nil {
		t.Fatalf("re-decoding our own encoding %x: %v", first, err)
	}
	if second := Marshal(again); !bytes.Equal(first, second) {
		t.Fatalf("encoding not stable:\n%x\n%x", first, second)
	}
}

// FuzzDecodeRequest decodes a request frame payload (header + body) the way
// the server does, for every opcode. It must never panic, fail only with
// ErrMalformed, re-encode what it accepts stably, and agree with
// WellFormed.
func FuzzDecodeRequest(f *testing.F) {
	seedGolden(f, func(g golden) bool { return g.req && g.op != "connect" })
	for _, op := range allRequestOps {
		var w Writer
		(&RequestHeader{Xid: 1, Type: op}).Encode(&w)
		f.Add(w.Buf)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewReader(data)
		var h RequestHeader
		if err := h.Decode(r); err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("header error %v does not wrap ErrMalformed", err)
			}
			return
		}
		body := data[r.Offset():]
		rec, ok := NewRequest(h.Type)
		if !ok {
			if WellFormed(h.Type, body) {
				t.Fatalf("op %d without a request body is well formed", h.Type)
			}
			return
		}
		if err := rec.Decode(r); err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("op %d: error %v does not wrap ErrMalformed", h.Type, err)
			}
			if WellFormed(h.Type, body) {
				t.Fatalf("op %d: %x is well formed but does not decode: %v", h.Type, body, err)
			}
			return
		}
		if !WellFormed(h.Type, body) {
			t.Fatalf("op %d: %x decodes but is not well formed", h.Type, body)
		}
		if r.Offset()+r.Remaining() != len(data) {
			t.Fatalf("reader offset %d + remaining %d != %d", r.Offset(), r.Remaining(), len(data))
		}
		checkStable(t, Marshal(rec), func() Record { rec, _ := NewRequest(h.Type); return rec })
	})
}

// FuzzDecodeResponse decodes a reply body for an opcode chosen by the first
// byte, as a client (or our tests) would.
func FuzzDecodeResponse(f *testing.F) {
	for _, g := range loadGolden(f) {
		if g.req || g.op == "connect" || g.op == "notification" || len(g.data) < ReplyHeaderSize {
			continue
		}
		if op, ok := opByName[g.op]; ok {
			for i, o := range allRequestOps {
				if o == op {
					f.Add(append([]byte{byte(i)}, g.data[ReplyHeaderSize:]...))
				}
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		op := allRequestOps[int(data[0])%len(allRequestOps)]
		rec, _ := NewResponse(op)
		if err := Unmarshal(data[1:], rec); err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("op %d: error %v does not wrap ErrMalformed", op, err)
			}
			return
		}
		checkStable(t, Marshal(rec), func() Record { rec, _ := NewResponse(op); return rec })
	})
}

// FuzzConnectRequest decodes the first frame of a connection (and, since it
// shares the shape, a ConnectResponse).
func FuzzConnectRequest(f *testing.F) {
	seedGolden(f, func(g golden) bool { return g.op == "connect" })
	f.Add(Marshal(&ConnectRequest{Passwd: nil}))
	f.Fuzz(func(t *testing.T, data []byte) {
		var req ConnectRequest
		if err := Unmarshal(data, &req); err == nil {
			b := Marshal(&req)
			if len(b) != len(data) {
				t.Fatalf("accepted %d bytes, re-encoded %d", len(data), len(b))
			}
			checkStable(t, b, func() Record { return &ConnectRequest{} })
		} else if !errors.Is(err, ErrMalformed) {
			t.Fatalf("error %v does not wrap ErrMalformed", err)
		}
		var resp ConnectResponse
		if err := Unmarshal(data, &resp); err == nil {
			checkStable(t, Marshal(&resp), func() Record { return &ConnectResponse{} })
		} else if !errors.Is(err, ErrMalformed) {
			t.Fatalf("error %v does not wrap ErrMalformed", err)
		}
	})
}

// FuzzReadFrame reads frames from a stream until an error: each frame must
// respect the limit and be the bytes that followed its prefix.
func FuzzReadFrame(f *testing.F) {
	for _, g := range loadGolden(f) {
		f.Add(frameOf(int32(len(g.data)), g.data))
	}
	f.Add(frameOf(-1, nil))
	f.Add(frameOf(DefaultMaxBuffer+1, nil))
	f.Add(append(frameOf(1, []byte{7}), frameOf(0, nil)...))
	const limit = 4096
	f.Fuzz(func(t *testing.T, data []byte) {
		in := bytes.NewReader(data)
		var buf []byte
		off := 0
		for {
			p, err := ReadFrame(in, buf, limit)
			if err != nil {
				return
			}
			if len(p) > limit {
				t.Fatalf("frame of %d bytes over limit %d", len(p), limit)
			}
			if !bytes.Equal(p, data[off+4:off+4+len(p)]) {
				t.Fatalf("frame at %d differs from input", off)
			}
			off += 4 + len(p)
			buf = p
		}
	})
}
