package shell

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkraft/zkraft/jute"
)

// session is one go-zookeeper connection plus the tap sharing it, the
// shell's record of the watches it set, and the state shown in the prompt.
type session struct {
	host string
	root string // chroot of the connect string, "" for none
	conn *zk.Conn
	tap  *tap

	mu        sync.Mutex
	state     string // zkCli's ZooKeeper.States name
	closed    bool   // closed by the shell: later events are not printed
	connected bool   // a SyncConnected event was printed last
	lost      bool   // the session's connection dropped and is being re-made
	hadSess   chan struct{}
	watches   watchSet
}

// stateName is the state shown in the prompt.
func (ss *session) stateName() string {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.state
}

// alive is ZooKeeper.States.isAlive: anything but CLOSED / AUTH_FAILED.
func (ss *session) alive() bool {
	st := ss.stateName()
	return st != "CLOSED" && st != "AUTH_FAILED" && st != "NOT_CONNECTED"
}

// quietLogger drops go-zookeeper's log lines; the shell reports connection
// changes as zkCli does, through WATCHER:: events.
type quietLogger struct{}

// Printf implements zk.Logger and prints nothing.
func (quietLogger) Printf(string, ...any) {}

// connect replaces the current session with a new one to host, as
// ZooKeeperMain.connectToZK. It does not wait for the session unless
// WaitForConnection is set.
func (s *Shell) connect(host string) error {
	if s.sess != nil && s.sess.alive() {
		s.closeSession(true)
	}
	servers, chroot := splitConnectString(host)
	ss := &session{host: host, root: chroot, state: "CONNECTING", hadSess: make(chan struct{})}
	s.sess = ss
	if chroot != "" {
		if err := validatePath(chroot, false); err != nil {
			ss.state = "CLOSED"
			return err
		}
	}
	ss.tap = newTap(func(zxid int64, ev jute.WatcherEvent) { s.onNotify(ss, zxid, ev) })
	ss.tap.persistent = ss.persistentWatches
	ss.tap.onAuthFailed = func() { s.authFailed(ss) }
	ss.tap.tls = s.opts.TLS
	conn, _, err := zk.Connect(servers, s.opts.Timeout,
		zk.WithDialer(ss.tap.dial),
		zk.WithLogger(quietLogger{}),
		zk.WithLogInfo(false),
		zk.WithEventCallback(func(ev zk.Event) { s.onEvent(ss, ev) }),
	)
	if err != nil {
		ss.state = "CLOSED"
		return &cliError{msg: err.Error(), code: exitFailed, err: fmt.Errorf("connect %s: %w", host, err)}
	}
	ss.mu.Lock()
	ss.conn = conn
	ss.mu.Unlock()
	if err := s.addCredentials(conn); err != nil {
		s.closeSession(false)
		return err
	}
	if s.opts.WaitForConnection {
		select {
		case <-ss.hadSess:
		case <-time.After(s.opts.Timeout):
			s.closeSession(false)
			return failf("%s", keeperMessage(-4, ""))
		}
	}
	return nil
}

// splitConnectString splits "h1:p1,h2:p2/chroot" into servers and chroot
// (without a trailing slash; "" for none).
func splitConnectString(host string) ([]string, string) {
	chroot := ""
	if i := strings.Index(host, "/"); i >= 0 {
		host, chroot = host[:i], host[i:]
		chroot = strings.TrimSuffix(chroot, "/")
	}
	return strings.Split(host, ","), chroot
}

// closeSession closes the current session; announce prints zkCli's Closed
// event (as the close and connect commands do).
func (s *Shell) closeSession(announce bool) {
	ss := s.sess
	if ss == nil {
		return
	}
	ss.mu.Lock()
	if ss.closed {
		ss.mu.Unlock()
		return
	}
	ss.closed = true
	ss.state = "CLOSED"
	conn := ss.conn
	ss.mu.Unlock()
	if conn != nil {
		conn.Close()
	}
	if announce {
		s.printEvent("Closed", "None", "", -1)
	}
}

// Close ends the session without printing anything (used at exit).
func (s *Shell) Close() { s.closeSession(false) }

// onEvent receives go-zookeeper's session events on its connection
// goroutine and turns them into zkCli's state names and WATCHER:: lines.
func (s *Shell) onEvent(ss *session, ev zk.Event) {
	if ev.Type != zk.EventSession {
		return // node events are printed by the tap, in wire order
	}
	ss.mu.Lock()
	if ss.closed {
		ss.mu.Unlock()
		return
	}
	var print, note string
	// Expiry closes the session under the lock; the closed check above then
	// silences go-zookeeper's later events.
	switch ev.State {
	case zk.StateHasSession:
		ss.state = "CONNECTED"
		if ss.lost {
			note = fmt.Sprintf("Reconnected to %s (session 0x%x)", ev.Server, uint64(ss.conn.SessionID()))
		}
		ss.lost = false
		ss.connected = true
		print = "SyncConnected"
		select {
		case <-ss.hadSess:
		default:
			close(ss.hadSess)
		}
	case zk.StateConnecting, zk.StateConnected:
		ss.state = "CONNECTING"
	case zk.StateDisconnected:
		ss.state = "CONNECTING"
		if ss.connected {
			print = "Disconnected"
			note = fmt.Sprintf("Connection to %s lost; reconnecting...", ev.Server)
			ss.lost = true
		}
		ss.connected = false
	case zk.StateExpired:
		// As in zkCli the session is over: CLOSED, "Not connected" until
		// connect (go-zookeeper would silently open a new one).
		ss.state = "CLOSED"
		ss.closed = true
		ss.connected = false
		print = "Expired"
		note = "Session expired: its ephemeral nodes and watches are gone; use connect to open a new session"
		if ss.conn != nil {
			go ss.conn.Close() // not on go-zookeeper's connection goroutine
		}
	case zk.StateAuthFailed:
		ss.state = "AUTH_FAILED"
		ss.connected = false
		print = "AuthFailed"
	}
	ss.mu.Unlock()
	if ev.State == zk.StateHasSession {
		c := ss.tap.markReady()
		ss.rearmPersistent(c)
	}
	if note != "" && s.inInteractive.Load() {
		s.eprintf("\n%s\n", note)
		if print == "" || !s.watchesOn() {
			s.repromptIfIdle()
		}
	}
	if print != "" {
		s.printEvent(print, "None", "", -1)
	}
}

// authFailed handles a rejected addauth as the Java client does: an
// AuthFailed event, then the session is unusable (AUTH_FAILED, "Not
// connected") instead of go-zookeeper's silent reconnect.
func (s *Shell) authFailed(ss *session) {
	ss.mu.Lock()
	if ss.closed {
		ss.mu.Unlock()
		return
	}
	ss.closed = true
	ss.state = "AUTH_FAILED"
	conn := ss.conn
	ss.mu.Unlock()
	s.printEvent("AuthFailed", "None", "", -1)
	if conn != nil {
		go conn.Close() // not on go-zookeeper's receive goroutine
	}
}

// onNotify prints a watch notification and updates the watch records.
func (s *Shell) onNotify(ss *session, zxid int64, ev jute.WatcherEvent) {
	ev.Path = ss.chroot().client(ev.Path)
	ss.mu.Lock()
	closed := ss.closed
	ss.watches.fired(ev.Path, int32(ev.Type))
	ss.mu.Unlock()
	if closed {
		return
	}
	s.printEvent(stateText(ev.State), eventTypeText(int32(ev.Type)), ev.Path, zxid)
}

// printEvent prints a WatchedEvent as zkCli 3.9's MyWatcher does. An empty
// path prints as null (Java's null path of session events).
func (s *Shell) printEvent(state, typ, path string, zxid int64) {
	if !s.watchesOn() || s.quietEvent(typ, path) {
		return
	}
	if path == "" {
		path = "null"
	}
	s.printf("\nWATCHER::\n\nWatchedEvent state:%s type:%s path:%s zxid: %d\n", state, typ, path, zxid)
	s.repromptIfIdle()
}

// repromptIfIdle prints the prompt again after asynchronous output that
// arrived while the line editor was waiting, which left the cursor on a
// fresh line. (Text typed but not entered stays in the editor's buffer.)
func (s *Shell) repromptIfIdle() {
	if !s.atPrompt.Load() {
		return
	}
	host, state := s.opts.Server, "CLOSED"
	if ss := s.idleSess.Load(); ss != nil {
		host, state = ss.host, ss.stateName()
	}
	s.printf("[zk: %s(%s) %d] ", host, state, s.idleCount.Load())
}

// stateText is Watcher.Event.KeeperState's name.
func stateText(st int32) string {
	switch st {
	case 0:
		return "Disconnected"
	case 3:
		return "SyncConnected"
	case 4:
		return "AuthFailed"
	case 5:
		return "ConnectedReadOnly"
	case 6:
		return "SaslAuthenticated"
	case 7:
		return "Closed"
	case -112:
		return "Expired"
	}
	return fmt.Sprintf("Unknown%d", st)
}

// eventTypeText is Watcher.Event.EventType's name.
func eventTypeText(t int32) string {
	switch t {
	case -1:
		return "None"
	case 1:
		return "NodeCreated"
	case 2:
		return "NodeDeleted"
	case 3:
		return "NodeDataChanged"
	case 4:
		return "NodeChildrenChanged"
	case 5:
		return "DataWatchRemoved"
	case 6:
		return "ChildWatchRemoved"
	case 7:
		return "PersistentWatchRemoved"
	}
	return fmt.Sprintf("Unknown%d", t)
}

// zk returns the current connection, seen through the chroot.
func (s *Shell) zk() chrootConn { return s.sess.chroot() }

// chroot returns the session's connection with its chroot applied.
func (ss *session) chroot() chrootConn {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return chrootConn{Conn: ss.conn, root: ss.root}
}

// serverPath maps a client path into the chroot.
func (s *Shell) serverPath(p string) string { return chrootConn{root: s.sess.root}.server(p) }
