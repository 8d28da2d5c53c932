package session

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkraft/zkraft/ensemble"
	"github.com/zkraft/zkraft/internal/testing/rawclient"
	"github.com/zkraft/zkraft/internal/testing/testmember"
	"github.com/zkraft/zkraft/jute"
)

// TestReadOnlyModeWithoutQuorum stops two of three members and checks that
// the survivor serves read-only clients only.
func TestReadOnlyModeWithoutQuorum(t *testing.T) {
	nodes := testmember.Ensemble(t, 3)
	if nodes == nil {
		return
	}
	survivor := nodes[0]
	srv := New(Config{TickTime: 200 * time.Millisecond, ReadOnlyMode: true}, survivor)
	addr := testmember.Serve(t, srv)

	rw := rawclient.Dial(t, addr)
	rw.Connect(true)
	rw.Request(1, jute.OpCreate, &jute.CreateRequest{Path: "/ro", Data: []byte("x"), ACL: openACL})
	if h := rw.Reply(nil); h.Err != jute.OK {
		t.Fatalf("create with quorum: %+v", h)
	}

	testmember.LoseQuorum(t, survivor, nodes[1], nodes[2])
	rw.ExpectClosed() // read-write connections are dropped when the quorum goes

	plain := rawclient.Dial(t, addr)
	plain.Send(&jute.ConnectRequest{TimeOut: 3000, Passwd: make([]byte, 16), HasReadOnly: true})
	plain.ExpectClosed() // a client that did not ask for read-only goes elsewhere

	ro := rawclient.Dial(t, addr)
	ro.Send(&jute.ConnectRequest{TimeOut: 3000, Passwd: make([]byte, 16), ReadOnly: true, HasReadOnly: true})
	var resp jute.ConnectResponse
	if err := jute.Unmarshal(ro.Frame(), &resp); err != nil {
		t.Fatal(err)
	}
	if !resp.ReadOnly || resp.SessionID == 0 {
		t.Fatalf("read-only handshake: %+v", resp)
	}
	ro.Request(1, jute.OpGetData, &jute.PathWatchRequest{Path: "/ro"})
	var get jute.GetDataResponse
	if h := ro.Reply(&get); h.Err != jute.OK || string(get.Data) != "x" {
		t.Fatalf("read-only read: %+v %q", h, get.Data)
	}
	ro.Request(2, jute.OpSetData, &jute.SetDataRequest{Path: "/ro", Data: []byte("y"), Version: -1})
	ro.Request(3, jute.OpSync, &jute.PathRequest{Path: "/"})
	// check and deleteContainer are writes to ZooKeeper's
	// ReadOnlyRequestProcessor too.
	ro.Request(4, jute.OpCheck, &jute.PathVersionRequest{Path: "/ro", Version: -1})
	ro.Request(5, jute.OpDeleteContainer, &jute.PathRequest{Path: "/ro"})
	ro.Request(6, jute.OpExists, &jute.PathWatchRequest{Path: "/ro"})
	for _, want := range []struct {
		xid  int32
		code jute.ErrCode
	}{{2, jute.ErrNotReadOnly}, {3, jute.ErrNotReadOnly}, {4, jute.ErrNotReadOnly}, {5, jute.ErrNotReadOnly}, {6, jute.OK}} {
		if h := ro.Reply(nil); h.Xid != want.xid || h.Err != want.code {
			t.Fatalf("got %+v, want xid %d code %v", h, want.xid, want.code)
		}
	}
	// What isro and srvr report (package operator's words).
	if !srv.Serving() || srv.Mode() != "read-only" {
		t.Fatalf("serving %v, mode %q; want a read-only member serving", srv.Serving(), srv.Mode())
	}
}

// quorumSwitch is a Backend whose quorum a test turns off (lost), or
// off for the next blips samples only.
type quorumSwitch struct {
	*ensemble.Node
	lost  atomic.Bool
	blips atomic.Int32
}

func (q *quorumSwitch) HasQuorum() bool {
	if q.blips.Load() > 0 && q.blips.Add(-1) >= 0 {
		return false
	}
	return !q.lost.Load() && q.Node.HasQuorum()
}

// TestQuorumBlipKeepsConnections: an election after a leader's death
// takes tens of milliseconds, and a member that sampled its quorum inside
// it closed every read-write connection (in an overload run, all 32,000
// sessions reconnected where only the dead member's third had to). A
// quorum gone for less than the sampling interval keeps the connections;
// one gone for longer still closes them.
func TestQuorumBlipKeepsConnections(t *testing.T) {
	q := &quorumSwitch{Node: standaloneNode(t)}
	srv := New(Config{TickTime: 200 * time.Millisecond, ReadOnlyMode: true}, q)
	addr := testmember.Serve(t, srv)
	c := rawclient.Dial(t, addr)
	c.Connect(true)
	ping := func(xid int32) {
		t.Helper()
		c.Request(xid, jute.OpExists, &jute.PathWatchRequest{Path: "/"})
		if h := c.Reply(nil); h.Err != jute.OK || h.Xid != xid {
			t.Fatalf("exists: %+v", h)
		}
	}
	ping(1)
	// Blips of one sample, shorter than the sampling interval (100 ms).
	// Timed by sleeps, a 30 ms blip lasted two samples once in the race
	// pass of a loaded machine, which is a quorum really gone.
	for i := range 10 {
		q.blips.Store(1)
		for q.blips.Load() > 0 {
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(150 * time.Millisecond)
		ping(int32(i + 2))
	}
	q.lost.Store(true) // gone for good
	c.ExpectClosed()
}

// TestLeaderLosingQuorumDropsClientsAtOnce: a leader that loses its
// quorum (its followers stopped) closes its read-write connections at
// once, not after the two samples of watchQuorum (a tick apart, 2 s with
// this tickTime): a leader elsewhere may change the tree from then on.
func TestLeaderLosingQuorumDropsClientsAtOnce(t *testing.T) {
	nodes := testmember.Ensemble(t, 3)
	if nodes == nil {
		return
	}
	var leader *ensemble.Node
	var others []*ensemble.Node
	for _, n := range nodes {
		if n.IsLeader() && leader == nil {
			leader = n
		} else {
			others = append(others, n)
		}
	}
	if leader == nil {
		t.Fatal("no leader")
	}
	srv := New(Config{TickTime: 2 * time.Second}, leader)
	addr := testmember.Serve(t, srv)
	rw := rawclient.Dial(t, addr)
	rw.Connect(true)
	for _, n := range others {
		n.Close()
	}
	stopped := time.Now()
	rw.ExpectClosed()
	if took := time.Since(stopped); took > time.Second {
		t.Fatalf("read-write connection closed %v after the followers stopped", took)
	}
	if srv.Serving() {
		t.Fatal("still serving")
	}
}

// TestTreeReplacedDropsClients: when a leader's snapshot replaced the
// member's tree (backend.Hooks.TreeReplaced), every client connection
// with a session is closed, so the clients reconnect and their
// SetWatches fire what the replacement skipped.
func TestTreeReplacedDropsClients(t *testing.T) {
	ts := startServer(t)
	c := rawclient.Dial(t, ts.addr)
	c.Connect(false)
	ts.srv.hooks().TreeReplaced()
	c.ExpectClosed()
}

// TestSilentReadOnlyConnectionClosed: without a quorum no session
// expires, so a read-only client that died without closing its socket
// would hold its connection until the quorum came back. One that sends
// nothing for its session timeout is closed; one that pings is kept.
func TestSilentReadOnlyConnectionClosed(t *testing.T) {
	node := standaloneNode(t)
	q := &quorumSwitch{Node: node}
	q.lost.Store(true)
	srv := New(Config{TickTime: 100 * time.Millisecond, ReadOnlyMode: true}, q)
	addr := testmember.Serve(t, srv)
	readOnly := func() *rawclient.Client {
		c := rawclient.Dial(t, addr)
		c.Send(&jute.ConnectRequest{TimeOut: 600, Passwd: make([]byte, 16), ReadOnly: true, HasReadOnly: true})
		var resp jute.ConnectResponse
		if err := jute.Unmarshal(c.Frame(), &resp); err != nil {
			t.Fatal(err)
		}
		if !resp.ReadOnly || resp.TimeOut != 600 {
			t.Fatalf("read-only handshake: %+v", resp)
		}
		return c
	}
	silent, live := readOnly(), readOnly()
	for xid := int32(1); xid <= 24; xid++ { // 2.4 s: four session timeouts
		live.Request(xid, jute.OpExists, &jute.PathWatchRequest{Path: "/"})
		if h := live.Reply(nil); h.Err != jute.OK || h.Xid != xid {
			t.Fatalf("a live read-only client: %+v", h)
		}
		time.Sleep(100 * time.Millisecond)
	}
	silent.ExpectClosed()
}
