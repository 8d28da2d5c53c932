package jute

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// goldenDir holds frames captured between real clients (go-zookeeper/zk and
// the Apache Java client 3.8) and Apache ZooKeeper 3.8; see its README.md.
const goldenDir = "../testdata/frames"

// opByName maps the op names used in golden file names to opcodes.
var opByName = map[string]Op{
	"create": OpCreate, "delete": OpDelete, "exists": OpExists, "getData": OpGetData,
	"setData": OpSetData, "getACL": OpGetACL, "setACL": OpSetACL, "getChildren": OpGetChildren,
	"sync": OpSync, "ping": OpPing, "getChildren2": OpGetChildren2, "check": OpCheck, "multi": OpMulti,
	"create2": OpCreate2, "reconfig": OpReconfig, "checkWatches": OpCheckWatches,
	"removeWatches": OpRemoveWatches, "createContainer": OpCreateContainer,
	"deleteContainer": OpDeleteContainer, "createTTL": OpCreateTTL, "multiRead": OpMultiRead,
	"auth": OpAuth, "setWatches": OpSetWatches, "getEphemerals": OpGetEphemerals,
	"getAllChildrenNumber": OpGetAllChildrenNumber, "setWatches2": OpSetWatches2,
	"addWatch": OpAddWatch, "whoAmI": OpWhoAmI, "closeSession": OpCloseSession,
}

// golden is one captured frame payload (no length prefix).
type golden struct {
	name string // client/file
	req  bool
	op   string // op name from the file name: "connect", "notification", or a key of opByName
	data []byte
}

func loadGolden(t testing.TB) []golden {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(goldenDir, "*", "*.bin"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden frames in %s: %v", goldenDir, err)
	}
	var out []golden
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		base := strings.TrimSuffix(filepath.Base(f), ".bin")
		dir, rest, _ := strings.Cut(base, "-")
		op, _, _ := strings.Cut(rest, "-")
		out = append(out, golden{
			name: filepath.Base(filepath.Dir(f)) + "/" + base,
			req:  dir == "req",
			op:   op,
			data: data,
		})
	}
	return out
}

// decodeGolden decodes g into records (header and body, or the single
// connect record) and returns their re-encoding.
func decodeGolden(t *testing.T, g golden) (hdr, body Record) {
	t.Helper()
	r := NewReader(g.data)
	switch {
	case g.op == "connect" && g.req:
		body = &ConnectRequest{}
	case g.op == "connect":
		body = &ConnectResponse{}
	case g.req:
		h := &RequestHeader{}
		if err := h.Decode(r); err != nil {
			t.Fatal(err)
		}
		if want := opByName[g.op]; h.Type != want {
			t.Fatalf("header op %d, file name says %s (%d)", h.Type, g.op, want)
		}
		var ok bool
		if body, ok = NewRequest(h.Type); !ok {
			t.Fatalf("NewRequest(%d) = false", h.Type)
		}
		hdr = h
	default:
		h := &ReplyHeader{}
		if err := h.Decode(r); err != nil {
			t.Fatal(err)
		}
		hdr = h
		switch {
		case h.Xid == XidNotification:
			body = &WatcherEvent{}
		case h.Err != OK:
			body = Empty{}
		default:
			var ok bool
			if body, ok = NewResponse(opByName[g.op]); !ok {
				t.Fatalf("NewResponse(%s) = false", g.op)
			}
		}
	}
	if err := body.Decode(r); err != nil {
		t.Fatalf("decode %T: %v", body, err)
	}
	if r.Remaining() != 0 {
		t.Fatalf("%d bytes left after %T", r.Remaining(), body)
	}
	return hdr, body
}

// TestGoldenFrames decodes every captured frame and re-encodes it byte for byte.
func TestGoldenFrames(t *testing.T) {
	for _, g := range loadGolden(t) {
		t.Run(g.name, func(t *testing.T) {
			hdr, body := decodeGolden(t, g)
			var w Writer
			if hdr != nil {
				hdr.Encode(&w)
			}
			body.Encode(&w)
			if !bytes.Equal(w.Buf, g.data) {
				t.Fatalf("re-encoding differs\n got %x\nwant %x", w.Buf, g.data)
			}
			// and through the framing layer
			var fw Writer
			at := BeginFrame(&fw)
			fw.Raw(g.data)
			EndFrame(&fw, at)
			p, err := ReadFrame(bytes.NewReader(fw.Buf), nil, DefaultMaxBuffer)
			if err != nil || !bytes.Equal(p, g.data) {
				t.Fatalf("ReadFrame = %x, %v", p, err)
			}
		})
	}
}
