package session

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/zkraft/zkraft/internal/testing/rawclient"
	"github.com/zkraft/zkraft/jute"
)

// TestLargeRepliesAreWrittenAChunkAtATime: a multiRead of a few
// kilobytes may ask for tens of megabytes (the same large directory
// listed 1,700 times: 61 MB). Its reply, queued lazily, used to be
// encoded whole into the connection's scratch buffer and held there until
// the client took it, so clients that sent one each and did not read held
// the member's memory (16 of them: 1.6 GiB of heap). The writer now
// encodes a large reply a chunk at a time, each written before the next
// is encoded: while such clients do not read, the member allocates a
// small fraction of their replies, and a client that reads gets every
// byte, framed exactly.
func TestLargeRepliesAreWrittenAChunkAtATime(t *testing.T) {
	var waits waitLog
	ts := seededBigDir(t, 2000, &waits) // /big: 2,000 names of 14 bytes, 36 KB listed
	const (
		clients = 4
		ops     = 1700 // a 30 KB request, a 61 MB reply (maxOutbound is 64 MiB)
	)
	mr := &jute.MultiRequest{}
	for range ops {
		mr.Ops = append(mr.Ops, jute.MultiOp{Type: jute.OpGetChildren, Req: &jute.PathWatchRequest{Path: "/big"}})
	}
	mr.Ops = append(mr.Ops, jute.MultiOp{Type: jute.OpGetData, Req: &jute.PathWatchRequest{Path: "/absent"}})
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	cs := make([]*rawclient.Client, clients)
	for i := range cs {
		cs[i] = rawclient.Dial(t, ts.addr)
		cs[i].Connect(false)
		cs[i].Request(1, jute.OpMultiRead, mr)
	}
	// Until every writer has met a full socket (the replies cannot all
	// fit): then nothing more is encoded until the clients read.
	time.Sleep(time.Second)
	runtime.ReadMemStats(&after)
	replies := uint64(clients * ops * 2000 * 18)
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("%d unread replies of %d MB: %d MB allocated", clients, replies/clients>>20, allocated>>20)
	if allocated > replies/8 {
		t.Errorf("%d clients that do not read their multiRead replies (%d MB in all) made the member allocate %d MB",
			clients, replies>>20, allocated>>20)
	}
	frames := make([][]byte, clients)
	for i, c := range cs {
		_ = c.Conn.SetReadDeadline(time.Now().Add(time.Minute))
		frame, err := jute.ReadFrame(c.Reader, nil, 1<<27) // past rawclient's 16 MiB
		if err != nil {
			t.Fatal(err)
		}
		frames[i] = frame
	}
	for _, frame := range frames {
		r := jute.NewReader(frame)
		var h jute.ReplyHeader
		var resp jute.MultiResponse
		if h.Decode(r) != nil || h.Err != jute.OK || resp.Decode(r) != nil || len(resp.Results) != ops+1 {
			t.Fatalf("multiRead: %+v, %d results", h, len(resp.Results))
		}
		if r.Remaining() != 0 {
			t.Fatalf("%d bytes after the reply in its frame", r.Remaining())
		}
		for i, r := range resp.Results[:ops] {
			names := r.Resp.(*jute.StringsResponse).Strings
			if r.Type != jute.OpGetChildren || len(names) != 2000 || names[1999] != "child-00001999" {
				t.Fatalf("result %d: type %v, %d names", i, r.Type, len(names))
			}
		}
		if r := resp.Results[ops]; r.Type != jute.OpError || r.Err != jute.ErrNoNode {
			t.Fatalf("last result: %+v", r)
		}
	}
}

// TestMultiReadSizeIsExact: a multiRead's reply is streamed after its
// length, so the size multiRead computes must be the encoded length, and
// the streamed body MultiResponse's encoding, byte for byte, whatever the
// results (data, none, a small and an indexed directory, errors) and
// wherever the chunks fall.
func TestMultiReadSizeIsExact(t *testing.T) {
	b := newTreeBuilder(t)
	tree, create := b.tree, b.create
	create("/d", []byte("some data"), openACL)
	create("/nil", nil, openACL)
	create("/secret", []byte("x"), []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "digest", ID: "u:h"}}})
	create("/small", nil, openACL)
	create("/small/a", nil, openACL)
	create("/wide", nil, openACL)
	for i := range 3000 { // past the name index's threshold
		create(fmt.Sprintf("/wide/n%d", i), nil, openACL)
	}
	req := &jute.MultiRequest{}
	for _, op := range []struct {
		op   jute.Op
		path string
	}{
		{jute.OpGetData, "/d"}, {jute.OpGetChildren, "/wide"}, {jute.OpGetData, "/nil"},
		{jute.OpGetData, "/absent"}, {jute.OpGetChildren, "/small"}, {jute.OpGetData, "/secret"},
		{jute.OpGetChildren, "/absent"}, {jute.OpGetChildren, "/wide"}, {jute.OpGetChildren, "/small/a"},
	} {
		req.Ops = append(req.Ops, jute.MultiOp{Type: op.op, Req: &jute.PathWatchRequest{Path: op.path}})
	}
	resp, size, code := multiRead(tree, req, nil, nil)
	if code != jute.OK {
		t.Fatal(code)
	}
	var whole jute.Writer
	resp.Encode(&whole)
	if size != whole.Len() {
		t.Errorf("multiRead sized its reply %d bytes, it encodes to %d", size, whole.Len())
	}
	var streamed, w jute.Writer
	spills := 0
	multiReadBody(resp.Results)(&w, func() {
		if spills++; spills%7 == 0 {
			streamed.Raw(w.Buf)
			w.Reset()
		}
	})
	streamed.Raw(w.Buf)
	if !bytes.Equal(streamed.Buf, whole.Buf) {
		t.Errorf("the streamed body (%d bytes) is not MultiResponse's encoding (%d bytes)", streamed.Len(), whole.Len())
	}
}
