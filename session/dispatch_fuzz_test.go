package session

import (
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/zkraft/zkraft/internal/testing/rawclient"
	"github.com/zkraft/zkraft/jute"
)

var (
	fuzzOnce   sync.Once
	fuzzServer *testServer
)

// seedFrames returns request frames (without length prefix) to start from:
// every captured client frame under testdata/frames plus hand-built ones.
func seedFrames(t testing.TB) [][]byte {
	var seeds [][]byte
	build := func(xid int32, op jute.Op, body jute.Record) {
		var w jute.Writer
		h := jute.RequestHeader{Xid: xid, Type: op}
		h.Encode(&w)
		if body != nil {
			body.Encode(&w)
		}
		seeds = append(seeds, w.Buf)
	}
	build(1, jute.OpCreate, &jute.CreateRequest{Path: "/f", Data: []byte("d"), ACL: openACL})
	build(2, jute.OpCreate2, &jute.CreateRequest{Path: "/f/s", ACL: openACL, Flags: jute.FlagEphemeralSequential})
	build(3, jute.OpSetData, &jute.SetDataRequest{Path: "/f", Data: []byte("x"), Version: -1})
	build(4, jute.OpGetChildren2, &jute.PathWatchRequest{Path: "/", Watch: true})
	build(5, jute.OpMulti, &jute.MultiRequest{Ops: []jute.MultiOp{
		{Type: jute.OpCreate, Req: &jute.CreateRequest{Path: "/m", ACL: openACL}},
		{Type: jute.OpCheck, Req: &jute.PathVersionRequest{Path: "/m", Version: 0}},
		{Type: jute.OpDelete, Req: &jute.PathVersionRequest{Path: "/m", Version: -1}},
	}})
	build(6, jute.OpSetACL, &jute.SetACLRequest{Path: "/f", ACL: openACL, Version: -1})
	build(jute.XidSetWatches, jute.OpSetWatches2, &jute.SetWatches{V2: true, DataWatches: []string{"/f"}, PersistentRecursive: []string{"/"}})
	build(7, jute.OpAddWatch, &jute.PathTypeRequest{Path: "/f", Type: 1})
	build(jute.XidAuth, jute.OpAuth, &jute.AuthPacket{Scheme: "digest", Auth: []byte("u:p")})
	build(8, jute.OpDelete, &jute.PathVersionRequest{Path: "/f", Version: -1})
	files, _ := filepath.Glob("../testdata/frames/*/req-*.bin")
	for _, f := range files {
		if b, err := os.ReadFile(f); err == nil && len(b) > 4 {
			seeds = append(seeds, b[4:]) // captured with their length prefix
		}
	}
	return seeds
}

// FuzzDispatch sends arbitrary frames on an established session. Whatever
// they hold, the server must neither crash nor harm another session.
func FuzzDispatch(f *testing.F) {
	for _, s := range seedFrames(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		fuzzOnce.Do(func() { fuzzServer = startSharedServer() })
		c := rawclient.Dial(t, fuzzServer.addr)
		c.Connect(false)
		var w jute.Writer
		at := jute.BeginFrame(&w)
		w.Raw(frame)
		jute.EndFrame(&w, at)
		c.SendRaw(w.Buf)
		// Drain whatever comes back until the server answers a ping or
		// closes; either is fine.
		c.Request(jute.XidPing, jute.OpPing, nil)
		_ = c.Conn.SetReadDeadline(time.Now().Add(3 * time.Second))
		for {
			b, err := jute.ReadFrame(c.Reader, nil, 1<<24)
			if err != nil {
				if ne, ok := err.(net.Error); ok && ne.Timeout() {
					t.Fatal("server neither answered nor closed")
				}
				break
			}
			var h jute.ReplyHeader
			if h.Decode(jute.NewReader(b)) == nil && h.Xid == jute.XidPing {
				break
			}
		}
		probe := rawclient.Dial(t, fuzzServer.addr)
		probe.Connect(false)
		probe.Request(1, jute.OpExists, &jute.PathWatchRequest{Path: "/"})
		if h := probe.Reply(nil); h.Err != jute.OK {
			t.Fatalf("server harmed: %+v", h)
		}
	})
}

// startSharedServer starts a server that lives for the whole fuzz run.
func startSharedServer() *testServer {
	dir, err := os.MkdirTemp("", "zkraft-fuzz")
	if err != nil {
		panic(err)
	}
	tb := &fuzzTB{dir: dir}
	return startServer(tb)
}

// fuzzTB is the minimal testing.TB for a server shared across fuzz inputs;
// its cleanups never run (the process ends with the fuzz run).
type fuzzTB struct {
	testing.TB
	dir string
}

func (f *fuzzTB) Helper()               {}
func (f *fuzzTB) TempDir() string       { return f.dir }
func (f *fuzzTB) Cleanup(func())        {}
func (f *fuzzTB) Fatal(args ...any)     { panic(args) }
func (f *fuzzTB) Fatalf(string, ...any) { panic("fatal") }
