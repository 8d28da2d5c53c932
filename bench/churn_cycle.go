package bench

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"

	"github.com/zkraft/zkraft/jute"
)

// churnClient runs ephemeral-churn cycles on its worker's goroutine alone.
// A cycle is short and strictly sequential (connect, the creates and the
// closeSession pipelined in one write, close), so the reader and writer
// goroutines, channels and buffers of a long-lived session (conn) are pure
// overhead here. With them the client spent ~155 µs of CPU per cycle against
// a 3-member zkraft ensemble, on the two CPUs the run saturates; here ~110
// µs, nearly all of it the kernel's TCP work: a cycle is two writes, a few
// reads and the connection's own system calls, with buffers reused from
// cycle to cycle.
type churnClient struct {
	addr           string
	sessionTimeout time.Duration // requested session timeout; also bounds a cycle's I/O
	dialer         net.Dialer
	w              jute.Writer
	rbuf           []byte // received bytes; frames are parsed in place
	off            int    // rbuf[off:] is not parsed yet
	r              jute.Reader
	digits         [20]byte
}

// maxChurnReply bounds a reply frame in a churn cycle, whose replies are a
// few dozen bytes: ZooKeeper's default jute.maxbuffer.
const maxChurnReply = 1 << 20

// newChurnClient returns a client for cycles against the server at addr.
func newChurnClient(addr string, sessionTimeout, connectTimeout time.Duration) *churnClient {
	return &churnClient{
		addr:           addr,
		sessionTimeout: sessionTimeout,
		// No keepalive: a cycle's connection lives for milliseconds, and
		// Go's keepalive costs three setsockopt calls per connection.
		dialer: net.Dialer{Timeout: connectTimeout, KeepAlive: -1},
		rbuf:   make([]byte, 0, 4<<10),
	}
}

// cycle opens a session, creates n ephemerals named prefix+i with value,
// closes the session and records connect, create, closeSession and the
// whole cycle in rec. connected is false when no session was opened (the
// server refused or was unreachable); err is a failure after that.
func (cc *churnClient) cycle(rec *recorder, prefix string, n int, value []byte) (connected bool, err error) {
	t0 := nowNanos()
	nc, err := cc.dialer.Dial("tcp", cc.addr)
	if err != nil {
		return false, fmt.Errorf("dial %s: %w", cc.addr, err)
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(cc.sessionTimeout))

	// The handshake.
	cc.w.Reset()
	appendConnectRequest(&cc.w, cc.sessionTimeout, nil)
	if _, err := nc.Write(cc.w.Buf); err != nil {
		return false, fmt.Errorf("send ConnectRequest: %w", err)
	}
	cc.rbuf, cc.off = cc.rbuf[:0], 0
	frame, err := cc.next(nc)
	if err != nil {
		return false, fmt.Errorf("read ConnectResponse: %w", err)
	}
	var resp jute.ConnectResponse
	cc.r.Reset(frame)
	if err := decodeConnectResponse(&resp, &cc.r); err != nil {
		return false, err
	}
	rec.sample(classConnect, t0, nowNanos())

	// The creates and the closeSession, in one write.
	cc.w.Reset()
	for i := 0; i < n; i++ {
		at := jute.BeginFrame(&cc.w)
		cc.w.Int(int32(i + 1))
		cc.w.Int(int32(jute.OpCreate))
		digits := strconv.AppendInt(cc.digits[:0], int64(i), 10)
		cc.w.Int(int32(len(prefix) + len(digits))) // the path, prefix + i, as a jute string
		cc.w.Buf = append(append(cc.w.Buf, prefix...), digits...)
		cc.w.Buffer(value)
		jute.WriteACLs(&cc.w, openACL)
		cc.w.Int(jute.FlagEphemeral)
		jute.EndFrame(&cc.w, at)
	}
	at := jute.BeginFrame(&cc.w)
	cc.w.Int(int32(n + 1))
	cc.w.Int(int32(jute.OpCloseSession))
	jute.EndFrame(&cc.w, at)
	sent := nowNanos()
	if _, err := nc.Write(cc.w.Buf); err != nil {
		cc.lost(rec, sent, n, 0)
		return true, fmt.Errorf("send requests: %w", err)
	}

	// Their replies, in order.
	var hdr jute.ReplyHeader
	for i := 0; i <= n; {
		frame, err := cc.next(nc)
		if err != nil {
			cc.lost(rec, sent, n, i)
			return true, fmt.Errorf("read reply: %w", err)
		}
		cc.r.Reset(frame)
		if err := hdr.Decode(&cc.r); err != nil {
			cc.lost(rec, sent, n, i)
			return true, fmt.Errorf("%w: reply header: %w", ErrProtocol, err)
		}
		if hdr.Xid < 0 {
			continue // a notification or a ping's answer: not ours to count
		}
		if hdr.Xid != int32(i+1) {
			cc.lost(rec, sent, n, i)
			return true, fmt.Errorf("%w: reply xid %d out of order, expected %d", ErrProtocol, hdr.Xid, i+1)
		}
		rec.done(churnClass(i, n), sent, nowNanos(), hdr.Err)
		if i == n && hdr.Err != jute.OK {
			return true, fmt.Errorf("closeSession: %w", hdr.Err)
		}
		i++
	}
	rec.sample(classCycle, t0, nowNanos())
	return true, nil
}

// lost records the requests from the answered-th on (the creates, then
// the closeSession) as lost with the connection.
func (cc *churnClient) lost(rec *recorder, sent int64, n, answered int) {
	for i := answered; i <= n; i++ {
		rec.failIn(churnClass(i, n), sent, jute.ErrConnectionLoss, "")
	}
}

// churnClass is the class of a cycle's i-th request: the n creates, then
// the closeSession.
func churnClass(i, n int) opClass {
	if i == n {
		return classClose
	}
	return classCreate
}

// next returns the next frame received on nc, reading as needed. Its bytes
// stay valid until the following call.
func (cc *churnClient) next(nc net.Conn) ([]byte, error) {
	for {
		avail := cc.rbuf[cc.off:]
		need := 4
		if len(avail) >= 4 {
			size := binary.BigEndian.Uint32(avail)
			if size > maxChurnReply {
				return nil, fmt.Errorf("%w: frame of %d bytes", ErrProtocol, size)
			}
			if need = 4 + int(size); len(avail) >= need {
				cc.off += need
				return avail[4:need], nil
			}
		}
		if cc.off > 0 { // move the partial frame to the front
			cc.rbuf = cc.rbuf[:copy(cc.rbuf, avail)]
			cc.off = 0
		}
		if need > cap(cc.rbuf) {
			grown := make([]byte, len(cc.rbuf), need)
			copy(grown, cc.rbuf)
			cc.rbuf = grown
		}
		m, err := nc.Read(cc.rbuf[len(cc.rbuf):cap(cc.rbuf)])
		cc.rbuf = cc.rbuf[:len(cc.rbuf)+m]
		if m > 0 {
			continue
		}
		if err == nil {
			err = io.ErrNoProgress
		} else if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
}
