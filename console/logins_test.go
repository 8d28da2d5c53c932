package console

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/acl"
	"github.com/zkraft/zkraft/session"
)

// newBrowserFrom is a browser whose requests come from the loopback
// address ip (127.0.0.2, ...): another client address on this host.
func newBrowserFrom(t testing.TB, hs *httptest.Server, ip string) *browser {
	b := newBrowser(t, hs)
	d := &net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	jar, _ := cookiejar.New(nil)
	b.hc = &http.Client{Jar: jar, Timeout: 20 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return d.DialContext(ctx, network, addr)
		},
	}}
	return b
}

// jsonBody is v as a JSON request body.
func jsonBody(v any) io.Reader {
	raw, _ := json.Marshal(v)
	return bytes.NewReader(raw)
}

// lastZxid is the zxid the zkraft at addr last applied.
func lastZxid(addr string) int64 { return serverAt(addr).node.LastZxid() }

// TestConsoleLoginsTakeNoClientSlots: a hundred console logins, more than
// maxClientCnxns (60) and all from 127.0.0.1, leave the member's loopback
// client port to its clients: a go-zookeeper client connects and reads
// (issue #37: 51 logins filled 127.0.0.1's slots and every local client
// got ConnectionLoss).
func TestConsoleLoginsTakeNoClientSlots(t *testing.T) {
	addr := startZKWith(t, session.Config{TickTime: 200 * time.Millisecond, MaxClientCnxns: 60})
	cfg := consoleConfig(addr, false)
	cfg.MaxLogins, cfg.MaxAnonymousLogins = 200, 200
	hs := serveConsole(t, cfg)
	before := sessionCount(t, addr)
	for range 100 {
		newBrowser(t, hs).login("", "")
	}
	if n := sessionCount(t, addr) - before; n != 100 {
		t.Fatalf("%d console sessions, want 100", n)
	}
	conn, _, err := zk.Connect([]string{addr}, 4*time.Second, zk.WithLogger(quietLogger{}), zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, _, err := conn.Get("/zookeeper"); err != nil {
		t.Fatalf("a loopback client after 100 console logins: %v", err)
	}
}

// TestConsoleIdentityIsTheBrowsers: a console session's ip identity is the
// browser's address, not the loopback the console runs on: a browser at
// 127.0.0.2 reads the node ip:127.0.0.2 may read and is refused the one
// only ip:127.0.0.1 may (before, every browser was 127.0.0.1, so such
// ACLs were granted to anyone who could reach the console); the live
// view's session is the browser's too.
func TestConsoleIdentityIsTheBrowsers(t *testing.T) {
	addr := startZK(t)
	owner := dialZK(t, addr)
	browserOnly := []zk.ACL{{Perms: zk.PermAll, Scheme: "ip", ID: "127.0.0.2"}}
	// The owner, at 127.0.0.1, may add children to /for-browser.
	dir := append([]zk.ACL{{Perms: zk.PermCreate, Scheme: "ip", ID: "127.0.0.1"}}, browserOnly...)
	if _, err := owner.Create("/for-browser", nil, 0, dir); err != nil {
		t.Fatal(err)
	}
	if _, err := owner.Create("/for-loopback", nil, 0, []zk.ACL{{Perms: zk.PermAll, Scheme: "ip", ID: "127.0.0.1"}}); err != nil {
		t.Fatal(err)
	}
	b := newBrowserFrom(t, startConsole(t, addr, false), "127.0.0.2")
	b.login("", "")
	if st, out := b.get("/api/node?path=/for-browser"); st != http.StatusOK {
		t.Fatalf("a browser at 127.0.0.2 reads ip:127.0.0.2's node: %d %v", st, out)
	}
	if st, out := b.get("/api/node?path=/for-loopback"); st != http.StatusForbidden || out["code"] != "NoAuth" {
		t.Fatalf("a browser at 127.0.0.2 reads ip:127.0.0.1's node: %d %v, want 403 NoAuth", st, out)
	}
	events := openStream(t, b, "/for-browser")
	if ev := <-events; ev.name != "ready" {
		t.Fatalf("first event %v, want ready", ev)
	}
	// Its notification is filtered by READ on the new node: only
	// 127.0.0.2 may read it.
	if _, err := owner.Create("/for-browser/kid", nil, 0, browserOnly); err != nil {
		t.Fatal(err)
	}
	if got, ok := nextChange(t, events, 5*time.Second); !ok || got.Path != "/for-browser/kid" {
		t.Fatalf("the live view at 127.0.0.2: %+v %v", got, ok)
	}
}

// TestFailedLoginsThrottled: a login as an identity the ensemble does not
// know (no ACL names it, not the super user) fails with 401 and opens no
// ZooKeeper session: the session count and the zxid do not move. After
// five failures from an address, or for a user, the next attempt must
// wait (429, Retry-After), from any address for that user and as any user
// from that address; the wait doubles. Anonymous logins are never
// throttled, and the right password, once the wait is over, logs in.
func TestFailedLoginsThrottled(t *testing.T) {
	addr := startZK(t)
	owner := dialZK(t, addr)
	for _, u := range []string{"alice", "bob", "carol"} {
		a := []zk.ACL{{Perms: zk.PermAll, Scheme: "digest", ID: acl.DigestID(u, u+"-pw")}}
		if _, err := owner.Create("/"+u, nil, 0, a); err != nil {
			t.Fatal(err)
		}
	}
	hs := serveConsole(t, consoleConfig(addr, true))
	newBrowser(t, hs).login("alice", "alice-pw")
	try := func(b *browser, user, password string) (int, string) {
		t.Helper()
		resp, err := b.hc.Post(b.base+"/api/login", "application/json",
			jsonBody(loginRequest{User: user, Password: password}))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode, resp.Header.Get("Retry-After")
	}
	sessions, zxid := sessionCount(t, addr), lastZxid(addr)
	one := newBrowser(t, hs)
	for i := range freeFailures + 1 {
		if st, _ := try(one, "alice", fmt.Sprint("guess", i)); st != http.StatusUnauthorized {
			t.Fatalf("guess %d: %d, want 401", i, st)
		}
	}
	if n, z := sessionCount(t, addr), lastZxid(addr); n != sessions || z != zxid {
		t.Fatalf("wrong passwords moved the ensemble: sessions %d → %d, zxid %#x → %#x", sessions, n, zxid, z)
	}
	st, retry := try(one, "alice", "guess-next")
	if secs, _ := strconv.Atoi(retry); st != http.StatusTooManyRequests || secs < 1 {
		t.Fatalf("a guess past the free ones: %d Retry-After %q, want 429", st, retry)
	}
	// The user is held from another address; the address as another user.
	two := newBrowserFrom(t, hs, "127.0.0.2")
	if st, _ := try(two, "alice", "guess"); st != http.StatusTooManyRequests {
		t.Fatalf("alice from another address: %d, want 429", st)
	}
	if st, _ := try(one, "bob", "guess"); st != http.StatusTooManyRequests {
		t.Fatalf("another user from the guessing address: %d, want 429", st)
	}
	if st, _ := try(two, "bob", "guess"); st != http.StatusUnauthorized {
		t.Fatalf("another user from another address: %d, want 401", st)
	}
	one.login("", "") // anonymous is never throttled
	if n, z := sessionCount(t, addr), lastZxid(addr); n != sessions+1 {
		t.Fatalf("sessions %d → %d (zxid %#x → %#x), want one more: the anonymous login's", sessions, n, zxid, z)
	}

	// Once the wait is over the right password works; the next failure
	// from the guessing address waits twice as long.
	time.Sleep(1100 * time.Millisecond)
	newBrowserFrom(t, hs, "127.0.0.3").login("alice", "alice-pw")
	if st, _ := try(one, "carol", "guess"); st != http.StatusUnauthorized {
		t.Fatalf("after the wait: %d, want 401", st)
	}
	if st, retry := try(one, "carol", "guess"); st != http.StatusTooManyRequests || retry != "2" {
		t.Fatalf("the next failure's wait: %d Retry-After %q, want 429 and 2", st, retry)
	}
}

// TestFailureTableBounded: a guesser rotating names (or addresses) keeps
// the table at maxThrottled entries, and does not evict the entry of the
// key it hammers; a key left alone is forgiven and swept.
func TestFailureTableBounded(t *testing.T) {
	ft := newFailureTable()
	now := time.Unix(1_000_000, 0)
	for range 12 {
		ft.fail("alice", now)
	}
	if w := ft.wait("alice", now); w != delayAfter(12-freeFailures) {
		t.Fatalf("alice waits %v after 12 failures, want %v", w, delayAfter(12-freeFailures))
	}
	for i := range 3 * maxThrottled {
		ft.fail(fmt.Sprint("junk", i), now)
	}
	if n := len(ft.entries); n > maxThrottled {
		t.Fatalf("%d entries, bound %d", n, maxThrottled)
	}
	if ft.wait("alice", now) == 0 {
		t.Fatal("rotating names evicted the hammered key's entry")
	}
	later := now.Add(13 * maxFailureDelay)
	if ft.wait("alice", later) != 0 {
		t.Fatal("alice still waits long after her last failure")
	}
	ft.sweep(later)
	if n := len(ft.entries); n != 0 {
		t.Fatalf("%d entries after everything was forgiven", n)
	}
	for range freeFailures {
		ft.fail("bob", later)
	}
	if ft.wait("bob", later) != 0 {
		t.Fatalf("bob waits after %d failures, the free ones", freeFailures)
	}
	if addrKey("2001:db8::1") != addrKey("2001:db8::ffff") || addrKey("2001:db8::1") == addrKey("2001:db8:0:1::1") {
		t.Fatal("IPv6 addresses are not throttled by their /64")
	}
	if addrKey("::ffff:10.0.0.1") != addrKey("10.0.0.1") {
		t.Fatal("an IPv4-mapped address is throttled apart from its IPv4 address")
	}
}

// TestLoginEndsWhenBrowserGoes: a login is held while its page sends
// heartbeats or holds a live stream, and ends, with its ZooKeeper
// sessions, within HeartbeatTimeout (and the housekeeping second) of the
// last of them; heartbeats do not hold off the idle timeout.
func TestLoginEndsWhenBrowserGoes(t *testing.T) {
	addr := startZK(t)
	cfg := consoleConfig(addr, false)
	cfg.HeartbeatTimeout, cfg.IdleTimeout = 2*time.Second, 6*time.Second
	hs := serveConsole(t, cfg)
	base := sessionCount(t, addr)
	// gone waits, without a request that would count as the browser's,
	// until the login's sessions are closed, and checks that it ended.
	gone := func(b *browser, within time.Duration) {
		t.Helper()
		start := time.Now()
		for sessionCount(t, addr) != base {
			if time.Since(start) > within {
				t.Fatalf("the login's sessions outlived its browser by %v", within)
			}
			time.Sleep(50 * time.Millisecond)
		}
		if st, _ := b.get("/api/whoami"); st != http.StatusUnauthorized {
			t.Fatalf("whoami after the login ended: %d, want 401", st)
		}
	}

	// Heartbeats hold a login past the timeout; when they stop it ends.
	b := newBrowser(t, hs)
	b.login("", "")
	for range 8 {
		time.Sleep(500 * time.Millisecond)
		if st, out := b.post("/api/heartbeat", struct{}{}); st != http.StatusOK {
			t.Fatalf("heartbeat: %d %v", st, out)
		}
	}
	stopped := time.Now()
	gone(b, 4*time.Second)
	if d := time.Since(stopped); d < cfg.HeartbeatTimeout {
		t.Fatalf("the login ended %v after the last heartbeat, before the %v timeout", d, cfg.HeartbeatTimeout)
	}

	// An open live stream holds it without heartbeats; closing it starts
	// the timeout.
	b = newBrowser(t, hs)
	b.login("", "")
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", b.base+"/api/events?path=/", nil)
	hc := *b.hc
	hc.Timeout = 0
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * cfg.HeartbeatTimeout / 2)
	if st, _ := b.get("/api/whoami"); st != http.StatusOK {
		t.Fatalf("a login with its live stream open ended: %d", st)
	}
	time.Sleep(3 * cfg.HeartbeatTimeout / 2) // nothing but the stream since the last request
	cancel()
	resp.Body.Close()
	gone(b, 4*time.Second)

	// Heartbeats alone do not hold off the idle timeout.
	b = newBrowser(t, hs)
	b.login("", "")
	start := time.Now()
	for {
		st, _ := b.post("/api/heartbeat", struct{}{})
		if st == http.StatusUnauthorized {
			break
		}
		if time.Since(start) > cfg.IdleTimeout+3*time.Second {
			t.Fatal("heartbeats held an idle login past the idle timeout")
		}
		time.Sleep(500 * time.Millisecond)
	}
	if d := time.Since(start); d < cfg.IdleTimeout {
		t.Fatalf("the idle login ended after %v, before the idle timeout %v", d, cfg.IdleTimeout)
	}
}
