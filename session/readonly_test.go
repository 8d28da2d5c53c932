package session

import (
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkraft/zkraft/backend"
	"github.com/zkraft/zkraft/ensemble"
	"github.com/zkraft/zkraft/internal/testing/testport"
	"github.com/zkraft/zkraft/jute"
)

// TestReadOnlyModeWithoutQuorum stops two of three members and checks that
// the survivor serves read-only clients only.
func TestReadOnlyModeWithoutQuorum(t *testing.T) {
	nodes := startEnsemble(t, 3)
	if nodes == nil {
		return
	}
	survivor := nodes[0]
	srv := New(Config{TickTime: 200 * time.Millisecond, ReadOnlyMode: true}, survivor)
	addr := serveOn(t, srv)

	rw := dialRaw(t, addr)
	rw.connect(true)
	rw.request(1, jute.OpCreate, &jute.CreateRequest{Path: "/ro", Data: []byte("x"), ACL: openACL})
	if h := rw.reply(nil); h.Err != jute.OK {
		t.Fatalf("create with quorum: %+v", h)
	}

	loseQuorum(t, survivor, nodes[1], nodes[2])
	rw.expectClosed() // read-write connections are dropped when the quorum goes

	plain := dialRaw(t, addr)
	plain.send(&jute.ConnectRequest{TimeOut: 3000, Passwd: make([]byte, 16), HasReadOnly: true})
	plain.expectClosed() // a client that did not ask for read-only goes elsewhere

	ro := dialRaw(t, addr)
	ro.send(&jute.ConnectRequest{TimeOut: 3000, Passwd: make([]byte, 16), ReadOnly: true, HasReadOnly: true})
	var resp jute.ConnectResponse
	if err := jute.Unmarshal(ro.frame(), &resp); err != nil {
		t.Fatal(err)
	}
	if !resp.ReadOnly || resp.SessionID == 0 {
		t.Fatalf("read-only handshake: %+v", resp)
	}
	ro.request(1, jute.OpGetData, &jute.PathWatchRequest{Path: "/ro"})
	var get jute.GetDataResponse
	if h := ro.reply(&get); h.Err != jute.OK || string(get.Data) != "x" {
		t.Fatalf("read-only read: %+v %q", h, get.Data)
	}
	ro.request(2, jute.OpSetData, &jute.SetDataRequest{Path: "/ro", Data: []byte("y"), Version: -1})
	ro.request(3, jute.OpSync, &jute.PathRequest{Path: "/"})
	// check and deleteContainer are writes to ZooKeeper's
	// ReadOnlyRequestProcessor too.
	ro.request(4, jute.OpCheck, &jute.PathVersionRequest{Path: "/ro", Version: -1})
	ro.request(5, jute.OpDeleteContainer, &jute.PathRequest{Path: "/ro"})
	ro.request(6, jute.OpExists, &jute.PathWatchRequest{Path: "/ro"})
	for _, want := range []struct {
		xid  int32
		code jute.ErrCode
	}{{2, jute.ErrNotReadOnly}, {3, jute.ErrNotReadOnly}, {4, jute.ErrNotReadOnly}, {5, jute.ErrNotReadOnly}, {6, jute.OK}} {
		if h := ro.reply(nil); h.Xid != want.xid || h.Err != want.code {
			t.Fatalf("got %+v, want xid %d code %v", h, want.xid, want.code)
		}
	}
	// What isro and srvr report (package operator's words).
	if !srv.Serving() || srv.Mode() != "read-only" {
		t.Fatalf("serving %v, mode %q; want a read-only member serving", srv.Serving(), srv.Mode())
	}
}

// startEnsemble opens an in-process ensemble of n members on loopback
// ports, closed when the test ends; nil if a member failed to open.
func startEnsemble(t *testing.T, n int) []*ensemble.Node {
	t.Helper()
	var peers []backend.Peer
	for i := 1; i <= n; i++ {
		// Listening on :0 and closing could hand two members one port.
		addr, err := testport.Addr()
		if err != nil {
			t.Fatal(err)
		}
		peers = append(peers, backend.Peer{ID: uint8(i), Addr: addr})
	}
	nodes := make([]*ensemble.Node, n)
	var wg sync.WaitGroup
	for i := range nodes {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			n, err := ensemble.Open(ensemble.Config{ID: uint8(i + 1), DataDir: t.TempDir(), TickTime: 200 * time.Millisecond, Peers: peers})
			if err != nil {
				t.Error(err)
				return
			}
			nodes[i] = n
		}(i)
	}
	wg.Wait()
	t.Cleanup(func() {
		for _, n := range nodes {
			if n != nil {
				n.Close()
			}
		}
	})
	if t.Failed() {
		return nil
	}
	return nodes
}

// serveOn serves srv on a loopback port until the test ends and returns
// its address.
func serveOn(t *testing.T, srv *Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// loseQuorum closes others and waits until survivor knows it has no
// quorum.
func loseQuorum(t *testing.T, survivor *ensemble.Node, others ...*ensemble.Node) {
	t.Helper()
	for _, n := range others {
		n.Close()
	}
	deadline := time.Now().Add(10 * time.Second)
	for survivor.HasQuorum() {
		if time.Now().After(deadline) {
			t.Fatal("survivor still believes it has a quorum")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// quorumSwitch is a Backend whose quorum a test turns off and on.
type quorumSwitch struct {
	*ensemble.Node
	lost atomic.Bool
}

func (q *quorumSwitch) HasQuorum() bool { return !q.lost.Load() && q.Node.HasQuorum() }

// TestQuorumBlipKeepsConnections: an election after a leader's death
// takes tens of milliseconds, and a member that sampled its quorum inside
// it closed every read-write connection (in an overload run, all 32,000
// sessions reconnected where only the dead member's third had to). A
// quorum gone for less than the sampling interval keeps the connections;
// one gone for longer still closes them.
func TestQuorumBlipKeepsConnections(t *testing.T) {
	node, err := ensemble.Open(ensemble.Config{DataDir: t.TempDir(), TickTime: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	q := &quorumSwitch{Node: node}
	srv := New(Config{TickTime: 200 * time.Millisecond, ReadOnlyMode: true}, q)
	addr := serveOn(t, srv)
	t.Cleanup(func() { node.Close() })
	c := dialRaw(t, addr)
	c.connect(true)
	ping := func(xid int32) {
		t.Helper()
		c.request(xid, jute.OpExists, &jute.PathWatchRequest{Path: "/"})
		if h := c.reply(nil); h.Err != jute.OK || h.Xid != xid {
			t.Fatalf("exists: %+v", h)
		}
	}
	ping(1)
	for i := range 10 { // blips of 30 ms, well inside the 100 ms sampling interval
		q.lost.Store(true)
		time.Sleep(30 * time.Millisecond)
		q.lost.Store(false)
		time.Sleep(150 * time.Millisecond)
		ping(int32(i + 2))
	}
	q.lost.Store(true) // gone for good
	c.expectClosed()
}
