package console

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/zkraft/zkraft/internal/cli/zkjson"
	"github.com/zkraft/zkraft/jute"
)

// watchSession is a ZooKeeper session of its own holding one persistent
// recursive watch, for a live event stream. go-zookeeper v1.0.4 cannot
// send addWatch, so this speaks the few frames it needs itself: connect,
// auth, addWatch, ping and closeSession. The server treats it as any
// client: the watch's notifications are filtered by the identity's READ
// permission.
type watchSession struct {
	id      int64         // its ZooKeeper session id
	timeout time.Duration // the session timeout the server granted
	nc      net.Conn
	events  chan watchEvent
	done    chan struct{}

	wmu sync.Mutex // one frame at a time

	closeOnce sync.Once
}

// watchEvent is one notification.
type watchEvent struct {
	Type string `json:"type"`
	Path string `json:"path"`
	Zxid string `json:"zxid"`
}

// eventNames are ZooKeeper's names for notification types.
var eventNames = map[jute.EventType]string{
	jute.EventNodeCreated:         "NodeCreated",
	jute.EventNodeDeleted:         "NodeDeleted",
	jute.EventNodeDataChanged:     "NodeDataChanged",
	jute.EventNodeChildrenChanged: "NodeChildrenChanged",
}

// Frame xids of the watch session's own requests.
const (
	xidAddWatch = 1
	xidClose    = 2
)

// maxWatchFrame bounds a frame the watch session reads: it reads only
// small replies and notifications.
const maxWatchFrame = 1 << 20

// openWatch opens a session over dial as user (digest; "" for none) and
// sets a persistent recursive watch on root. Events arrive on
// ws.events until the session ends (the channel is then closed).
func openWatch(dial func(time.Duration) (net.Conn, error), user, password, root string, timeout time.Duration) (*watchSession, error) {
	nc, err := dial(5 * time.Second)
	if err != nil {
		return nil, fmt.Errorf("watch session: %w", err)
	}
	ws := &watchSession{nc: nc, timeout: timeout, events: make(chan watchEvent, 256), done: make(chan struct{})}
	br := bufio.NewReader(nc)
	_ = nc.SetDeadline(time.Now().Add(5 * time.Second))
	if err := ws.handshake(br, user, password, root, timeout); err != nil {
		nc.Close()
		return nil, fmt.Errorf("watch session: %w", err)
	}
	_ = nc.SetDeadline(time.Time{})
	go ws.readLoop(br)
	go ws.pingLoop(ws.timeout / 3)
	return ws, nil
}

// handshake connects, authenticates and sets the watch, reading each
// answer in turn.
func (ws *watchSession) handshake(br *bufio.Reader, user, password, root string, timeout time.Duration) error {
	var w jute.Writer
	at := jute.BeginFrame(&w)
	(&jute.ConnectRequest{TimeOut: int32(timeout / time.Millisecond), Passwd: make([]byte, 16)}).Encode(&w)
	jute.EndFrame(&w, at)
	if _, err := ws.nc.Write(w.Buf); err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	frame, err := jute.ReadFrame(br, nil, maxWatchFrame)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	var cr jute.ConnectResponse
	if err := jute.Unmarshal(frame, &cr); err != nil || cr.SessionID == 0 {
		return errors.New("connect: the server opened no session")
	}
	ws.id = cr.SessionID
	if cr.TimeOut > 0 { // the server's bounds may grant less than asked
		ws.timeout = time.Duration(cr.TimeOut) * time.Millisecond
	}
	if user != "" {
		if err := ws.send(jute.XidAuth, jute.OpAuth, &jute.AuthPacket{Scheme: "digest", Auth: []byte(user + ":" + password)}); err != nil {
			return err
		}
	}
	if err := ws.send(xidAddWatch, jute.OpAddWatch, &jute.PathTypeRequest{Path: root, Type: 1 /* persistent recursive */}); err != nil {
		return err
	}
	for {
		frame, err := jute.ReadFrame(br, nil, maxWatchFrame)
		if err != nil {
			return fmt.Errorf("addWatch: %w", err)
		}
		var hdr jute.ReplyHeader
		if err := hdr.Decode(jute.NewReader(frame)); err != nil {
			return fmt.Errorf("addWatch: %w", err)
		}
		if hdr.Err != jute.OK {
			return fmt.Errorf("xid %d: %w", hdr.Xid, hdr.Err)
		}
		if hdr.Xid == xidAddWatch {
			return nil
		}
	}
}

// send writes one request frame.
func (ws *watchSession) send(xid int32, op jute.Op, body jute.Record) error {
	var w jute.Writer
	at := jute.BeginFrame(&w)
	(&jute.RequestHeader{Xid: xid, Type: op}).Encode(&w)
	if body != nil {
		body.Encode(&w)
	}
	jute.EndFrame(&w, at)
	ws.wmu.Lock()
	defer ws.wmu.Unlock()
	_ = ws.nc.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if _, err := ws.nc.Write(w.Buf); err != nil {
		return fmt.Errorf("send %v: %w", op, err)
	}
	return nil
}

// readLoop passes notifications on until the connection ends. When the
// events channel is full (the stream's reader is behind) it ends the
// session rather than drop a change: the events already queued are still
// handed on, the stream then ends, and the page's EventSource reconnects
// and reloads what it shows.
func (ws *watchSession) readLoop(br *bufio.Reader) {
	defer close(ws.events)
	defer ws.close()
	var buf []byte
	for {
		// A ping is answered every third of the timeout: a member silent
		// for two thirds of it is gone (a dead host closes nothing), as
		// ZooKeeper's clients judge with their read timeout.
		if ws.timeout > 0 {
			_ = ws.nc.SetReadDeadline(time.Now().Add(ws.timeout * 2 / 3))
		}
		frame, err := jute.ReadFrame(br, buf, maxWatchFrame)
		if err != nil {
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
		name, ok := eventNames[ev.Type]
		if !ok {
			continue
		}
		select {
		case ws.events <- watchEvent{Type: name, Path: ev.Path, Zxid: zkjson.Hex(hdr.Zxid)}:
		default:
			return
		}
	}
}

// pingLoop keeps the session alive until it is closed.
func (ws *watchSession) pingLoop(every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ws.done:
			return
		case <-t.C:
			if ws.send(jute.XidPing, jute.OpPing, nil) != nil {
				ws.close()
				return
			}
		}
	}
}

// close ends the session (closeSession, so the server forgets it at once)
// and the connection.
func (ws *watchSession) close() {
	ws.closeOnce.Do(func() {
		close(ws.done)
		_ = ws.send(xidClose, jute.OpCloseSession, nil)
		_ = ws.nc.Close()
	})
}
