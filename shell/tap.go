package shell

import (
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/zkraft/zkraft/jute"
)

// The tap is how the shell sends the operations go-zookeeper v1.0.4 has no
// method for (addWatch, whoAmI, getEphemerals, getAllChildrenNumber,
// removeWatches, a reconfig that returns the new config, setWatches2) on the
// same session go-zookeeper owns.
//
// go-zookeeper accepts a custom Dialer (zk.WithDialer). The tap's dialer wraps
// every TCP connection go-zookeeper opens in a tapConn, which
//   - passes go-zookeeper's writes through unchanged (each is one whole frame),
//     serialised with the tap's own frames by a write mutex;
//   - reads the server's frames itself, diverts replies whose xid lies in the
//     tap's private range (tapXidBase and up) to the waiting tap caller, and
//     hands every other frame, byte for byte, to go-zookeeper;
//   - reports every notification (xid -1) to a callback before go-zookeeper
//     sees it, so events are printed in wire order, including the persistent
//     watch events go-zookeeper would drop.
//
// The server treats xids as opaque (only -1, -2, -4, -8 are reserved), so the
// two xid spaces never meet: go-zookeeper counts up from 1 and a shell issues
// far fewer than 2^30 requests.
type tap struct {
	// onNotify is called, on go-zookeeper's receive goroutine, for every
	// watch notification in wire order.
	onNotify func(zxid int64, ev jute.WatcherEvent)
	// persistent lists the persistent and persistent-recursive watches to
	// re-arm after a reconnect (may be nil).
	persistent func() (exact, recursive []string)
	// onAuthFailed is called when the server rejects an auth packet (the
	// reply carries the packet's xid and AuthFailed; the server closes the
	// connection right after).
	onAuthFailed func()
	// tls, when set, dials over TLS (the shell's TLS option).
	tls *tls.Config

	mu      sync.Mutex
	dialed  *tapConn // most recently dialed connection
	cur     *tapConn // connection whose session is established; nil when none
	ready   chan struct{}
	nextXid int32
	pending map[int32]chan tapReply // xid -> waiter; guarded by mu
	lastZx  int64                   // last zxid seen in any reply; guarded by mu
}

// tapXidBase is the first xid the tap uses; go-zookeeper's xids stay far below.
const tapXidBase = 0x40000000

// tapReply is a diverted reply: its header and body.
type tapReply struct {
	hdr  jute.ReplyHeader
	body []byte
	err  error
}

// errTapConnLoss reports that the connection carrying a tap request died.
var errTapConnLoss = errors.New("connection lost")

func newTap(onNotify func(int64, jute.WatcherEvent)) *tap {
	return &tap{
		onNotify: onNotify,
		ready:    make(chan struct{}),
		nextXid:  tapXidBase,
		pending:  make(map[int32]chan tapReply),
	}
}

// dial is a zk.Dialer: it opens a TCP connection and wraps it.
func (t *tap) dial(network, address string, timeout time.Duration) (net.Conn, error) {
	var c net.Conn
	var err error
	if t.tls != nil {
		cfg := t.tls
		if host, _, splitErr := net.SplitHostPort(address); splitErr == nil && !cfg.InsecureSkipVerify {
			cfg = cfg.Clone()
			cfg.ServerName = host
		}
		c, err = tls.DialWithDialer(&net.Dialer{Timeout: timeout}, network, address, cfg)
	} else {
		c, err = net.DialTimeout(network, address, timeout)
	}
	if err != nil {
		return nil, err
	}
	tc := &tapConn{Conn: c, t: t}
	t.mu.Lock()
	t.dialed = tc
	t.mu.Unlock()
	return tc, nil
}

// markReady is called once go-zookeeper reports the session established: tap
// requests may flow on the connection dialed last from then on. It returns
// that connection.
func (t *tap) markReady() *tapConn {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cur = t.dialed
	defer func() {
		select {
		case <-t.ready:
		default:
			close(t.ready)
		}
	}()
	return t.cur
}

// lost forgets connection c and fails every request waiting on it.
func (t *tap) lost(c *tapConn) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cur != c {
		return
	}
	t.cur = nil
	t.ready = make(chan struct{})
	for xid, ch := range t.pending {
		ch <- tapReply{err: errTapConnLoss}
		delete(t.pending, xid)
	}
}

// lastZxid returns the highest zxid seen in a reply header.
func (t *tap) lastZxid() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.lastZx
}

// call sends one request with opcode op and body req and waits for its reply,
// decoding the body into resp (may be nil). A server error comes back as a
// jute.ErrCode. It waits up to timeout for a connection and for the reply.
func (t *tap) call(op jute.Op, req jute.Record, resp jute.Record, timeout time.Duration) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	ch, err := t.send(op, req, deadline.C)
	if err != nil {
		return err
	}
	select {
	case r := <-ch:
		if r.err != nil {
			return r.err
		}
		if r.hdr.Err != jute.OK {
			return r.hdr.Err
		}
		if resp == nil {
			return nil
		}
		if err := jute.Unmarshal(r.body, resp); err != nil {
			return fmt.Errorf("decode %v reply: %w", op, err)
		}
		return nil
	case <-deadline.C:
		return errTapConnLoss
	}
}

// send writes one request once a connection is ready and returns the channel
// its reply will arrive on.
func (t *tap) send(op jute.Op, req jute.Record, deadline <-chan time.Time) (chan tapReply, error) {
	for {
		t.mu.Lock()
		c, ready := t.cur, t.ready
		if c != nil {
			break
		}
		t.mu.Unlock()
		select {
		case <-ready:
		case <-deadline:
			return nil, errTapConnLoss
		}
	}
	// t.mu is held here.
	xid := t.nextXid
	t.nextXid++
	if t.nextXid < tapXidBase {
		t.nextXid = tapXidBase
	}
	ch := make(chan tapReply, 1)
	t.pending[xid] = ch
	c := t.cur
	t.mu.Unlock()

	var w jute.Writer
	at := jute.BeginFrame(&w)
	hdr := jute.RequestHeader{Xid: xid, Type: op}
	hdr.Encode(&w)
	if req != nil {
		req.Encode(&w)
	}
	jute.EndFrame(&w, at)
	if err := c.writeFrame(w.Buf); err != nil {
		t.mu.Lock()
		delete(t.pending, xid)
		t.mu.Unlock()
		return nil, fmt.Errorf("send %v: %w", op, err)
	}
	return ch, nil
}

// sendAsync writes a request whose reply is read and dropped.
func (t *tap) sendAsync(c *tapConn, op jute.Op, req jute.Record) {
	t.mu.Lock()
	xid := t.nextXid
	t.nextXid++
	t.pending[xid] = make(chan tapReply, 1)
	t.mu.Unlock()
	var w jute.Writer
	at := jute.BeginFrame(&w)
	hdr := jute.RequestHeader{Xid: xid, Type: op}
	hdr.Encode(&w)
	req.Encode(&w)
	jute.EndFrame(&w, at)
	_ = c.writeFrame(w.Buf) // a failed write shows up as a lost connection
}

// tapConn is one TCP connection shared by go-zookeeper and the tap.
type tapConn struct {
	net.Conn
	t *tap

	wmu sync.Mutex // serialises whole-frame writes

	// Read side: only go-zookeeper's single reader goroutine touches these.
	shaken  bool   // the ConnectResponse has been passed through
	pending []byte // bytes of the current frame not yet handed over
}

// maxFrame bounds a frame read by the tap (jute.maxbuffer plus headroom).
const maxFrame = 16 << 20

// Write passes one of go-zookeeper's frames through. A SetWatches (which
// go-zookeeper sends after a reconnect) is rewritten into a SetWatches2 that
// also carries the persistent watches: ZooKeeper 3.8 keeps one watch mode
// per path and connection, so persistent watches must be re-armed in the
// same request as, or after, the standard ones on the same paths.
func (c *tapConn) Write(p []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if frame, ok := c.t.upgradeSetWatches(p); ok {
		if _, err := c.Conn.Write(frame); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return c.Conn.Write(p)
}

// upgradeSetWatches returns p rewritten as a SetWatches2 frame when p is a
// SetWatches request frame and there are persistent watches to add.
func (t *tap) upgradeSetWatches(p []byte) ([]byte, bool) {
	const hdr = 4 + 8 // length prefix + RequestHeader
	if len(p) < hdr || jute.Op(int32(binary.BigEndian.Uint32(p[8:12]))) != jute.OpSetWatches || t.persistent == nil {
		return nil, false
	}
	exact, recursive := t.persistent()
	if len(exact)+len(recursive) == 0 {
		return nil, false
	}
	var sw jute.SetWatches
	if err := jute.Unmarshal(p[hdr:], &sw); err != nil {
		return nil, false
	}
	sw.V2 = true
	sw.PersistentWatches, sw.PersistentRecursive = exact, recursive
	var w jute.Writer
	at := jute.BeginFrame(&w)
	rh := jute.RequestHeader{Xid: int32(binary.BigEndian.Uint32(p[4:8])), Type: jute.OpSetWatches2}
	rh.Encode(&w)
	sw.Encode(&w)
	jute.EndFrame(&w, at)
	return w.Buf, true
}

func (c *tapConn) writeFrame(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := c.Conn.SetWriteDeadline(time.Now().Add(10 * time.Second)); err != nil {
		return fmt.Errorf("set write deadline: %w", err)
	}
	_, err := c.Conn.Write(b)
	_ = c.Conn.SetWriteDeadline(time.Time{})
	if err != nil {
		return fmt.Errorf("write frame: %w", err)
	}
	return nil
}

// Read hands go-zookeeper the server's frames, minus the tap's replies.
func (c *tapConn) Read(p []byte) (int, error) {
	for len(c.pending) == 0 {
		frame, err := c.readFrame()
		if err != nil {
			c.t.lost(c)
			return 0, err
		}
		c.pending = frame
	}
	n := copy(p, c.pending)
	c.pending = c.pending[n:]
	return n, nil
}

// Close forgets the connection in the tap before closing it.
func (c *tapConn) Close() error {
	c.t.lost(c)
	return c.Conn.Close()
}

// readFrame reads frames until one is for go-zookeeper and returns it with
// its length prefix.
func (c *tapConn) readFrame() ([]byte, error) {
	for {
		var lenb [4]byte
		if _, err := io.ReadFull(c.Conn, lenb[:]); err != nil {
			return nil, err
		}
		n := int32(binary.BigEndian.Uint32(lenb[:]))
		if n < 0 || n > maxFrame {
			return nil, fmt.Errorf("frame length %d out of range", n)
		}
		buf := make([]byte, 4+int(n))
		copy(buf, lenb[:])
		if _, err := io.ReadFull(c.Conn, buf[4:]); err != nil {
			return nil, err
		}
		if !c.shaken {
			c.shaken = true
			return buf, nil
		}
		body := buf[4:]
		if len(body) < jute.ReplyHeaderSize {
			return buf, nil
		}
		var hdr jute.ReplyHeader
		r := jute.NewReader(body[:jute.ReplyHeaderSize])
		if err := hdr.Decode(r); err != nil {
			return buf, nil
		}
		if hdr.Zxid > 0 {
			c.t.mu.Lock()
			if hdr.Zxid > c.t.lastZx {
				c.t.lastZx = hdr.Zxid
			}
			c.t.mu.Unlock()
		}
		switch {
		case hdr.Xid == jute.XidNotification:
			var ev jute.WatcherEvent
			if err := jute.Unmarshal(body[jute.ReplyHeaderSize:], &ev); err == nil && c.t.onNotify != nil {
				c.t.onNotify(hdr.Zxid, ev)
			}
			return buf, nil
		case hdr.Err == jute.ErrCode(-115) && hdr.Xid < tapXidBase: // AuthFailed: only auth packets get it
			if c.t.onAuthFailed != nil {
				c.t.onAuthFailed()
			}
			return buf, nil
		case hdr.Xid >= tapXidBase:
			c.t.mu.Lock()
			ch, ok := c.t.pending[hdr.Xid]
			delete(c.t.pending, hdr.Xid)
			c.t.mu.Unlock()
			if ok {
				ch <- tapReply{hdr: hdr, body: body[jute.ReplyHeaderSize:]}
			}
			continue
		default:
			return buf, nil
		}
	}
}
