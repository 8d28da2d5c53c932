package session

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/zkraft/zkraft/internal/testing/rawclient"
	"github.com/zkraft/zkraft/jute"
)

// observation is what a RequestObserver is told of one request.
type observation struct {
	op    jute.Op
	write bool
}

// recordingObserver is a RequestObserver that keeps what it is told.
type recordingObserver struct {
	mu  sync.Mutex
	got []observation
}

func (o *recordingObserver) ObserveRequest(op jute.Op, write bool, _ time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.got = append(o.got, observation{op, write})
}

func (o *recordingObserver) list() []observation {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.got)
}

// TestRequestObserverKinds: Config.Requests hears of each answered request
// once: a transaction (create) as a write, ZooKeeper's updatelatency; a
// read and a sync as reads, its readlatency (ZooKeeper answers sync
// without a transaction, though zkraft's goes through the log); and a
// linearizable read once, its barrier not told.
func TestRequestObserverKinds(t *testing.T) {
	obs := &recordingObserver{}
	ts := startServer(t, func(c *Config) { c.Requests = obs; c.LinearizableReads = true })
	c := rawclient.Dial(t, ts.addr)
	c.Connect(false)
	c.Request(1, jute.OpCreate, &jute.CreateRequest{Path: "/a", ACL: openACL})
	c.Request(2, jute.OpGetData, &jute.PathWatchRequest{Path: "/a"})
	c.Request(3, jute.OpSync, &jute.PathRequest{Path: "/a"})
	for i := 0; i < 3; i++ {
		if h := c.Reply(nil); h.Err != jute.OK {
			t.Fatalf("reply %d: %v", h.Xid, h.Err)
		}
	}
	want := []observation{{jute.OpCreate, true}, {jute.OpGetData, false}, {jute.OpSync, false}}
	deadline := time.Now().Add(5 * time.Second)
	for len(obs.list()) < len(want) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // nothing more comes
	if got := obs.list(); !slices.Equal(got, want) {
		t.Fatalf("observed %+v, want %+v", got, want)
	}
}
