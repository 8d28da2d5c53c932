package ensemble

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/raft"
	"go.uber.org/zap"

	"github.com/zkraft/zkraft/znode"
)

// Forwarding protocol (stream kind 'F'). A follower keeps one connection to
// the leader and sends, in order:
//
//	request  = u32 length | u8 type | u64 seq | payload
//	response = u32 length | u64 seq | u8 status | payload
//
// msgApply carries an encoded log entry; the leader appends it and answers
// once it is committed (status OK) or could not be (statusNotLeader,
// statusError + message). msgTouch carries session ids that had traffic on
// the follower (no response). msgReadIndex asks the leader to confirm its
// leadership and return its applied index. msgReconfig carries a
// reconfigCall; the leader answers at once (status OK: it runs the
// reconfig and proposes its outcome, which reaches the sender's waiter
// through the log).
const (
	msgApply     byte = 1
	msgTouch     byte = 2
	msgReadIndex byte = 3
	msgReconfig  byte = 4

	statusOK        byte = 0
	statusNotLeader byte = 1
	statusError     byte = 2

	maxForwardFrame = 64 << 20
)

// errForwardBroken is reported for requests in flight on a forwarding
// connection that failed: their outcome is unknown, like a client's after a
// lost connection.
var errForwardBroken = errors.New("ensemble: connection to leader lost")

// errNoLeader is reported when no leader emerged in time.
var errNoLeader = errors.New("ensemble: no leader")

// errLeaderHere is reported when this member became the leader while a
// request waited for one: the caller applies it locally instead.
var errLeaderHere = errors.New("ensemble: this member is the leader")

// fwdCall is a forwarded request awaiting its response.
type fwdCall func(status byte, payload []byte, err error)

// forwarder is a follower's ordered channel to the leader.
type forwarder struct {
	n *Node

	// mu serializes sends (so the order of requests is the order of calls)
	// and guards the connection state.
	mu       sync.Mutex
	conn     net.Conn
	addr     string
	out      []byte        // requests queued for conn, in call order
	wake     chan struct{} // cap 1: out has data for the connection's writer
	seq      uint64
	inflight map[uint64]fwdCall
	// outcomes maps the sequence number of an in-flight request whose
	// outcome reaches this member later, through the log, to the origin
	// awaiting it (a forwarded reconfig, which the leader accepts at once
	// and runs afterwards). Once the leader accepts it, the origin moves
	// to accepted until the outcome arrives or the connection breaks:
	// breakLocked then fails it, as the writes in flight, since an
	// outcome the leader has yet to propose may never come. Both are nil
	// until used and dropped with the connection.
	outcomes map[uint64]uint64
	accepted map[uint64]struct{}
	// looking is set while a caller of ensureConnLocked looks for a
	// leader (polls Raft and dials), and closed when it stops: the other
	// callers wait for that instead of polling and dialing each.
	looking chan struct{}
}

func newForwarder(n *Node) *forwarder { return &forwarder{n: n, inflight: make(map[uint64]fwdCall)} }

// call sends one request; cb runs exactly once with the response or an error.
// The request is queued for the connection's writer, which sends whatever
// has accumulated in one write: under load one system call carries many
// requests instead of one each.
func (f *forwarder) call(typ byte, payload []byte, cb fwdCall) {
	f.callFor(typ, payload, 0, cb)
}

// callFor is call for a request whose outcome the leader reports through
// the log to origin's waiter (origin 0: in the response, as call): cb
// runs once with the response, and if the leader accepted the request
// (statusOK) and the connection breaks before the outcome arrived,
// origin's waiter fails with errForwardBroken (see outcomes).
func (f *forwarder) callFor(typ byte, payload []byte, origin uint64, cb fwdCall) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.ensureConnLocked(); err != nil {
		if cb != nil {
			cb(0, nil, err)
		}
		return
	}
	seq := uint64(0)
	if cb != nil {
		f.seq++
		seq = f.seq
		f.inflight[seq] = cb
		if origin != 0 {
			if f.outcomes == nil {
				f.outcomes = make(map[uint64]uint64)
			}
			f.outcomes[seq] = origin
		}
	}
	var hdr [13]byte
	binary.BigEndian.PutUint32(hdr[0:], uint32(9+len(payload)))
	hdr[4] = typ
	binary.BigEndian.PutUint64(hdr[5:], seq)
	f.out = append(append(f.out, hdr[:]...), payload...)
	select {
	case f.wake <- struct{}{}:
	default: // the writer is already due to run
	}
}

// writeRequests is the writer of connection c: it swaps out the queued
// requests and writes them until c is replaced or broken. A connection
// that carried nothing for keepalive gets an empty touch: the leader
// closes a stream quiet for memberIdle (idleconn.go), and a follower may
// have no clients, or wait that long for an answer.
func (f *forwarder) writeRequests(c net.Conn, wake chan struct{}, keepalive time.Duration) {
	var spare []byte
	var tick <-chan time.Time
	if keepalive > 0 {
		t := time.NewTicker(keepalive)
		defer t.Stop()
		tick = t.C
	}
	wrote := false
	for {
		select {
		case _, ok := <-wake:
			if !ok {
				return
			}
		case <-tick:
			if wrote {
				wrote = false
				continue
			}
			f.mu.Lock()
			if f.conn == c {
				f.out = append(f.out, emptyTouch[:]...)
			}
			f.mu.Unlock()
		}
		f.mu.Lock()
		if f.conn != c {
			f.mu.Unlock()
			return
		}
		if len(f.out) == 0 {
			f.mu.Unlock()
			continue
		}
		buf := f.out
		f.out = spare[:0]
		f.mu.Unlock()
		if _, err := c.Write(buf); err != nil {
			f.mu.Lock()
			f.breakLocked(c, err)
			f.mu.Unlock()
			return
		}
		wrote = true
		spare = buf
	}
}

// emptyTouch is a msgTouch request with no sessions: the forwarding
// stream's keepalive (every member ignores it).
var emptyTouch = [13]byte{0, 0, 0, 9, msgTouch}

// ensureConnLocked connects to the current leader, waiting for one to be
// elected: at most twice the election timeout, time for Raft's timers to
// elect even after a split vote (a dead leader is replaced much sooner,
// timeouts.go). It gives up at once when the member begins to close
// (BeginClose): goroutines Close waits for (flushTouches, session expiry)
// and the readers of client connections a closing server waits for call
// it, and a closing member's dials all fail (dialed.go), so the wait would
// otherwise run to its end before the member could stop.
//
// One caller at a time looks for the leader (looking), polling Raft every
// 20 ms and dialing the leader it names; the others wait until it stops
// (connected, elected here, or at its deadline) or their own deadline
// passes. During an election every client connection with a write in
// flight waits here: each polling and dialing on its own made thousands
// of timers and mutex hand-offs every 20 ms, and, with a leader named but
// out of reach, a dial each per round.
func (f *forwarder) ensureConnLocked() error {
	deadline := time.Now().Add(2 * f.n.electionTimeout())
	var mine chan struct{} // looking, while this caller looks
	defer func() {
		if mine != nil {
			f.looking = nil
			close(mine)
		}
	}()
	var expiry *time.Timer // this caller's deadline, while it waits for another
	defer func() {
		if expiry != nil {
			expiry.Stop()
		}
	}()
	for {
		select {
		case <-f.n.closing:
			return ErrClosed
		default:
		}
		if f.n.IsLeader() {
			return errLeaderHere
		}
		addr, _ := f.n.raft.LeaderWithID()
		if addr != "" && f.conn != nil && string(addr) == f.addr {
			return nil
		}
		if f.looking != nil && mine == nil {
			if !time.Now().Before(deadline) {
				return errNoLeader
			}
			if expiry == nil {
				expiry = time.NewTimer(time.Until(deadline))
			}
			looking := f.looking
			f.mu.Unlock()
			select {
			case <-f.n.closing:
			case <-looking:
			case <-expiry.C:
			}
			f.mu.Lock()
			continue
		}
		if mine == nil {
			mine = make(chan struct{})
			f.looking = mine
		}
		if addr != "" && !f.n.IsLeader() {
			if f.conn != nil {
				f.breakLocked(f.conn, errForwardBroken)
			}
			c, err := f.n.mux.open(string(addr), streamFwd, f.n.dialTimeout())
			if err == nil {
				f.conn, f.addr, f.out = c, string(addr), nil
				f.wake = make(chan struct{}, 1)
				go f.readResponses(c)
				go f.writeRequests(c, f.wake, time.Duration(f.n.mux.idle.Load())/4)
				return nil
			}
			f.n.log.Debug("cannot reach leader", zap.String("leader", string(addr)), zap.Error(err))
		}
		if time.Now().After(deadline) {
			return errNoLeader
		}
		f.mu.Unlock()
		select {
		case <-f.n.closing:
		case <-time.After(20 * time.Millisecond):
		}
		f.mu.Lock()
	}
}

// breakLocked drops c (if it is still the current connection) and fails
// everything in flight on it, and the accepted requests whose outcome has
// not arrived (see outcomes).
func (f *forwarder) breakLocked(c net.Conn, cause error) {
	if f.conn != c || c == nil {
		return
	}
	c.Close()
	close(f.wake) // ends c's writer
	f.conn, f.addr, f.out, f.wake = nil, "", nil, nil
	calls, accepted := f.inflight, f.accepted
	f.inflight, f.outcomes, f.accepted = make(map[uint64]fwdCall), nil, nil
	for _, cb := range calls {
		cb(0, nil, fmt.Errorf("%w: %v", errForwardBroken, cause))
	}
	for origin := range accepted {
		// A no-op for those whose outcome arrived meanwhile.
		f.n.failWaiter(origin, fmt.Errorf("%w: %v", errForwardBroken, cause))
	}
}

// acceptLocked notes the response status to request seq: if it awaits an
// outcome (outcomes) and the leader accepted it, its origin joins
// accepted. The origins whose outcome has arrived leave accepted here,
// so it holds at most the reconfigs still awaited and this one.
func (f *forwarder) acceptLocked(seq uint64, status byte) {
	origin, ok := f.outcomes[seq]
	if !ok {
		return
	}
	delete(f.outcomes, seq)
	if status != statusOK {
		return
	}
	for o := range f.accepted {
		if !f.n.waiters.has(o) {
			delete(f.accepted, o)
		}
	}
	if !f.n.waiters.has(origin) {
		return // answered already
	}
	if f.accepted == nil {
		f.accepted = make(map[uint64]struct{})
	}
	f.accepted[origin] = struct{}{}
}

func (f *forwarder) readResponses(c net.Conn) {
	br := bufio.NewReaderSize(c, 64<<10)
	var hdr [13]byte // outside the loop: a slice of it escapes into ReadFull
	for {
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			f.mu.Lock()
			f.breakLocked(c, err)
			f.mu.Unlock()
			return
		}
		n := binary.BigEndian.Uint32(hdr[0:])
		if n < 9 || n > maxForwardFrame {
			f.mu.Lock()
			f.breakLocked(c, fmt.Errorf("bad response length %d", n))
			f.mu.Unlock()
			return
		}
		seq := binary.BigEndian.Uint64(hdr[4:])
		status := hdr[12]
		payload := make([]byte, n-9)
		if _, err := io.ReadFull(br, payload); err != nil {
			f.mu.Lock()
			f.breakLocked(c, err)
			f.mu.Unlock()
			return
		}
		f.mu.Lock()
		cb := f.inflight[seq]
		delete(f.inflight, seq)
		if cb != nil && len(f.outcomes) > 0 {
			f.acceptLocked(seq, status)
		}
		f.mu.Unlock()
		if cb != nil {
			cb(status, payload, nil)
		}
	}
}

func (f *forwarder) close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.breakLocked(f.conn, ErrClosed)
}

// serveForward is the leader's side of one follower's forwarding
// connection: requests are handled in arrival order and answered in that
// order once their futures resolve.
func (n *Node) serveForward(c net.Conn) {
	if !n.trackForward(c, true) {
		c.Close()
		return
	}
	defer n.trackForward(c, false)
	defer c.Close()
	// An answer is a log append's future (the common case, kept free of a
	// closure) or a function computing the status and payload.
	type answer struct {
		seq   uint64
		apply raft.ApplyFuture
		wait  func() (byte, []byte)
	}
	answers := make(chan answer, 1024)
	go func() {
		bw := bufio.NewWriterSize(c, 64<<10)
		var hdr [13]byte // outside the loop: a slice of it escapes into Write
		for a := range answers {
			var status byte
			var payload []byte
			if a.apply != nil {
				status, payload = futureStatus(a.apply.Error())
				if status == statusOK {
					n.proposals.committed.Add(1) // commit_count
				}
			} else {
				status, payload = a.wait()
			}
			binary.BigEndian.PutUint32(hdr[0:], uint32(9+len(payload)))
			binary.BigEndian.PutUint64(hdr[4:], a.seq)
			hdr[12] = status
			_, _ = bw.Write(hdr[:])
			_, _ = bw.Write(payload)
			if len(answers) == 0 {
				if bw.Flush() != nil {
					c.Close()
				}
			}
		}
		_ = bw.Flush()
	}()
	defer close(answers)
	br := bufio.NewReaderSize(c, 64<<10)
	var hdr [13]byte         // outside the loop: a slice of it escapes into ReadFull
	var dec znode.TxnDecoder // checks forwarded entries (admit)
	for {
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			return
		}
		size := binary.BigEndian.Uint32(hdr[0:])
		if size < 9 || size > maxForwardFrame {
			return
		}
		typ, seq := hdr[4], binary.BigEndian.Uint64(hdr[5:])
		payload, err := readSized(br, uint64(size-9)) // a bogus size reserves nothing
		if err != nil {
			return
		}
		switch typ {
		case msgApply:
			if err := n.admit(payload, &dec); err != nil {
				n.log.Error("a member forwarded an entry no member could apply", zap.String("from", c.RemoteAddr().String()), zap.Error(err))
				msg := []byte(err.Error())
				answers <- answer{seq: seq, wait: func() (byte, []byte) { return statusError, msg }}
				continue
			}
			n.proposals.record(len(payload))
			answers <- answer{seq: seq, apply: n.raft.Apply(payload, 0)}
		case msgReadIndex:
			f := n.raft.VerifyLeader()
			answers <- answer{seq: seq, wait: func() (byte, []byte) {
				if status, msg := futureStatus(f.Error()); status != statusOK {
					return status, msg
				}
				applied := n.raft.AppliedIndex()
				n.nudge(applied)
				return statusOK, binary.BigEndian.AppendUint64(nil, applied)
			}}
		case msgReconfig:
			var call reconfigCall
			if call.decode(payload) != nil {
				return
			}
			if !n.IsLeader() || n.stepping.Load() {
				msg := []byte(reconfigNotLeader)
				if n.stepping.Load() {
					msg = []byte(reconfigStepping)
				}
				answers <- answer{seq: seq, wait: func() (byte, []byte) { return statusNotLeader, msg }}
				continue
			}
			go n.runReconfig(call)
			answers <- answer{seq: seq, wait: func() (byte, []byte) { return statusOK, nil }}
		case msgTouch:
			for i := 0; i+8 <= len(payload); i += 8 {
				n.tracker.touch(int64(binary.BigEndian.Uint64(payload[i:])))
			}
		default:
			return
		}
	}
}

func futureStatus(err error) (byte, []byte) {
	switch {
	case err == nil:
		return statusOK, nil
	case errors.Is(err, raft.ErrNotLeader), errors.Is(err, raft.ErrLeadershipLost):
		return statusNotLeader, []byte(err.Error())
	default:
		return statusError, []byte(err.Error())
	}
}

// acceptForward serves forwarding connections until the node closes.
func (n *Node) acceptForward() {
	defer n.wg.Done()
	for {
		select {
		case c := <-n.mux.fwdCh:
			go n.serveForward(c)
		case <-n.done:
			return
		}
	}
}

// trackForward records (add) or forgets a follower's forwarding connection
// so that Close can end them: a closed member must not leave followers
// forwarding to a Raft that no longer runs (their requests would wait
// forever). It reports false once the member is closing.
func (n *Node) trackForward(c net.Conn, add bool) bool {
	n.fwdMu.Lock()
	defer n.fwdMu.Unlock()
	if !add {
		delete(n.fwdConns, c)
		return true
	}
	if n.fwdConns == nil {
		return false // closed
	}
	n.fwdConns[c] = struct{}{}
	return true
}

// closeForwards ends every forwarding connection and refuses new ones.
func (n *Node) closeForwards() {
	n.fwdMu.Lock()
	conns := n.fwdConns
	n.fwdConns = nil
	n.fwdMu.Unlock()
	for c := range conns {
		c.Close()
	}
}
