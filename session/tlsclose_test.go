package session

import (
	"crypto/tls"
	"crypto/x509/pkix"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkraft/zkraft/backend"
	"github.com/zkraft/zkraft/ensemble"
	"github.com/zkraft/zkraft/internal/security/zktls/zktlstest"
	"github.com/zkraft/zkraft/internal/testing/rawclient"
	"github.com/zkraft/zkraft/internal/testing/testmember"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// lockedForwarder is a Backend whose writes all go through one lock, as a
// follower's forwarder sends them under f.mu and, when its connection to
// the leader breaks, fails those in flight under it (breakLocked). The
// creates of session hold are kept back until breakConn fails them.
type lockedForwarder struct {
	*ensemble.Node
	mu     sync.Mutex
	hold   atomic.Int64
	held   []backend.Waiter
	heldCh chan struct{} // one value per write kept back
}

func (f *lockedForwarder) Propose(txn *znode.Txn, w backend.Waiter) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if txn.Type == jute.OpCreate && txn.Session == f.hold.Load() {
		f.held = append(f.held, w)
		f.heldCh <- struct{}{}
		return
	}
	f.Node.Propose(txn, w)
}

// breakConn fails the writes kept back, under the lock every write takes.
func (f *lockedForwarder) breakConn(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, w := range f.held {
		w.Failed(err)
	}
	f.held = nil
}

// pipeListener accepts the connections handed to it on conns.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe" }

// deafSocket is the server's end of a client that stopped reading: a
// write blocks until the client reads or the socket is closed, for longer
// than any test waits (write deadlines are ignored). closed is closed
// once the server closes it.
type deafSocket struct {
	net.Conn
	closed chan struct{}
	once   sync.Once
}

func (d *deafSocket) SetWriteDeadline(time.Time) error { return nil }

func (d *deafSocket) SetDeadline(t time.Time) error { return d.Conn.SetReadDeadline(t) }

func (d *deafSocket) Close() error {
	d.once.Do(func() { close(d.closed) })
	return d.Conn.Close()
}

// TestFailedWriteDoesNotWaitForATLSClient: a write whose outcome is
// unknown (its member lost the leader) closes its connection, from under
// the lock the member's other writes need. On the secure client port that
// close sent TLS's close_notify first, which waits for the client to read
// it (up to 5 s each, and a broken forwarder fails every write in flight
// one after the other): a client that had stopped reading held up every
// session's writes on the member. The socket is now closed without it.
func TestFailedWriteDoesNotWaitForATLSClient(t *testing.T) {
	fwd := &lockedForwarder{heldCh: make(chan struct{}, 1)}
	_, srv, addr := testmember.Start(t, znode.Options{}, func(n *ensemble.Node) *Server {
		fwd.Node = n
		return New(Config{TickTime: testmember.TickTime}, fwd)
	})
	cert, err := zktlstest.Issue(pkix.Name{CommonName: "localhost"}, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	srvTLS := &tls.Config{
		Certificates:           []tls.Certificate{{Certificate: [][]byte{cert.Cert.Raw}, PrivateKey: cert.Key}},
		SessionTicketsDisabled: true, // nothing is written to the client after its handshake
	}
	ln := &pipeListener{conns: make(chan net.Conn, 1), done: make(chan struct{})}
	go func() { _ = srv.ServeSecure(ln, srvTLS) }()

	cliEnd, srvEnd := net.Pipe()
	sock := &deafSocket{Conn: srvEnd, closed: make(chan struct{})}
	t.Cleanup(func() { cliEnd.Close(); srvEnd.Close() }) // before the server's Close
	ln.conns <- sock
	tc := tls.Client(cliEnd, &tls.Config{InsecureSkipVerify: true}) // the test's self-signed certificate
	deaf := rawclient.New(t, tc)
	resp := deaf.Connect(false)
	if resp.SessionID == 0 {
		t.Fatal("no session on the secure port")
	}
	fwd.hold.Store(resp.SessionID)
	deaf.Request(1, jute.OpCreate, &jute.CreateRequest{Path: "/deaf", ACL: openACL})
	select {
	case <-fwd.heldCh:
	case <-time.After(10 * time.Second):
		t.Fatal("the create never reached the backend")
	}

	// The client reads nothing from here on.
	broken := make(chan struct{})
	go func() {
		fwd.breakConn(errors.New("test: connection to the leader lost"))
		close(broken)
	}()
	select {
	case <-broken:
	case <-time.After(10 * time.Second):
		t.Fatal("failing a write waited on a client that does not read, holding the lock every write needs")
	}
	select {
	case <-sock.closed:
	case <-time.After(10 * time.Second):
		t.Fatal("the failed write's connection was not closed: its close waits on a client that does not read")
	}

	other := rawclient.Dial(t, addr)
	other.Connect(false)
	other.Request(1, jute.OpCreate, &jute.CreateRequest{Path: "/other", ACL: openACL})
	if h := other.Reply(nil); h.Err != jute.OK {
		t.Fatalf("another session's create: %v", h.Err)
	}
}
