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
	node := standaloneNode(t)
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

// TestLeaderServesNoLeadershipRegainedBetweenSamples: the quorum watcher
// samples the member's mode every half tick, and dropped the clients only
// when it saw the member become leader. A member that lost its leadership
// and won it back between two samples kept the sessions bound in between,
// against leaderServes=no. Now a leader drops any session it finds bound.
func TestLeaderServesNoLeadershipRegainedBetweenSamples(t *testing.T) {
	node := standaloneNode(t)
	l := &leaderSwitch{Node: node}
	l.leads.Store(true)
	// Samples a second apart: the flap below falls between two.
	srv := New(Config{TickTime: 2 * time.Second, LeaderServesNot: true}, l)
	addr := testmember.Serve(t, srv)
	for deadline := time.Now().Add(10 * time.Second); srv.drops.Load() == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the quorum watcher never saw the member lead")
		}
	}
	l.leads.Store(false) // leadership lost...
	c := rawclient.Dial(t, addr)
	if resp := c.ConnectFor(10000); resp.SessionID == 0 {
		t.Fatal("no session on the member while it followed")
	}
	l.leads.Store(true) // ...and won back before the next sample
	c.ExpectClosed()
}
