package session

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkraft/zkraft/backend"
	"github.com/zkraft/zkraft/ensemble"
	"github.com/zkraft/zkraft/internal/testing/rawclient"
	"github.com/zkraft/zkraft/internal/testing/testmember"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// TestOnlyResumedSessionsAreAnnounced: a new session costs one log entry
// (createSession); only a client resuming its session announces, through
// the log, that this member now holds it. Counted on another member, which
// applies every announcement.
func TestOnlyResumedSessionsAreAnnounced(t *testing.T) {
	nodes := testmember.Ensemble(t, 3)
	if nodes == nil {
		return
	}
	var moved atomic.Int64
	nodes[1].SetHooks(backend.Hooks{SessionMoved: func(int64, int64) { moved.Add(1) }})
	srv := New(Config{TickTime: 200 * time.Millisecond}, nodes[0])
	addr := testmember.Serve(t, srv)

	created := make([]jute.ConnectResponse, 3)
	for i := range created {
		created[i] = rawclient.Dial(t, addr).Connect(false)
		if created[i].SessionID == 0 {
			t.Fatalf("session %d not created", i)
		}
	}
	resumed := rawclient.Dial(t, addr)
	resumed.Send(&jute.ConnectRequest{TimeOut: 3000, SessionID: created[0].SessionID, Passwd: created[0].Passwd})
	var resp jute.ConnectResponse
	if err := jute.Unmarshal(resumed.Frame(), &resp); err != nil || resp.SessionID != created[0].SessionID {
		t.Fatalf("resume: %+v %v", resp, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for moved.Load() < 1 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond) // any announcement of the new sessions lands by now
	if n := moved.Load(); n != 1 {
		t.Fatalf("%d session announcements applied; want 1 (the resumed session only)", n)
	}
}

// announceGate is a Backend that holds its member's session announcements
// until release is closed, and closes done once one is applied here (or
// failed).
type announceGate struct {
	*ensemble.Node
	release, done chan struct{}
}

func (g *announceGate) AnnounceSession(id int64, w backend.Waiter) {
	<-g.release
	g.Node.AnnounceSession(id, signalWaiter{w, g.done})
}

// signalWaiter passes its outcome to Waiter, then closes done.
type signalWaiter struct {
	backend.Waiter
	done chan struct{}
}

func (s signalWaiter) Applied(res *znode.Result, t *znode.Tree) {
	s.Waiter.Applied(res, t)
	close(s.done)
}

func (s signalWaiter) Failed(err error) {
	s.Waiter.Failed(err)
	close(s.done)
}

// chanWaiter reports its outcome on a channel: nil once applied.
type chanWaiter chan error

func (c chanWaiter) Applied(*znode.Result, *znode.Tree) { c <- nil }
func (c chanWaiter) Failed(err error)                   { c <- err }

// TestStaleAnnouncementKeepsReturnedConnection: a client that left this
// member for another, and came back, binds here before this member
// applies the other member's announcement of the first move. That
// announcement closed the client's live connection; it is older in the
// log than the connection's own announcement, and ZooKeeper never closes
// the connection a session moved to. An announcement applied after the
// connection's own still closes it: the client moved again.
func TestStaleAnnouncementKeepsReturnedConnection(t *testing.T) {
	nodes := testmember.Ensemble(t, 3)
	if nodes == nil {
		return
	}
	g := &announceGate{Node: nodes[0], release: make(chan struct{}), done: make(chan struct{})}
	srv := New(Config{TickTime: 200 * time.Millisecond}, g)
	addr := testmember.Serve(t, srv)
	first := rawclient.Dial(t, addr).ConnectFor(4000)
	if first.SessionID == 0 {
		t.Fatal("no session")
	}
	back := rawclient.Dial(t, addr)
	back.Send(&jute.ConnectRequest{TimeOut: 4000, SessionID: first.SessionID, Passwd: first.Passwd})
	var resp jute.ConnectResponse
	if err := jute.Unmarshal(back.Frame(), &resp); err != nil || resp.SessionID != first.SessionID {
		t.Fatalf("resume: %+v %v", resp, err)
	}

	// The other member's announcement of the client's visit there, applied
	// here (a barrier after it is) while the return's is held back.
	applied := make(chanWaiter, 1)
	nodes[1].AnnounceSession(first.SessionID, applied)
	if err := <-applied; err != nil {
		t.Fatal(err)
	}
	nodes[0].Barrier(applied)
	if err := <-applied; err != nil {
		t.Fatal(err)
	}
	back.Request(1, jute.OpExists, &jute.PathWatchRequest{Path: "/"})
	if h := back.Reply(nil); h.Err != jute.OK || h.Xid != 1 {
		t.Fatalf("exists: %+v", h)
	}

	close(g.release)
	select {
	case <-g.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the return's announcement was not applied")
	}
	nodes[1].AnnounceSession(first.SessionID, nil) // the client moved again
	back.ExpectClosed()
}

// stallGate is a Backend whose session announcements wait until release
// is closed, as a follower's wait for a leader in an election. It counts
// the announcements waiting at once (the most of them) and those made.
type stallGate struct {
	*ensemble.Node
	release             chan struct{}
	waiting, most, made atomic.Int64
}

func (g *stallGate) AnnounceSession(id int64, w backend.Waiter) {
	n := g.waiting.Add(1)
	for m := g.most.Load(); n > m && !g.most.CompareAndSwap(m, n); m = g.most.Load() {
	}
	<-g.release
	g.made.Add(1)
	g.waiting.Add(-1)
	g.Node.AnnounceSession(id, w)
}

// TestResumeStormAnnouncesOneAtATime: a reconnect storm during an
// election (every resumed session's announcement waiting for a leader)
// costs one waiting announcement, not a goroutine per resume; the
// connections closed meanwhile are not announced, and the others are once
// a leader answers.
func TestResumeStormAnnouncesOneAtATime(t *testing.T) {
	const n = 100
	g := &stallGate{release: make(chan struct{})}
	_, srv, addr := testmember.Start(t, znode.Options{}, func(node *ensemble.Node) *Server {
		g.Node = node
		return New(Config{TickTime: 2 * time.Second}, g)
	})
	defer func() {
		select {
		case <-g.release:
		default:
			close(g.release)
		}
	}()
	sessions := make([]jute.ConnectResponse, n)
	for i := range sessions {
		c := rawclient.Dial(t, addr)
		if sessions[i] = c.ConnectFor(30000); sessions[i].SessionID == 0 {
			t.Fatalf("session %d not created", i)
		}
		c.Conn.Close()
	}
	resumed := make([]*rawclient.Client, n)
	for i, s := range sessions {
		resumed[i] = rawclient.Dial(t, addr)
		resumed[i].Send(&jute.ConnectRequest{TimeOut: 30000, SessionID: s.SessionID, Passwd: s.Passwd})
		var resp jute.ConnectResponse
		if err := jute.Unmarshal(resumed[i].Frame(), &resp); err != nil || resp.SessionID != s.SessionID {
			t.Fatalf("resume %d: %+v %v", i, resp, err)
		}
	}
	// Every resume is bound (answered); its announcement is made, or
	// queued. Give goroutines started for them time to reach the gate.
	waitFor(t, "an announcement waiting for a leader", func() bool { return g.waiting.Load() > 0 })
	for end := time.Now().Add(time.Second); time.Now().Before(end) && g.most.Load() <= 1; {
		time.Sleep(10 * time.Millisecond)
	}
	if m := g.most.Load(); m > 1 {
		t.Fatalf("%d announcements waited for a leader at once (a goroutine each); want 1", m)
	}

	// Half the clients go while the election lasts.
	gone := n / 2
	for _, c := range resumed[:gone] {
		c.Conn.Close()
	}
	open := func() int {
		srv.mu.Lock()
		defer srv.mu.Unlock()
		return len(srv.conns)
	}
	waitFor(t, "the closed connections forgotten", func() bool { return open() == n-gone })
	close(g.release)
	announced := func() bool {
		srv.mu.Lock()
		defer srv.mu.Unlock()
		for c := range srv.conns {
			if c.announcing.Load() {
				return false
			}
		}
		return true
	}
	waitFor(t, "the open connections' announcements made", announced)
	// The one waiting when the clients went may be one of theirs.
	if made := g.made.Load(); made < int64(n-gone) || made > int64(n-gone+1) {
		t.Fatalf("%d announcements made; want those of the %d open connections (and at most the one waiting)", made, n-gone)
	}
}
