package console

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
)

// login is one person logged in: their ZooKeeper session and what the
// console needs to serve them. The password is kept (in memory only) for
// the live view's watch session.
type login struct {
	user     string // "" for an anonymous login (world:anyone only)
	from     string // the browser's IP address: its sessions' ip identity
	password string
	csrf     string // sent back in X-CSRF-Token on writes
	// dial connects a session of this login to the server (Config.Dial
	// for the browser's address).
	dial     func(timeout time.Duration) (net.Conn, error)
	conn     *zk.Conn
	zk       *zkc          // conn, timed
	lastUsed atomic.Int64  // unix nanoseconds of the last request of the user's
	lastSeen atomic.Int64  // unix nanoseconds the browser was last heard from (any request, a heartbeat, a stream's end)
	expired  atomic.Bool   // the ZooKeeper session expired: log in again
	streams  atomic.Int32  // live event streams open
	ended    chan struct{} // closed when the login ends: its streams end too
	endOnce  sync.Once
	liveIDs  sync.Map // ZooKeeper session ids of its streams' watch sessions (int64 → struct{})
}

// close ends the login's ZooKeeper session (its ephemerals go with it)
// and its live streams.
func (l *login) close() {
	l.endOnce.Do(func() { close(l.ended) })
	l.conn.Close()
}

// seen notes that the browser was heard from at now.
func (l *login) seen(now time.Time) { l.lastSeen.Store(now.UnixNano()) }

// loginStore maps cookie tokens to logins. Tokens are kept only as their
// SHA-256, so the map holds nothing a browser could present.
//
// Its bounds are by identity, not by client address: logins take no
// client connection place (Config.Dial), and behind a reverse proxy every
// browser has the proxy's address. Anonymous logins have a share of their
// own, so visitors without credentials cannot lock the users with them
// out; a user's logins are bounded so one person cannot take them all.
type loginStore struct {
	max, maxAnon, maxPerUser int

	mu     sync.Mutex
	byHash map[[32]byte]*login
}

func newLoginStore(max, maxAnon, maxPerUser int) *loginStore {
	return &loginStore{max: max, maxAnon: maxAnon, maxPerUser: maxPerUser, byHash: make(map[[32]byte]*login)}
}

// The reasons room refuses a login.
var (
	errTooManyLogins    = errors.New("too many console logins open; try again later")
	errTooManyAnonymous = errors.New("too many anonymous console logins open; log in as a user, or try again later")
	errTooManyForUser   = errors.New("too many console logins open as this user; log out of one first")
)

// room reports why a login as user ("" anonymous) would be refused, nil
// if it would not. The login handler asks before it opens a ZooKeeper
// session, so a refused login costs the ensemble nothing.
func (s *loginStore) room(user string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.roomLocked(user)
}

func (s *loginStore) roomLocked(user string) error {
	if len(s.byHash) >= s.max {
		return errTooManyLogins
	}
	n := 0
	for _, l := range s.byHash {
		if l.user == user {
			n++
		}
	}
	switch {
	case user == "" && n >= s.maxAnon:
		return errTooManyAnonymous
	case user != "" && n >= s.maxPerUser:
		return errTooManyForUser
	}
	return nil
}

// add registers l and returns the cookie token that names it.
func (s *loginStore) add(l *login) (string, error) {
	token := randomToken()
	l.csrf = randomToken()
	now := time.Now()
	l.lastUsed.Store(now.UnixNano())
	l.seen(now)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.roomLocked(l.user); err != nil {
		return "", err
	}
	s.byHash[sha256.Sum256([]byte(token))] = l
	return token, nil
}

// get returns the login token names and notes its browser was heard from;
// used says the request was the user's (not a heartbeat), which holds off
// the idle timeout.
func (s *loginStore) get(token string, used bool) (*login, bool) {
	if token == "" {
		return nil, false
	}
	s.mu.Lock()
	l, ok := s.byHash[sha256.Sum256([]byte(token))]
	s.mu.Unlock()
	if ok {
		now := time.Now()
		l.seen(now)
		if used {
			l.lastUsed.Store(now.UnixNano())
		}
	}
	return l, ok
}

// remove ends the login token names, if any.
func (s *loginStore) remove(token string) {
	h := sha256.Sum256([]byte(token))
	s.mu.Lock()
	l, ok := s.byHash[h]
	delete(s.byHash, h)
	s.mu.Unlock()
	if ok {
		l.close()
	}
}

// Why expire ended a login.
const (
	endGone    = "browser gone"
	endIdle    = "idle"
	endExpired = "session expired"
)

// expire ends, at now, the logins whose browser has been silent for gone
// (no request, heartbeat or open stream), those without a request of the
// user's for idle (an open stream holds them), and those whose ZooKeeper
// session expired. It calls ended for each, after its sessions are closed.
func (s *loginStore) expire(now time.Time, gone, idle time.Duration, ended func(l *login, why string)) {
	type end struct {
		l   *login
		why string
	}
	var out []end
	s.mu.Lock()
	for h, l := range s.byHash {
		streaming := l.streams.Load() > 0
		why := ""
		switch {
		case l.expired.Load():
			why = endExpired
		case !streaming && l.lastSeen.Load() < now.Add(-gone).UnixNano():
			why = endGone
		case !streaming && l.lastUsed.Load() < now.Add(-idle).UnixNano():
			why = endIdle
		default:
			continue
		}
		out = append(out, end{l, why})
		delete(s.byHash, h)
	}
	s.mu.Unlock()
	for _, e := range out {
		e.l.close()
		ended(e.l, e.why)
	}
}

// closeAll ends every login.
func (s *loginStore) closeAll() {
	s.mu.Lock()
	all := s.byHash
	s.byHash = make(map[[32]byte]*login)
	s.mu.Unlock()
	for _, l := range all {
		l.close()
	}
}

// randomToken is 32 bytes from crypto/rand, base64url.
func randomToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// tokensEqual compares a presented token with the expected one in
// constant time.
func tokensEqual(got, want string) bool {
	return len(got) == len(want) && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}
