package console

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/zkraft/zkraft/internal/cli/zkjson"
)

// cookieName is the console's session cookie: an opaque token.
const cookieName = "zkraft_console"

// csrfHeader carries the login's CSRF token on every write.
const csrfHeader = "X-CSRF-Token"

// loginKey is the request context key of the login serving a request.
type loginKey struct{}

// current returns the login of an authenticated request.
func current(r *http.Request) *login { return r.Context().Value(loginKey{}).(*login) }

// authenticate finds the request's login or answers 401; used says the
// request is the user's (not a heartbeat).
func (c *Console) authenticate(w http.ResponseWriter, r *http.Request, used bool) (*login, bool) {
	ck, err := r.Cookie(cookieName)
	if err != nil {
		fail(w, http.StatusUnauthorized, "not logged in")
		return nil, false
	}
	l, ok := c.logins.get(ck.Value, used)
	if !ok {
		fail(w, http.StatusUnauthorized, "not logged in")
		return nil, false
	}
	if l.expired.Load() {
		c.logins.remove(ck.Value)
		fail(w, http.StatusUnauthorized, "your ZooKeeper session expired; log in again")
		return nil, false
	}
	return l, true
}

// read wraps a handler that needs a login.
func (c *Console) read(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		l, ok := c.authenticate(w, r, true)
		if !ok {
			return
		}
		h(w, r.WithContext(context.WithValue(r.Context(), loginKey{}, l)))
	}
}

// write wraps a handler that changes something: it needs a login, the
// login's CSRF token, a same-origin request and, if change is set (a
// change to the tree), a writable console. A body larger than largeBody
// (or of unknown length) is read and handled in a turn (turns.go).
func (c *Console) write(h http.HandlerFunc, change bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !sameOrigin(r) {
			fail(w, http.StatusForbidden, "cross-origin request refused")
			return
		}
		l, ok := c.authenticate(w, r, true)
		if !ok {
			return
		}
		if !tokensEqual(r.Header.Get(csrfHeader), l.csrf) {
			fail(w, http.StatusForbidden, "missing or wrong CSRF token")
			return
		}
		if change && !c.cfg.Writable {
			fail(w, http.StatusForbidden, "the console is read-only (enable writes with --console-writable or console.readOnly=false)")
			return
		}
		if r.ContentLength < 0 || r.ContentLength > largeBody {
			t := &turn{c: c}
			defer t.end()
			if err := t.take(r.Context()); err != nil {
				failBusy(w, err)
				return
			}
		}
		h(w, r.WithContext(context.WithValue(r.Context(), loginKey{}, l)))
	}
}

// maxLoginBody bounds the body of POST api/login: a user name and a
// password. Anyone may send one, before any check.
const maxLoginBody = 16 << 10

// loginRequest is the body of POST api/login.
type loginRequest struct {
	User     string `json:"user"`
	Password string `json:"password"`
}

// whoAmI is what the page learns about its login: never a password.
type whoAmI struct {
	User        string `json:"user"`
	Session     string `json:"session"` // the ZooKeeper session id, hex
	Writable    bool   `json:"writable"`
	CSRF        string `json:"csrf"`
	ServerURL   string `json:"server"`      // the client port the console speaks for
	HeartbeatMs int64  `json:"heartbeatMs"` // how often the page says it is open
}

func (c *Console) whoAmI(l *login) whoAmI {
	return whoAmI{
		User:        l.user,
		Session:     zkjson.Hex(l.conn.SessionID()),
		Writable:    c.cfg.Writable,
		CSRF:        l.csrf,
		ServerURL:   c.cfg.ClientAddr,
		HeartbeatMs: (c.cfg.HeartbeatTimeout / 3).Milliseconds(),
	}
}

// handleLogin opens a ZooKeeper session with the user's credentials and
// sets the session cookie. In order, each step refusing before the next
// costs anything: the credentials' form; the failed-login throttle of the
// address and the user (429, nothing checked); room among the logins
// (503); whether the ensemble knows the identity (401, counted as a
// failure; no session opened, so a guess costs no replicated write); then
// the session. An anonymous login skips the throttle and the identity
// check: it guesses nothing.
func (c *Console) handleLogin(w http.ResponseWriter, r *http.Request) {
	if !sameOrigin(r) {
		fail(w, http.StatusForbidden, "cross-origin request refused")
		return
	}
	var req loginRequest
	if !decodeLimited(w, r, &req, maxLoginBody) {
		return
	}
	req.User = strings.TrimSpace(req.User)
	if err := checkCredentials(req.User, req.Password); err != nil {
		fail(w, http.StatusUnauthorized, "login failed: "+err.Error())
		return
	}
	from, now, anonymous := remoteIP(r), time.Now(), req.User == ""
	if !anonymous {
		if wait := c.throttle.wait(from, req.User, now); wait > 0 {
			secs := int((wait + time.Second - 1) / time.Second)
			w.Header().Set("Retry-After", strconv.Itoa(secs))
			fail(w, http.StatusTooManyRequests, fmt.Sprintf("too many failed logins; try again in %d s", secs))
			return
		}
	}
	if err := c.logins.room(req.User); err != nil {
		fail(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	if !anonymous && c.cfg.KnownUser != nil && !c.cfg.KnownUser(req.User, req.Password) {
		c.throttle.failed(from, req.User, now)
		c.cfg.Logger.Sugar().Infow("console login refused: an identity the ensemble does not know", "user", req.User, "from", from)
		fail(w, http.StatusUnauthorized, "login failed: unknown user or wrong password")
		return
	}
	l, err := dialLogin(c.dialerFor(from), c.cfg.ClientAddr, req.User, req.Password, c.cfg.SessionTimeout,
		min(c.cfg.SessionTimeout, 5*time.Second), c.ops)
	if err != nil {
		c.cfg.Logger.Sugar().Infow("console login failed", "user", req.User, "error", err)
		fail(w, http.StatusUnauthorized, "login failed: the server opened no session")
		return
	}
	l.from = from
	token, err := c.logins.add(l)
	if err != nil {
		l.close()
		fail(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	if !anonymous {
		c.throttle.succeeded(req.User)
	}
	http.SetCookie(w, &http.Cookie{
		Name:     cookieName,
		Value:    token,
		Path:     strings.TrimSuffix(c.cfg.Prefix, "/") + "/",
		HttpOnly: true,
		Secure:   r.TLS != nil,
		SameSite: http.SameSiteStrictMode,
	})
	c.cfg.Logger.Sugar().Infow("console login", "user", req.User, "from", from, "session", zkjson.Hex(l.conn.SessionID()))
	writeJSON(w, http.StatusOK, c.whoAmI(l))
}

// handleHeartbeat is the open page saying so: it holds the login (its
// browser is there) without holding off the idle timeout. It needs the
// CSRF token, as every POST but login.
func (c *Console) handleHeartbeat(w http.ResponseWriter, r *http.Request) {
	if !sameOrigin(r) {
		fail(w, http.StatusForbidden, "cross-origin request refused")
		return
	}
	l, ok := c.authenticate(w, r, false)
	if !ok {
		return
	}
	if !tokensEqual(r.Header.Get(csrfHeader), l.csrf) {
		fail(w, http.StatusForbidden, "missing or wrong CSRF token")
		return
	}
	writeJSON(w, http.StatusOK, struct{}{})
}

// handleLogout ends the login and its ZooKeeper session.
func (c *Console) handleLogout(w http.ResponseWriter, r *http.Request) {
	if ck, err := r.Cookie(cookieName); err == nil {
		c.logins.remove(ck.Value)
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: strings.TrimSuffix(c.cfg.Prefix, "/") + "/",
		MaxAge: -1, HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode})
	writeJSON(w, http.StatusOK, struct{}{})
}

// handleWhoAmI tells the page who is logged in (and its CSRF token).
func (c *Console) handleWhoAmI(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, c.whoAmI(current(r)))
}

// remoteIP is the address a request came from, without its port.
func remoteIP(r *http.Request) string {
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}
