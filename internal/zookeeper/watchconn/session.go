package watchconn

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/zkraft/zkraft/jute"
)

// Credential is one auth packet sent before the watch is set, as
// go-zookeeper's AddAuth sends it: digest with "user:password".
type Credential struct {
	Scheme string
	Auth   []byte
}

// Config is what Open needs.
type Config struct {
	// Dial opens the connection to a server within the given time.
	Dial func(timeout time.Duration) (net.Conn, error)
	// Path is the watched znode; it need not exist.
	Path string
	// Recursive sets a PERSISTENT_RECURSIVE watch (every descendant's
	// NodeCreated, NodeDeleted, NodeDataChanged); otherwise PERSISTENT
	// (Path's own, and NodeChildrenChanged for its children list).
	Recursive bool
	Auth      []Credential
	// Timeout is the session timeout asked for; the server may grant
	// less or more (Session.Timeout).
	Timeout time.Duration
	// Buffer is how many events may wait for the reader (0: 256). One
	// more ends the session rather than drop it.
	Buffer int
}

// Event is one notification.
type Event struct {
	Type jute.EventType
	Path string
	// Zxid is the transaction that caused it, as the notification's
	// reply header carries it.
	Zxid int64
}

// TypeName is ZooKeeper's name for the event's type (NodeCreated...).
func (e Event) TypeName() string {
	if n, ok := eventNames[e.Type]; ok {
		return n
	}
	return fmt.Sprintf("EventType(%d)", int32(e.Type))
}

// eventNames are ZooKeeper's names for notification types.
var eventNames = map[jute.EventType]string{
	jute.EventNodeCreated:         "NodeCreated",
	jute.EventNodeDeleted:         "NodeDeleted",
	jute.EventNodeDataChanged:     "NodeDataChanged",
	jute.EventNodeChildrenChanged: "NodeChildrenChanged",
}

// Session is an open session holding the watch.
type Session struct {
	id       int64         // its ZooKeeper session id
	timeout  time.Duration // the session timeout the server granted
	armed    int64         // the addWatch reply's zxid
	nc       net.Conn
	events   chan Event
	done     chan struct{}
	wmu      sync.Mutex // one frame written at a time
	errMu    sync.Mutex
	err      error // why the session ended, once it has
	closeOne sync.Once
}

// Frame xids of the session's own requests.
const (
	xidAddWatch = 1
	xidClose    = 2
)

// MaxFrame bounds a frame the session reads: only small replies and
// notifications come.
const MaxFrame = 1 << 20

// handshakeTimeout bounds dialing, connecting, authenticating and
// setting the watch.
const handshakeTimeout = 5 * time.Second

// ErrBehind ends a session whose reader fell Config.Buffer events behind.
var ErrBehind = errors.New("watch session: the reader fell behind")

// Open dials, opens a session, sends the credentials and sets the watch,
// then hands notifications on Events until the session ends.
func Open(cfg Config) (*Session, error) {
	nc, err := cfg.Dial(handshakeTimeout)
	if err != nil {
		return nil, fmt.Errorf("watch session: %w", err)
	}
	if cfg.Buffer <= 0 {
		cfg.Buffer = 256
	}
	s := &Session{nc: nc, timeout: cfg.Timeout, events: make(chan Event, cfg.Buffer), done: make(chan struct{})}
	br := bufio.NewReader(nc)
	_ = nc.SetDeadline(time.Now().Add(handshakeTimeout))
	if err := s.handshake(br, cfg); err != nil {
		nc.Close()
		return nil, fmt.Errorf("watch session with %s: %w", nc.RemoteAddr(), err)
	}
	_ = nc.SetDeadline(time.Time{})
	go s.readLoop(br)
	go s.pingLoop(s.timeout / 3)
	return s, nil
}

// ID is the ZooKeeper session id.
func (s *Session) ID() int64 { return s.id }

// Timeout is the session timeout the server granted.
func (s *Session) Timeout() time.Duration { return s.timeout }

// Armed is the zxid of the addWatch reply: every change after it is
// notified, none before.
func (s *Session) Armed() int64 { return s.armed }

// RemoteAddr is the server's address.
func (s *Session) RemoteAddr() net.Addr { return s.nc.RemoteAddr() }

// Events hands on the notifications in the server's order; it is closed
// when the session ends (Err then says why).
func (s *Session) Events() <-chan Event { return s.events }

// Err is why the session ended (nil while it is open, or when Close
// ended it).
func (s *Session) Err() error {
	s.errMu.Lock()
	defer s.errMu.Unlock()
	return s.err
}

func (s *Session) fail(err error) {
	s.errMu.Lock()
	if s.err == nil {
		s.err = err
	}
	s.errMu.Unlock()
	s.Close()
}

// handshake connects, authenticates and sets the watch, reading each
// answer in turn.
func (s *Session) handshake(br *bufio.Reader, cfg Config) error {
	var w jute.Writer
	at := jute.BeginFrame(&w)
	(&jute.ConnectRequest{TimeOut: int32(cfg.Timeout / time.Millisecond), Passwd: make([]byte, 16)}).Encode(&w)
	jute.EndFrame(&w, at)
	if _, err := s.nc.Write(w.Buf); err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	frame, err := jute.ReadFrame(br, nil, MaxFrame)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	var cr jute.ConnectResponse
	if err := jute.Unmarshal(frame, &cr); err != nil || cr.SessionID == 0 {
		return errors.New("connect: the server opened no session")
	}
	s.id = cr.SessionID
	if cr.TimeOut > 0 { // the server's bounds may grant less than asked
		s.timeout = time.Duration(cr.TimeOut) * time.Millisecond
	}
	for _, c := range cfg.Auth {
		if err := s.send(jute.XidAuth, jute.OpAuth, &jute.AuthPacket{Scheme: c.Scheme, Auth: c.Auth}); err != nil {
			return err
		}
	}
	mode := jute.AddWatchPersistent
	if cfg.Recursive {
		mode = jute.AddWatchPersistentRecursive
	}
	if err := s.send(xidAddWatch, jute.OpAddWatch, &jute.PathTypeRequest{Path: cfg.Path, Type: mode}); err != nil {
		return err
	}
	for {
		frame, err := jute.ReadFrame(br, nil, MaxFrame)
		if err != nil {
			return fmt.Errorf("addWatch: %w", err)
		}
		var hdr jute.ReplyHeader
		if err := hdr.Decode(jute.NewReader(frame)); err != nil {
			return fmt.Errorf("addWatch: %w", err)
		}
		if hdr.Err != jute.OK {
			if hdr.Xid == jute.XidAuth {
				return fmt.Errorf("auth: %w", hdr.Err)
			}
			return fmt.Errorf("xid %d: %w", hdr.Xid, hdr.Err)
		}
		if hdr.Xid == xidAddWatch {
			s.armed = hdr.Zxid
			return nil
		}
	}
}

// send writes one request frame.
func (s *Session) send(xid int32, op jute.Op, body jute.Record) error {
	var w jute.Writer
	at := jute.BeginFrame(&w)
	(&jute.RequestHeader{Xid: xid, Type: op}).Encode(&w)
	if body != nil {
		body.Encode(&w)
	}
	jute.EndFrame(&w, at)
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_ = s.nc.SetWriteDeadline(time.Now().Add(handshakeTimeout))
	if _, err := s.nc.Write(w.Buf); err != nil {
		return fmt.Errorf("send %v: %w", op, err)
	}
	return nil
}

// readLoop passes notifications on until the connection ends. When the
// events channel is full (the reader is behind) it ends the session
// rather than drop a change: the events already queued are still handed
// on, then the channel closes.
func (s *Session) readLoop(br *bufio.Reader) {
	defer close(s.events)
	var buf []byte
	for {
		// A ping is answered every third of the timeout: a member silent
		// for two thirds of it is gone (a dead host closes nothing), as
		// ZooKeeper's clients judge with their read timeout.
		if s.timeout > 0 {
			_ = s.nc.SetReadDeadline(time.Now().Add(s.timeout * 2 / 3))
		}
		frame, err := jute.ReadFrame(br, buf, MaxFrame)
		if err != nil {
			s.fail(fmt.Errorf("watch session with %s: %w", s.nc.RemoteAddr(), err))
			return
		}
		buf = frame
		r := jute.NewReader(frame)
		var hdr jute.ReplyHeader
		if hdr.Decode(r) != nil || hdr.Xid != jute.XidNotification {
			continue
		}
		var ev jute.WatcherEvent
		if ev.Decode(r) != nil {
			continue
		}
		if _, ok := eventNames[ev.Type]; !ok {
			continue
		}
		select {
		case s.events <- Event{Type: ev.Type, Path: ev.Path, Zxid: hdr.Zxid}:
		default:
			s.fail(ErrBehind)
			return
		}
	}
}

// pingLoop keeps the session alive until it is closed.
func (s *Session) pingLoop(every time.Duration) {
	if every <= 0 {
		every = time.Second
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-t.C:
			if err := s.send(jute.XidPing, jute.OpPing, nil); err != nil {
				s.fail(err)
				return
			}
		}
	}
}

// Close ends the session (closeSession, so the server forgets it at
// once) and the connection. The events channel closes soon after.
func (s *Session) Close() {
	s.closeOne.Do(func() {
		close(s.done)
		_ = s.send(xidClose, jute.OpCloseSession, nil)
		_ = s.nc.Close()
	})
}
