package console

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
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
	from     string // the browser's IP address, for the per-address bound
	password string
	csrf     string // sent back in X-CSRF-Token on writes
	conn     *zk.Conn
	zk       *zkc          // conn, timed
	lastUsed atomic.Int64  // unix nanoseconds of the last request
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

// loginStore maps cookie tokens to logins. Tokens are kept only as their
// SHA-256, so the map holds nothing a browser could present.
type loginStore struct {
	max, maxPerAddr int

	mu     sync.Mutex
	byHash map[[32]byte]*login
}

func newLoginStore(max, maxPerAddr int) *loginStore {
	return &loginStore{max: max, maxPerAddr: maxPerAddr, byHash: make(map[[32]byte]*login)}
}

// errTooManyLogins is returned by add when MaxLogins are open, and
// errTooManyFromAddr when MaxLoginsPerAddr are open from one address (so
// one client cannot take every login and lock the operators out).
var (
	errTooManyLogins   = errors.New("too many console logins open; try again later")
	errTooManyFromAddr = errors.New("too many console logins open from this address; log out of one first")
)

// room reports why a login from addr would be refused, nil if it would
// not. The login handler asks before it opens a ZooKeeper session, so a
// refused login costs the ensemble nothing.
func (s *loginStore) room(addr string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.roomLocked(addr)
}

func (s *loginStore) roomLocked(addr string) error {
	if len(s.byHash) >= s.max {
		return errTooManyLogins
	}
	n := 0
	for _, l := range s.byHash {
		if l.from == addr {
			n++
		}
	}
	if n >= s.maxPerAddr {
		return errTooManyFromAddr
	}
	return nil
}

// add registers l and returns the cookie token that names it.
func (s *loginStore) add(l *login) (string, error) {
	token := randomToken()
	l.csrf = randomToken()
	l.lastUsed.Store(time.Now().UnixNano())
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.roomLocked(l.from); err != nil {
		return "", err
	}
	s.byHash[sha256.Sum256([]byte(token))] = l
	return token, nil
}

// get returns the login token names and marks it used.
func (s *loginStore) get(token string) (*login, bool) {
	if token == "" {
		return nil, false
	}
	s.mu.Lock()
	l, ok := s.byHash[sha256.Sum256([]byte(token))]
	s.mu.Unlock()
	if ok {
		l.lastUsed.Store(time.Now().UnixNano())
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

// expireIdle ends the logins unused since before and those whose
// ZooKeeper session expired.
func (s *loginStore) expireIdle(before time.Time) {
	var gone []*login
	s.mu.Lock()
	for h, l := range s.byHash {
		if l.lastUsed.Load() < before.UnixNano() && l.streams.Load() == 0 || l.expired.Load() {
			gone = append(gone, l)
			delete(s.byHash, h)
		}
	}
	s.mu.Unlock()
	for _, l := range gone {
		l.close()
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
