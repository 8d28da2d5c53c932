package ensemble

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/zkraft/zkraft/backend"
)

// stubGate states self and answers with status (statusAccepted: admit).
type stubGate struct {
	self     hello
	status   byte
	legacyOK bool
	mu       sync.Mutex
	heard    []hello
	refused  []byte
}

func (g *stubGate) local() hello { return g.self }
func (g *stubGate) admit(peer hello, _ string, _ bool) (byte, error) {
	g.heardFrom(peer)
	if g.status != statusAccepted {
		return g.status, errRefused
	}
	return statusAccepted, nil
}
func (g *stubGate) admitLegacy(string, bool) error {
	if !g.legacyOK {
		return errRefused
	}
	return nil
}
func (g *stubGate) refusedBy(_ hello, _ string, status byte, _ error) {
	g.mu.Lock()
	g.refused = append(g.refused, status)
	g.mu.Unlock()
}
func (g *stubGate) heardFrom(peer hello) {
	g.mu.Lock()
	g.heard = append(g.heard, peer)
	g.mu.Unlock()
}

func listenMux(t *testing.T, g gate) (*mux, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	m := newMux(ln, defaultDialer, g)
	t.Cleanup(m.close)
	return m, ln.Addr().String()
}

// routed waits for a connection the mux handed to the forwarding protocol.
func routed(m *mux, within time.Duration) (net.Conn, bool) {
	select {
	case c := <-m.fwdCh:
		return c, true
	case <-time.After(within):
		return nil, false
	}
}

func TestHandshakeStatesBothHellos(t *testing.T) {
	a := &stubGate{self: hello{Build: BinaryLevel, Server: 1, Ensemble: ensembleState{Level: 2, ID: EnsembleID{7}}}}
	b := &stubGate{self: hello{Build: BinaryLevel, Server: 2, Ensemble: ensembleState{Level: 2, ID: EnsembleID{7}}}}
	acceptor, addr := listenMux(t, a)
	dialer, _ := listenMux(t, b)
	c, peer, err := dialer.openLevel(addr, streamFwd, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if peer != a.self {
		t.Fatalf("the dialer saw %+v, want %+v", peer, a.self)
	}
	in, ok := routed(acceptor, 2*time.Second)
	if !ok {
		t.Fatal("the acceptor did not hand the connection on")
	}
	defer in.Close()
	if len(a.heard) != 1 || a.heard[0] != b.self {
		t.Fatalf("the acceptor heard %+v", a.heard)
	}
	// The stream's own protocol starts right after the handshake.
	if _, err := c.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	one := make([]byte, 1)
	if _, err := io.ReadFull(in, one); err != nil || one[0] != 'x' {
		t.Fatalf("after the handshake: %q %v", one, err)
	}
}

func TestHandshakeRefusalReachesBothSides(t *testing.T) {
	a := &stubGate{self: hello{Build: BinaryLevel, Server: 1}, status: statusOtherEnsemble}
	b := &stubGate{self: hello{Build: BinaryLevel, Server: 2}}
	acceptor, addr := listenMux(t, a)
	dialer, _ := listenMux(t, b)
	if _, _, err := dialer.openLevel(addr, streamFwd, 2*time.Second); !errors.Is(err, errRefused) {
		t.Fatalf("open: %v, want a refusal", err)
	}
	if len(b.refused) != 1 || b.refused[0] != statusOtherEnsemble {
		t.Fatalf("the dialer was told %v", b.refused)
	}
	if c, ok := routed(acceptor, 200*time.Millisecond); ok {
		c.Close()
		t.Fatal("a refused connection was handed on")
	}
}

// legacyMember listens as a zkraft v0.1 member port does: a version-1
// header is admitted, anything else closed at once.
func legacyMember(t *testing.T) (addr string, admitted chan byte, dials *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	admitted, dials = make(chan byte, 8), new(atomic.Int32)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			dials.Add(1)
			var h [headerLen]byte
			if _, err := io.ReadFull(c, h[:]); err != nil || string(h[:3]) != peerMagic || h[3] != peerVersionLegacy {
				c.Close()
				continue
			}
			admitted <- h[4]
			c.Close()
		}
	}()
	return ln.Addr().String(), admitted, dials
}

func TestHandshakeFallsBackToALevelOneMember(t *testing.T) {
	addr, admitted, dials := legacyMember(t)
	g := &stubGate{self: hello{Build: BinaryLevel, Server: 2}, legacyOK: true}
	m, _ := listenMux(t, g)
	c, peer, err := m.openLevel(addr, streamAppend, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if peer.Build != LevelLegacy {
		t.Fatalf("a v0.1 member reported build %d", peer.Build)
	}
	if k := <-admitted; k != streamAppend {
		t.Fatalf("stream %q", k)
	}
	if n := dials.Load(); n != 2 {
		t.Fatalf("%d dials, want a version-2 try and a version-1 one", n)
	}
	// Remembered: the next connection goes straight to version 1.
	c, _, err = m.openLevel(addr, streamFwd, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	<-admitted
	if n := dials.Load(); n != 3 {
		t.Fatalf("%d dials after the second open, want 3", n)
	}
}

func TestHandshakeLevelTwoRefusesLevelOneMembers(t *testing.T) {
	// Dialing one.
	addr, admitted, _ := legacyMember(t)
	g := &stubGate{self: hello{Build: BinaryLevel, Server: 2}}
	m, _ := listenMux(t, g)
	if _, _, err := m.openLevel(addr, streamAppend, 2*time.Second); !errors.Is(err, errRefused) {
		t.Fatalf("open: %v", err)
	}
	select {
	case <-admitted:
		t.Fatal("a level-2 member spoke version 1")
	default:
	}
	if m.isLegacy(addr) {
		t.Fatal("a refused level-1 member was remembered as one to dial")
	}
	// Dialed by one.
	for _, legacyOK := range []bool{true, false} {
		acceptor, aaddr := listenMux(t, &stubGate{legacyOK: legacyOK})
		c, err := net.Dial("tcp", aaddr)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = c.Write([]byte{peerMagic[0], peerMagic[1], peerMagic[2], peerVersionLegacy, streamFwd})
		in, ok := routed(acceptor, time.Second)
		if ok != legacyOK {
			t.Fatalf("legacy allowed %v: handed on %v", legacyOK, ok)
		}
		if in != nil {
			in.Close()
		}
		c.Close()
	}
}

// testIdentity is a member's identity without the rest of the member:
// server 1 of three voters.
func testIdentity(t *testing.T, formedLevel uint8, formedAt int64, ens ensembleState) (*identity, *observer.ObservedLogs) {
	t.Helper()
	core, logs := observer.New(zapcore.InfoLevel)
	n := &Node{log: zap.New(core), cfg: Config{ID: 1, Peers: []backend.Peer{{ID: 1, Addr: "a:1"}, {ID: 2, Addr: "b:1"}, {ID: 3, Addr: "c:1"}}}}
	n.fsm = newFSM(zap.NewNop(), n.cfg.Tree, nil, newWaiters(), newExpiry())
	n.fsm.ens.Store(&ens)
	return newIdentity(n, formationMarks{level: formedLevel, at: formedAt}), logs
}

func TestIdentityRefusesAnotherEnsemble(t *testing.T) {
	g, logs := testIdentity(t, 2, 1, ensembleState{Level: 2, ID: EnsembleID{1}, Minted: 5})
	other := hello{Build: 2, Server: 2, Ensemble: ensembleState{Level: 2, ID: EnsembleID{2}, Minted: 5}}
	if s, err := g.admit(other, "b:1", false); s != statusOtherEnsemble || err == nil {
		t.Fatalf("another ensemble: %d %v", s, err)
	}
	same := other
	same.Ensemble.ID = EnsembleID{1}
	if s, err := g.admit(same, "b:1", false); s != statusAccepted || err != nil {
		t.Fatalf("the same ensemble: %d %v", s, err)
	}
	if got := logs.FilterMessageSnippet("another ensemble").Len(); got != 1 {
		t.Fatalf("%d log lines about the other ensemble, want 1: %v", got, logs.All())
	}
	// Repeated refusals are not logged again within a minute.
	_, _ = g.admit(other, "b:1", false)
	if got := logs.FilterMessageSnippet("another ensemble").Len(); got != 1 {
		t.Fatalf("%d log lines after a retry", got)
	}
}

func TestIdentityOfAFreshMember(t *testing.T) {
	start := time.Now().UnixNano()
	old := hello{Build: 2, Server: 3, Ensemble: ensembleState{Level: 2, ID: EnsembleID{9}, Minted: start - int64(time.Hour)}}
	mintedSince := old
	mintedSince.Ensemble.Minted = start + int64(time.Second)

	// An ensemble minted after this member started is the one it formed.
	g, _ := testIdentity(t, 2, start, ensembleState{})
	if g.local().FreshSince != start {
		t.Fatalf("a fresh member states FreshSince %d", g.local().FreshSince)
	}
	if s, err := g.admit(mintedSince, "c:1", false); s != statusAccepted {
		t.Fatalf("its own new ensemble: %d %v", s, err)
	}

	// One minted before: undecided until a majority is heard from.
	if s, _ := g.admit(old, "c:1", false); s != statusUndecided {
		t.Fatalf("knowing only the old member: status %d, want undecided", s)
	}
	// Server 2 is fresh too: with this member, a majority forming anew.
	g.heardFrom(hello{Build: 2, Server: 2, FreshSince: start})
	if s, _ := g.admit(old, "c:1", false); s != statusEstablished {
		t.Fatalf("a fresh majority: status %d, want established", s)
	}

	// Started late into a running ensemble: the others hold its id.
	g2, _ := testIdentity(t, 2, start, ensembleState{})
	g2.heardFrom(hello{Build: 2, Server: 2, Ensemble: old.Ensemble})
	if s, _ := g2.admit(old, "c:1", false); s != statusAccepted {
		t.Fatalf("a majority of the old ensemble: status %d", s)
	}

	// Not fresh (formed before levels, or already holding an id): no such rule.
	g3, _ := testIdentity(t, 0, 0, ensembleState{})
	if g3.local().FreshSince != 0 {
		t.Fatal("a member formed before levels states itself fresh")
	}
	if s, _ := g3.admit(old, "c:1", false); s != statusAccepted {
		t.Fatalf("a level-1 member: status %d", s)
	}
}

func TestIdentityLevels(t *testing.T) {
	// Level 1 (formed before levels, never raised): v0.1 members are admitted.
	g, _ := testIdentity(t, 0, 0, ensembleState{})
	if err := g.admitLegacy("b:1", false); err != nil {
		t.Fatalf("level 1: %v", err)
	}
	// Formed at level 2 but its level not yet applied: it may have found a
	// level-1 ensemble with v0.1 members (put in place of a broken one).
	if g, _ := testIdentity(t, 2, 1, ensembleState{}); g.admitLegacy("b:1", false) != nil {
		t.Fatal("a fresh member refused a v0.1 member before knowing its ensemble's level")
	}
	// At level 2 (raised, or a new ensemble's first entry applied): refused, and logged.
	if g, _ := testIdentity(t, 0, 0, ensembleState{Level: 2, ID: EnsembleID{1}}); !errors.Is(g.admitLegacy("b:1", false), errRefused) {
		t.Fatal("level 2 admitted a v0.1 member")
	}
	g, logs := testIdentity(t, 0, 0, ensembleState{Level: 2, ID: EnsembleID{1}})
	_ = g.admitLegacy("b:1", true)
	if logs.Len() != 1 || !strings.Contains(logs.All()[0].Message, "older zkraft") {
		t.Fatalf("log: %v", logs.All())
	}
	// A build below the ensemble's level is refused.
	if s, _ := g.admit(hello{Build: 1, Server: 2, Ensemble: ensembleState{Level: 2, ID: EnsembleID{1}}}, "b:1", false); s != statusLevelTooLow {
		t.Fatalf("a build below the level: status %d", s)
	}
}

// TestIdentityTablesStayBounded: a peer refused again and again, from a
// new source port each time (a leftover leader redials every 50 ms), is
// logged once and kept once; hellos naming server ids outside the
// configuration are not kept (a hello may name any id).
func TestIdentityTablesStayBounded(t *testing.T) {
	g, logs := testIdentity(t, 2, 1, ensembleState{Level: 2, ID: EnsembleID{1}, Minted: 5})
	for port := range 100 {
		other := hello{Build: 2, Server: uint64(1000 + port), Ensemble: ensembleState{Level: 2, ID: EnsembleID{2}, Minted: 5}}
		if s, _ := g.admit(other, fmt.Sprintf("10.0.0.9:%d", 40000+port), false); s != statusOtherEnsemble {
			t.Fatalf("status %d, want another ensemble", s)
		}
	}
	if got := logs.FilterMessageSnippet("another ensemble").Len(); got != 1 {
		t.Errorf("%d log lines for one host's refusals, want 1", got)
	}
	g.mu.Lock()
	said, peers := len(g.said), len(g.peers)
	g.mu.Unlock()
	if said != 1 || peers != 0 {
		t.Fatalf("%d refusal-log entries (want 1) and %d hellos kept (want none: no such members)", said, peers)
	}
}
