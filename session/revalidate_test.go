package session

import (
	"bytes"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkraft/zkraft/backend"
	"github.com/zkraft/zkraft/ensemble"
	"github.com/zkraft/zkraft/internal/testing/rawclient"
	"github.com/zkraft/zkraft/jute"
)

// standaloneNode is a one-member ensemble, closed when the test ends.
func standaloneNode(t *testing.T) *ensemble.Node {
	t.Helper()
	node, err := ensemble.Open(ensemble.Config{DataDir: t.TempDir(), TickTime: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { node.Close() })
	return node
}

// serveOn serves be on a loopback port until the test ends.
func serveOn(t *testing.T, be backend.Backend) (*Server, string) {
	t.Helper()
	srv := New(Config{TickTime: 200 * time.Millisecond}, be)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close() })
	return srv, ln.Addr().String()
}

// revalidating is a member whose sessions an ensemble it does not lead
// decides on (as a zkraft observer of ZooKeeper): every password is
// derived from the id, and the leader's answer is valid.
type revalidating struct {
	*ensemble.Node
	valid   atomic.Bool
	checked atomic.Int32
}

func (r *revalidating) Revalidate(id int64, _ int32) (bool, error) {
	r.checked.Add(1)
	return r.valid.Load(), nil
}

func (r *revalidating) SessionPasswd(id int64) []byte {
	return bytes.Repeat([]byte{byte(id)}, passwdLen)
}

// TestResumeSessionNotAppliedYet: a client brings a session created on
// another server that this one has not applied yet; with its derived
// password and the leader's yes it is resumed, with a no it is expired,
// and with a wrong password the leader is not asked.
func TestResumeSessionNotAppliedYet(t *testing.T) {
	be := &revalidating{Node: standaloneNode(t)}
	be.valid.Store(true)
	_, addr := serveOn(t, be)

	resume := func(id int64, passwd []byte) jute.ConnectResponse {
		c := rawclient.Dial(t, addr)
		defer c.Conn.Close()
		c.Send(&jute.ConnectRequest{TimeOut: 3000, SessionID: id, Passwd: passwd})
		var resp jute.ConnectResponse
		if err := jute.Unmarshal(c.Frame(), &resp); err != nil {
			t.Fatal(err)
		}
		return resp
	}
	const id = 0x0400000000000007
	if resp := resume(id, be.SessionPasswd(id)); resp.SessionID != id || resp.TimeOut == 0 {
		t.Fatalf("a session the leader knows: %+v", resp)
	}
	if resp := resume(id, make([]byte, passwdLen)); resp.SessionID != 0 || be.checked.Load() != 1 {
		t.Fatalf("a wrong password: %+v (leader asked %d times)", resp, be.checked.Load())
	}
	be.valid.Store(false)
	if resp := resume(id, be.SessionPasswd(id)); resp.SessionID != 0 || resp.TimeOut != 0 {
		t.Fatalf("a session the leader does not know: %+v", resp)
	}
}

// blockingRevalidate is revalidating whose leader answers only when the
// test lets it (release).
type blockingRevalidate struct {
	revalidating
	asked   chan struct{}
	release chan struct{}
}

func (r *blockingRevalidate) Revalidate(id int64, timeout int32) (bool, error) {
	r.asked <- struct{}{}
	<-r.release
	return r.revalidating.Revalidate(id, timeout)
}

// TestResumeOvertakenByADropIsClosed: DropClients closes the connections
// with a session, so one still in its handshake (its session being
// revalidated with the leader) is not among them; when it binds after
// the drop, it is closed then, since what it was checked against may be
// what the drop was about (an observer's leader lost, its tree about to
// be replaced). A resume after the drop is served.
func TestResumeOvertakenByADropIsClosed(t *testing.T) {
	be := &blockingRevalidate{revalidating: revalidating{Node: standaloneNode(t)}, asked: make(chan struct{}, 1), release: make(chan struct{})}
	be.valid.Store(true)
	srv, addr := serveOn(t, be)

	const id = 0x0400000000000009
	c := rawclient.Dial(t, addr)
	c.Send(&jute.ConnectRequest{TimeOut: 3000, SessionID: id, Passwd: be.SessionPasswd(id)})
	<-be.asked
	srv.DropClients("test")
	close(be.release)
	c.ExpectClosed()

	again := rawclient.Dial(t, addr)
	again.Send(&jute.ConnectRequest{TimeOut: 3000, SessionID: id, Passwd: be.SessionPasswd(id)})
	<-be.asked
	var resp jute.ConnectResponse
	if err := jute.Unmarshal(again.Frame(), &resp); err != nil || resp.SessionID != id {
		t.Fatalf("a resume after the drop: %+v %v", resp, err)
	}
}
