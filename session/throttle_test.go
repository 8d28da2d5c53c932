package session

import (
	"testing"

	"github.com/zkraft/zkraft/internal/testing/rawclient"
	"github.com/zkraft/zkraft/jute"
)

// floodWrites pipelines n setData requests on one connection in a single
// burst, reads every reply, and checks they come back in order and OK.
func floodWrites(t *testing.T, ts *testServer, n int) {
	t.Helper()
	c := rawclient.Dial(t, ts.addr)
	c.Connect(false)
	c.Request(1, jute.OpCreate, &jute.CreateRequest{Path: "/flood", ACL: openACL})
	if h := c.Reply(nil); h.Err != jute.OK {
		t.Fatalf("create: %v", h.Err)
	}
	var w jute.Writer
	for i := 0; i < n; i++ {
		at := jute.BeginFrame(&w)
		(&jute.RequestHeader{Xid: int32(2 + i), Type: jute.OpSetData}).Encode(&w)
		(&jute.SetDataRequest{Path: "/flood", Data: []byte("0123456789"), Version: -1}).Encode(&w)
		jute.EndFrame(&w, at)
	}
	sent := make(chan error, 1)
	go func() {
		_, err := c.Conn.Write(w.Buf) // blocks while the server holds its reads
		sent <- err
	}()
	for i := 0; i < n; i++ {
		h := c.Reply(nil)
		if h.Xid != int32(2+i) || h.Err != jute.OK {
			t.Fatalf("reply %d: xid %d err %v", i, h.Xid, h.Err)
		}
	}
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
}

// TestOutstandingLimit: with globalOutstandingLimit a client pipelining
// writes faster than they commit is held back (the member stops reading
// its connection), so no more than the limit and one are in flight at
// once, and every write still completes in order. Without the limit the
// same burst puts thousands in flight.
func TestOutstandingLimit(t *testing.T) {
	const n, limit = 20000, 16
	ts := startServer(t, func(c *Config) { c.OutstandingLimit = limit })
	floodWrites(t, ts, n)
	if peak := ts.srv.stats.outstandingPeak.Load(); peak > limit+1 {
		t.Errorf("%d writes in flight at once, limit %d", peak, limit)
	}
	if ts.srv.thr.stalls.Load() == 0 {
		t.Error("the reader was never held")
	}
	if out := ts.srv.stats.outstanding.Load(); out != 0 {
		t.Errorf("%d writes still counted in flight", out)
	}

	free := startServer(t, func(c *Config) { c.OutstandingLimit = -1 })
	floodWrites(t, free, n)
	if peak := free.srv.stats.outstandingPeak.Load(); peak <= limit+1 {
		t.Errorf("without a limit only %d writes were in flight at once: the burst proves nothing", peak)
	} else {
		t.Logf("in flight at once: %d with no limit, %d with limit %d",
			peak, ts.srv.stats.outstandingPeak.Load(), limit)
	}
}

// TestOutstandingLimitDefault: ZooKeeper's default, 1000.
func TestOutstandingLimitDefault(t *testing.T) {
	ts := startServer(t)
	if ts.srv.thr.limit != DefaultOutstandingLimit || DefaultOutstandingLimit != 1000 {
		t.Fatalf("limit %d", ts.srv.thr.limit)
	}
}
