package netguard

import (
	"errors"
	"net"
	"sync"
	"syscall"
	"time"

	"go.uber.org/zap"
)

// The accept backoff's bounds when Config leaves them zero: Go's
// net/http.Server backs off on temporary accept errors the same way.
const (
	DefaultMinBackoff = 5 * time.Millisecond
	DefaultMaxBackoff = time.Second
)

// Limits caps the connections a listener holds at once. A connection past
// a cap is closed as soon as it is accepted, and counted in Rejections.
type Limits struct {
	// MaxConns caps the live connections in all; 0: no cap.
	MaxConns int
	// MaxConnsPerIP caps the live connections from one source address;
	// 0: no cap.
	MaxConnsPerIP int
}

// Config configures Wrap.
type Config struct {
	// Name names the listener in logs and Rejections ("client",
	// "admin", "member"...).
	Name string
	// Limits are the caps; zero fields are none, and with neither the
	// accepted connections are returned as they are (no wrapper).
	Limits
	// Logger receives the rate-limited lines about accept errors and
	// refused connections; nil logs nothing.
	Logger *zap.Logger
	// Rejected counts accept errors and refused connections; nil counts
	// nothing.
	Rejected *Rejections
	// LogInterval is the least time between two lines about accept
	// errors, and between two about refused connections; zero means
	// DefaultLogInterval.
	LogInterval time.Duration
	// MinBackoff and MaxBackoff bound the pause after a failed accept,
	// which doubles from the first to the second while accepts keep
	// failing; zero means DefaultMinBackoff and DefaultMaxBackoff.
	MinBackoff, MaxBackoff time.Duration
}

// Listener is a net.Listener that never gives up on an accept error and
// holds no more connections than its Limits allow.
//
// Accept retries every error but a closed listener's: EMFILE and ENFILE
// (the process or the system is out of file descriptors), ECONNABORTED,
// ENOBUFS, ENOMEM and whatever else the kernel reports pass once
// descriptors or memory are freed, while returning would stop the
// listener, and with the client port the whole server. It pauses between
// attempts (MinBackoff doubling to MaxBackoff, so a lasting failure costs
// no CPU), counts each failure in Rejections and logs one line per
// LogInterval.
//
// A connection beyond MaxConns, or beyond MaxConnsPerIP from its source
// address, is closed at once and counted; the others are wrapped so that
// their first Close frees their place. The wrapper keeps syscall.Conn when
// the connection has it.
type Listener struct {
	ln     net.Listener
	cfg    Config
	log    *zap.Logger
	errLog RateLog // accept errors
	capLog RateLog // refused connections

	closed    chan struct{}
	closeOnce sync.Once
	// sleep waits d or until the listener closes (false); tests replace
	// it.
	sleep func(d time.Duration) bool

	mu    sync.Mutex
	live  int            // connections holding a place; guarded by mu
	perIP map[string]int // live connections by source address; guarded by mu
}

var _ net.Listener = (*Listener)(nil)

// Wrap returns ln guarded as cfg says. Closing the Listener closes ln.
func Wrap(ln net.Listener, cfg Config) *Listener {
	if cfg.MinBackoff <= 0 {
		cfg.MinBackoff = DefaultMinBackoff
	}
	if cfg.MaxBackoff < cfg.MinBackoff {
		cfg.MaxBackoff = max(DefaultMaxBackoff, cfg.MinBackoff)
	}
	log := cfg.Logger
	if log == nil {
		log = zap.NewNop()
	}
	l := &Listener{
		ln: ln, cfg: cfg, log: log,
		errLog: RateLog{Interval: cfg.LogInterval},
		capLog: RateLog{Interval: cfg.LogInterval},
		closed: make(chan struct{}),
		perIP:  make(map[string]int),
	}
	l.sleep = l.pause
	return l
}

// Accept waits for the next connection the limits admit. It returns an
// error only once the listener is closed.
func (l *Listener) Accept() (net.Conn, error) {
	var delay time.Duration
	for {
		c, err := l.ln.Accept()
		if err != nil {
			if l.isClosed() || errors.Is(err, net.ErrClosed) {
				return nil, err
			}
			delay = min(max(2*delay, l.cfg.MinBackoff), l.cfg.MaxBackoff)
			l.cfg.Rejected.Add(l.cfg.Name)
			if ok, n := l.errLog.Allow(); ok {
				l.log.Warn("accepting a connection failed; retrying", zap.String("listener", l.cfg.Name),
					zap.Error(err), zap.Duration("retryIn", delay), zap.Int64("suppressed", n))
			}
			if !l.sleep(delay) {
				return nil, net.ErrClosed
			}
			continue
		}
		delay = 0
		gc, why := l.admit(c)
		if gc != nil {
			return gc, nil
		}
		// Counted and logged before the close, so whoever sees the close
		// finds the refusal in the figures.
		l.cfg.Rejected.Add(l.cfg.Name)
		if ok, n := l.capLog.Allow(); ok {
			l.log.Warn("connection refused: "+why, zap.String("listener", l.cfg.Name),
				zap.Stringer("remote", c.RemoteAddr()), zap.Int("maxConns", l.cfg.MaxConns),
				zap.Int("maxConnsPerIP", l.cfg.MaxConnsPerIP), zap.Int64("suppressed", n))
		}
		_ = c.Close()
	}
}

// admit takes a place for c, or says why there is none.
func (l *Listener) admit(c net.Conn) (net.Conn, string) {
	if l.cfg.MaxConns <= 0 && l.cfg.MaxConnsPerIP <= 0 {
		return c, ""
	}
	ip := RemoteIP(c.RemoteAddr())
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cfg.MaxConns > 0 && l.live >= l.cfg.MaxConns {
		return nil, "too many connections"
	}
	if l.cfg.MaxConnsPerIP > 0 && l.perIP[ip] >= l.cfg.MaxConnsPerIP {
		return nil, "too many connections from one address"
	}
	l.live++
	l.perIP[ip]++
	gc := &conn{Conn: c, l: l, ip: ip}
	if sc, ok := c.(syscall.Conn); ok {
		return &sysConn{conn: gc, sc: sc}, ""
	}
	return gc, ""
}

// release frees the place of a connection from ip.
func (l *Listener) release(ip string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.live--
	if l.perIP[ip]--; l.perIP[ip] <= 0 {
		delete(l.perIP, ip)
	}
}

// Live is the number of connections holding a place (0 without limits,
// where none is counted).
func (l *Listener) Live() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.live
}

// Close closes the listener: a pending Accept returns, even one pausing
// after an error. The connections already accepted stay open.
func (l *Listener) Close() error {
	l.closeOnce.Do(func() { close(l.closed) })
	return l.ln.Close()
}

// Addr implements net.Listener.
func (l *Listener) Addr() net.Addr { return l.ln.Addr() }

func (l *Listener) isClosed() bool {
	select {
	case <-l.closed:
		return true
	default:
		return false
	}
}

// pause waits d, or until the listener is closed (false).
func (l *Listener) pause(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-l.closed:
		return false
	}
}

// RemoteIP is the address a connection from a is counted under: its IP,
// or the whole address when it has none.
func RemoteIP(a net.Addr) string {
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.IP.String()
	}
	if a == nil {
		return ""
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
}

// conn is an admitted connection: its first Close frees its place.
type conn struct {
	net.Conn
	l    *Listener
	ip   string
	once sync.Once
}

// Close implements net.Conn.
func (c *conn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.release(c.ip) })
	return err
}

// CloseWrite shuts the sending side when the connection can (TCP), as
// net/http does before it closes a connection it refused.
func (c *conn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return errors.ErrUnsupported
}

// sysConn is a conn over a socket that has syscall.Conn (the client
// port's readers wait on the raw socket).
type sysConn struct {
	*conn
	sc syscall.Conn
}

// SyscallConn implements syscall.Conn.
func (c *sysConn) SyscallConn() (syscall.RawConn, error) { return c.sc.SyscallConn() }
