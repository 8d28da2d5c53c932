package ensemble

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"time"
)

// Member connections, protocol 2. The dialer's 5-byte header (transport.go)
// carries version 2 and is followed by its hello; the acceptor checks it
// (gate.admit) and answers with a status byte and its own hello, then
// closes the connection if the status is not statusAccepted. Only then does
// the stream's own protocol start. A level-1 member (zkraft v0.1) reads
// version 1 only and closes a version-2 header at once: the dialer then
// dials again with a version-1 header and no hello, unless its ensemble
// is at level 2 (gate.admitLegacy), and a level-2 acceptor likewise
// refuses a version-1 header once its ensemble is at level 2.
const (
	peerVersionLegacy = 1 // zkraft v0.1: header only
	peerVersionHello  = 2 // header, hello, reply
	helloLen          = 1 + 8 + 1 + 16 + 8 + 8
	replyLen          = 1 + helloLen
)

// Reply statuses.
const (
	statusAccepted      byte = 0
	statusOtherEnsemble byte = 1 // both have ids, and they differ
	statusEstablished   byte = 2 // a fresh member met an ensemble formed before it
	statusLevelTooLow   byte = 3 // the dialer cannot run the ensemble's level
	statusUndecided     byte = 4 // a fresh member has not heard from enough members yet
)

// hello is what each side of a member connection states about itself.
type hello struct {
	// Build is the highest level the member's build runs (BinaryLevel).
	Build uint8
	// Server is its server id.
	Server uint64
	// Ensemble is its log's ensemble state: level, id, minted.
	Ensemble ensembleState
	// FreshSince is, for a member formed by a level-2 build that holds no
	// ensemble id yet, when it first started (unix ns); 0 otherwise.
	FreshSince int64
}

func (h hello) append(b []byte) []byte {
	b = append(b, h.Build)
	b = binary.BigEndian.AppendUint64(b, h.Server)
	b = append(b, h.Ensemble.Level)
	b = append(b, h.Ensemble.ID[:]...)
	b = binary.BigEndian.AppendUint64(b, uint64(h.Ensemble.Minted))
	return binary.BigEndian.AppendUint64(b, uint64(h.FreshSince))
}

func parseHello(b []byte) hello {
	var h hello
	h.Build = b[0]
	h.Server = binary.BigEndian.Uint64(b[1:9])
	h.Ensemble.Level = b[9]
	copy(h.Ensemble.ID[:], b[10:26])
	h.Ensemble.Minted = int64(binary.BigEndian.Uint64(b[26:34]))
	h.FreshSince = int64(binary.BigEndian.Uint64(b[34:42]))
	return h
}

// gate is the member's side of the handshake (identity.go); a mux without
// one (tests) states a zero hello and admits everyone.
type gate interface {
	// local is this member's hello now.
	local() hello
	// admit decides on a peer's hello: nil, or why it is refused with
	// the status to answer (acceptor) or to report (dialer). remote is
	// the peer's address, for the log.
	admit(peer hello, remote string, dialer bool) (byte, error)
	// admitLegacy decides on a level-1 peer (version-1 header, no hello).
	admitLegacy(remote string, dialer bool) error
	// refusedBy logs a refusal the peer at remote answered.
	refusedBy(peer hello, remote string, status byte, err error)
	// heardFrom records the hello of a peer this member dialed.
	heardFrom(peer hello)
}

// errRefused is wrapped by every handshake refusal.
var errRefused = errors.New("ensemble: member connection refused")

// statusText names a refusal status for the log.
func statusText(s byte) string {
	switch s {
	case statusOtherEnsemble:
		return "it belongs to another ensemble"
	case statusEstablished:
		return "a fresh member met an ensemble formed before it started"
	case statusLevelTooLow:
		return "its zkraft cannot run this ensemble's level"
	case statusUndecided:
		return "a fresh member has not yet heard from a majority of the voters"
	default:
		return fmt.Sprintf("status %d", s)
	}
}

// acceptHello runs the acceptor's side after a version-2 header: it reads
// the dialer's hello, answers, and reports whether the stream may go on.
func (m *mux) acceptHello(c net.Conn) bool {
	var b [helloLen]byte
	if _, err := io.ReadFull(c, b[:]); err != nil {
		return false
	}
	peer := parseHello(b[:])
	status := statusAccepted
	var self hello
	if m.gate != nil {
		self = m.gate.local()
		if s, err := m.gate.admit(peer, c.RemoteAddr().String(), false); err != nil {
			status = s
		}
	}
	reply := append(make([]byte, 0, replyLen), status)
	reply = self.append(reply)
	_ = c.SetWriteDeadline(time.Now().Add(headerLimits))
	if _, err := c.Write(reply); err != nil || status != statusAccepted {
		return false
	}
	_ = c.SetWriteDeadline(time.Time{})
	return true
}

// dialHello runs the dialer's side after a version-2 header and hello were
// written: legacy reports a peer that closed without a reply (a level-1
// member), to be dialed again with a version-1 header.
func (m *mux) dialHello(c net.Conn, addr string, deadline time.Time) (peer hello, legacy bool, err error) {
	var b [replyLen]byte
	_ = c.SetReadDeadline(deadline)
	n, err := io.ReadFull(c, b[:])
	if err != nil {
		if n == 0 && (errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)) {
			return hello{}, true, nil
		}
		return hello{}, false, fmt.Errorf("ensemble: member %s handshake: %w", addr, err)
	}
	_ = c.SetReadDeadline(time.Time{})
	peer = parseHello(b[1:])
	if m.gate != nil {
		m.gate.heardFrom(peer)
	}
	if b[0] != statusAccepted {
		err := fmt.Errorf("%w by member %s (server.%d, ensemble %s): %s", errRefused, addr, peer.Server, peer.Ensemble.ID, statusText(b[0]))
		if m.gate != nil {
			m.gate.refusedBy(peer, addr, b[0], err)
		}
		return peer, false, err
	}
	if m.gate != nil {
		if _, err := m.gate.admit(peer, addr, true); err != nil {
			return peer, false, err
		}
	}
	return peer, false, nil
}
