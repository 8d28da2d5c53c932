package session

import (
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/zkraft/zkraft/internal/testing/rawclient"
	"github.com/zkraft/zkraft/jute"
)

// queuedBytes is every connection's unwritten reply bytes, counted from
// the connections themselves (not from the Server's own accounting, which
// it also checks).
func queuedBytes(s *Server) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var n int64
	for c := range s.conns {
		c.out.mu.Lock()
		n += c.out.unsentLocked()
		c.out.mu.Unlock()
	}
	return n
}

// heapInUse is the Go heap in use after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// TestAuditNonReadingClientsBoundedBacklog (issue 29, finding 3): clients
// that pipeline getData of a 1 MB node and never read their replies made
// the member queue 64 MiB for each of them. Now each stops being read
// once about MaxUnsentPerConn is queued: the queued bytes and the heap
// stay small, other clients are answered meanwhile, and everything is
// released when they close.
func TestAuditNonReadingClientsBoundedBacklog(t *testing.T) {
	const (
		flooders = 4
		perConn  = 4 << 20 // the per-connection limit and one 1 MB reply, with room
	)
	// The other client's session must outlive a slow start under -race
	// on a busy machine (it sends no pings): 60 s, not rawclient's 3 s.
	ts := startServer(t, func(c *Config) { c.MaxSessionTimeout = time.Minute })
	setup := rawclient.Dial(t, ts.addr)
	setup.ConnectFor(60000)
	setup.Request(1, jute.OpCreate, &jute.CreateRequest{Path: "/big", Data: make([]byte, 1000000), ACL: openACL})
	setup.Request(2, jute.OpCreate, &jute.CreateRequest{Path: "/small", Data: []byte("s"), ACL: openACL})
	for i := 0; i < 2; i++ {
		if h := setup.Reply(nil); h.Err != jute.OK {
			t.Fatalf("create: %+v", h)
		}
	}
	base := heapInUse()

	var wg sync.WaitGroup
	clients := make([]*rawclient.Client, flooders)
	for i := range clients {
		clients[i] = rawclient.Dial(t, ts.addr)
		clients[i].Connect(false)
		wg.Add(1)
		go func(c *rawclient.Client) {
			defer wg.Done()
			floodGetData(c, "/big", false, 300, 1, 3*time.Second)
		}(clients[i])
	}

	var peakQueued int64
	var peakHeap uint64
	deadline := time.Now().Add(3 * time.Second)
	for i := int32(1); time.Now().Before(deadline); i++ {
		start := time.Now()
		setup.Request(10+i, jute.OpGetData, &jute.PathWatchRequest{Path: "/small"})
		if h := setup.Reply(nil); h.Err != jute.OK || h.Xid != 10+i {
			t.Fatalf("getData of another client: %+v", h)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("another client waited %v behind the flooders", d)
		}
		peakQueued = max(peakQueued, queuedBytes(ts.srv))
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		peakHeap = max(peakHeap, ms.HeapInuse)
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("peak queued %d MiB, peak heap in use %d MiB over %d MiB", peakQueued>>20, (peakHeap-min(peakHeap, base))>>20, base>>20)
	if limit := int64(flooders * perConn); peakQueued > limit {
		t.Errorf("%d non-reading clients had %d MiB queued, want at most %d MiB", flooders, peakQueued>>20, limit>>20)
	}
	if limit := uint64(flooders*perConn + 32<<20); peakHeap > base+limit {
		t.Errorf("heap in use grew by %d MiB, want at most %d MiB", (peakHeap-base)>>20, limit>>20)
	}

	for _, c := range clients {
		c.Conn.Close()
	}
	wg.Wait()
	released := time.Now().Add(5 * time.Second)
	for queuedBytes(ts.srv) != 0 || ts.srv.backlog.total.Load() != 0 || ts.srv.backlog.conns.Load() != 0 {
		if time.Now().After(released) {
			t.Fatalf("after the flooders closed, %d bytes are still queued (accounted %d in %d connections)",
				queuedBytes(ts.srv), ts.srv.backlog.total.Load(), ts.srv.backlog.conns.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if after := heapInUse(); after > base+16<<20 {
		t.Errorf("heap in use %d MiB after the flooders closed, %d MiB before", after>>20, base>>20)
	}
}

// TestAuditPausedReaderLosesNothing: a client that stops reading while it
// pipelines requests is paused, not cut off; once it reads again it gets
// every reply, in order, and the watch events its reads set.
func TestAuditPausedReaderLosesNothing(t *testing.T) {
	// While it is paused the client's requests are not read, so nothing
	// touches its session: under -race on a busy machine the pause (the
	// other client's connect and setData) outlasted rawclient's 3 s
	// session, which expired. 60 s sessions, as the backlog test's.
	ts := startServer(t, func(c *Config) { c.MaxSessionTimeout = time.Minute })
	c := rawclient.Dial(t, ts.addr)
	c.ConnectFor(60000)
	c.Request(1, jute.OpCreate, &jute.CreateRequest{Path: "/big", Data: make([]byte, 1000000), ACL: openACL})
	if h := c.Reply(nil); h.Err != jute.OK {
		t.Fatalf("create: %+v", h)
	}
	const n = 40
	go floodGetData(c, "/big", true, n, 2, 10*time.Second)
	time.Sleep(500 * time.Millisecond) // the reader pauses with a few queued
	if q := queuedBytes(ts.srv); q > 4<<20 {
		t.Fatalf("%d MiB queued for a client that does not read", q>>20)
	}
	if ts.srv.backlog.stalls.Load() == 0 {
		t.Fatal("the reader of a client that does not read never paused")
	}
	other := rawclient.Dial(t, ts.addr)
	other.Connect(false)
	other.Request(1, jute.OpSetData, &jute.SetDataRequest{Path: "/big", Data: []byte("x"), Version: -1})
	if h := other.Reply(nil); h.Err != jute.OK {
		t.Fatalf("setData: %+v", h)
	}
	var got []int32
	sawEvent := false
	for len(got) < n || !sawEvent {
		h := c.Reply(nil)
		if h.Xid == jute.XidNotification {
			sawEvent = true
			continue
		}
		if h.Err != jute.OK {
			t.Fatalf("reply %+v", h)
		}
		if want := int32(2 + len(got)); h.Xid != want {
			t.Fatalf("reply xid %d, want %d (after %v)", h.Xid, want, got)
		}
		got = append(got, h.Xid)
	}
}
