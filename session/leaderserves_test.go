package session

import (
	"errors"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkraft/zkraft/ensemble"
	"github.com/zkraft/zkraft/internal/testing/rawclient"
	"github.com/zkraft/zkraft/internal/testing/testmember"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// leaderSwitch is a Backend whose Mode a test turns to "leader", and
// which runs onCreate (once) as a handshake proposes its session: after
// the handshake's mode check, before its bind.
type leaderSwitch struct {
	*ensemble.Node
	leads    atomic.Bool
	onCreate atomic.Pointer[func()]
}

func (l *leaderSwitch) Mode() string {
	if l.leads.Load() {
		return "leader"
	}
	return l.Node.Mode()
}

func (l *leaderSwitch) ProposeWait(txn *znode.Txn) (*znode.Result, error) {
	if txn.Type == jute.OpCreateSession {
		if f := l.onCreate.Swap(nil); f != nil {
			(*f)()
		}
	}
	return l.Node.ProposeWait(txn)
}

// TestLeaderServesNoSessionBoundAsLeaderElected: with leaderServes=no a
// handshake that passed its mode check just before the member became
// leader bound after the one DropClients the quorum watcher runs for the
// election (which skips connections still in their handshake), and its
// client stayed on the leader for good. ZooKeeper's leader takes no
// client connections at all: the session is closed at bind.
func TestLeaderServesNoSessionBoundAsLeaderElected(t *testing.T) {
	node, err := ensemble.Open(ensemble.Config{DataDir: t.TempDir(), TickTime: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { node.Close() })
	l := &leaderSwitch{Node: node}
	srv := New(Config{TickTime: 100 * time.Millisecond, LeaderServesNot: true}, l)
	addr := testmember.Serve(t, srv)
	elected := func() {
		l.leads.Store(true)
		deadline := time.Now().Add(5 * time.Second)
		for srv.drops.Load() == 0 { // the quorum watcher's DropClients
			if time.Now().After(deadline) {
				t.Error("no DropClients after the member became leader")
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	l.onCreate.Store(&elected)

	c := rawclient.Dial(t, addr)
	c.Send(&jute.ConnectRequest{TimeOut: 3000, Passwd: make([]byte, passwdLen)})
	// Closed without an answer: a ConnectResponse is a session on the
	// leader, which its client pings for as long as it likes (this one
	// does not, so it would expire after its timeout, 2 s).
	_ = c.Conn.SetReadDeadline(time.Now().Add(time.Second))
	b, err := io.ReadAll(c.Reader)
	if len(b) != 0 {
		t.Fatalf("the leader answered the handshake (%d bytes): a session on it", len(b))
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("connection still open")
	}
}
