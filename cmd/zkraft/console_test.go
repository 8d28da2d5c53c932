package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"strconv"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/acl"
	"github.com/zkraft/zkraft/internal/cli/fourletter"
	"github.com/zkraft/zkraft/internal/testing/procs"
)

// TestConsoleSettings: zoo.cfg's console.enabled and console.readOnly
// turn the console on and writable; it is off and read-only by default;
// a console without an AdminServer, or writable without being on, is
// refused; a value other than true or false is an error;
// console.heartbeatTimeout takes milliseconds or a duration, not less
// than 3 s.
// TestLoopbackAddr: the console reaches a client port bound on every
// interface over loopback, and a specific one as bound.
// TestEnsembleViewSessionsBounded: the sessions the console's page polls
// are listed within the bounds it asks for (they are read under the
// tree's lock): no more sessions, no more ephemeral paths in all, each
// session's count given even when its paths are not.
// consoleClient is an HTTP client of a console whose requests come from
// the loopback address ip (127.0.0.1, 127.0.0.2, ...), with a cookie jar
// as a browser keeps one.
type consoleClient struct {
	t    *testing.T
	base string // http://admin/console/api/
	hc   *http.Client
	csrf string
}

func newConsoleClient(t *testing.T, adminAddr, ip string) *consoleClient {
	jar, _ := cookiejar.New(nil)
	d := &net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	tr := &http.Transport{DialContext: d.DialContext}
	t.Cleanup(tr.CloseIdleConnections)
	return &consoleClient{t: t, base: "http://" + adminAddr + "/console/api/", hc: &http.Client{Jar: jar, Transport: tr}}
}

// do sends a JSON request and returns its status, Retry-After and body.
func (c *consoleClient) do(method, path string, body any) (int, string, map[string]any) {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	req.Header.Set("Content-Type", "application/json")
	if c.csrf != "" {
		req.Header.Set("X-CSRF-Token", c.csrf)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, resp.Header.Get("Retry-After"), out
}

// login logs in (anonymous with user ""), reporting the status.
func (c *consoleClient) login(user, password string) int {
	c.t.Helper()
	st, _, out := c.do("POST", "login", map[string]string{"user": user, "password": password})
	if st == http.StatusOK {
		c.csrf, _ = out["csrf"].(string)
	}
	return st
}

// stream opens a live stream of the login and waits for its ready event;
// false if it was refused. It stays open until the test ends.
func (c *consoleClient) stream() bool {
	c.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	c.t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", c.base+"events?path=/", nil)
	resp, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return false
	}
	c.t.Cleanup(func() { resp.Body.Close() })
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if sc.Text() == "event: ready" {
			return true
		}
	}
	return false
}

// globalSessions is mntr's zk_global_sessions of the member at addr.
func globalSessions(t *testing.T, addr string) int {
	t.Helper()
	out, err := fourletter.AskWithin(addr, "mntr", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(fourletter.Field(out, "zk_global_sessions\t"))
	if err != nil {
		t.Fatalf("mntr: %v\n%s", err, out)
	}
	return n
}

// serverZxid is srvr's Zxid of the member at addr.
func serverZxid(t *testing.T, addr string) string {
	t.Helper()
	out, err := fourletter.AskWithin(addr, "srvr", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return fourletter.Field(out, "Zxid: ")
}

// TestConsoleLoginsTakeNoClientSlots: console logins and their live views
// (80 ZooKeeper sessions, more than maxClientCnxns=60, from 16 browsers)
// leave the member's loopback client port to its own clients: a
// go-zookeeper client on 127.0.0.1 connects and reads. Issue #37: each
// login was a session dialled over loopback, so 51 logins filled
// 127.0.0.1's 60 places and every local client (zkraft shell, srvr, local
// applications) got ConnectionLoss until the member restarted.
func TestConsoleLoginsTakeNoClientSlots(t *testing.T) {
	clientAddr, adminAddr := procs.ConsoleServer(t, "--max-client-cnxns", "60")
	before := globalSessions(t, clientAddr)
	logins, streams := 0, 0
	for i := range 16 { // each from an address of its own (the old bound was 8 per address)
		c := newConsoleClient(t, adminAddr, fmt.Sprintf("127.0.0.%d", 2+i))
		if c.login("", "") != http.StatusOK {
			continue
		}
		logins++
		for range 4 { // the most live views a login may hold
			if c.stream() {
				streams++
			}
		}
	}
	console := globalSessions(t, clientAddr) - before
	t.Logf("%d logins, %d live views: %d console sessions", logins, streams, console)
	local, _, err := zk.Connect([]string{clientAddr}, 4*time.Second, zk.WithLogger(procs.QuietLogger{}), zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close()
	if _, _, err := local.Get("/zookeeper"); err != nil {
		t.Fatalf("a loopback client after %d console sessions: %v", console, err)
	}
	if console <= 60 {
		t.Fatalf("%d console sessions (%d logins, %d live views), want more than maxClientCnxns (60)", console, logins, streams)
	}
}

// TestConsoleSessionIsTheBrowsers: a console session's ip identity is the
// browser's address: a browser at 127.0.0.2 reads the node ip:127.0.0.2
// may read and is refused the one only ip:127.0.0.1 may. Before, every
// console session came from 127.0.0.1, so an ACL granting ip:127.0.0.1
// was granted to anyone who could reach the console.
func TestConsoleSessionIsTheBrowsers(t *testing.T) {
	clientAddr, adminAddr := procs.ConsoleServer(t)
	owner := procs.ConnectAdmin(t, []string{clientAddr})
	defer owner.Close()
	for path, ip := range map[string]string{"/for-browser": "127.0.0.2", "/for-loopback": "127.0.0.1"} {
		if _, err := owner.Create(path, []byte(ip), 0, []zk.ACL{{Perms: zk.PermAll, Scheme: "ip", ID: ip}}); err != nil {
			t.Fatal(err)
		}
	}
	b := newConsoleClient(t, adminAddr, "127.0.0.2")
	if st := b.login("", ""); st != http.StatusOK {
		t.Fatalf("login: %d", st)
	}
	if st, _, out := b.do("GET", "node?path=/for-browser", nil); st != http.StatusOK {
		t.Fatalf("a browser at 127.0.0.2 reads ip:127.0.0.2's node: %d %v", st, out)
	}
	if st, _, out := b.do("GET", "node?path=/for-loopback", nil); st != http.StatusForbidden || out["code"] != "NoAuth" {
		t.Fatalf("a browser at 127.0.0.2 reads ip:127.0.0.1's node: %d %v, want 403 NoAuth", st, out)
	}
}

// TestConsoleFailedLoginsThrottled: a wrong password (a digest identity
// the ensemble does not know: no ACL names it, not the super user) is a
// failed login: 401, and no ZooKeeper session is opened, so neither the
// session count nor the zxid moves. After five failures the next attempt
// waits (429, Retry-After) for that user from any address and for any
// user from that address; the right password still works once the wait
// is over, and anonymous logins are never held. Before, every guess
// logged in (a replicated session create and close each).
func TestConsoleFailedLoginsThrottled(t *testing.T) {
	clientAddr, adminAddr := procs.ConsoleServer(t)
	owner := procs.ConnectAdmin(t, []string{clientAddr})
	defer owner.Close()
	for _, u := range []string{"alice", "bob"} {
		a := []zk.ACL{{Perms: zk.PermAll, Scheme: "digest", ID: acl.DigestID(u, u+"-pw")}}
		if _, err := owner.Create("/"+u, nil, 0, a); err != nil {
			t.Fatal(err)
		}
	}
	sessions, zxid := globalSessions(t, clientAddr), serverZxid(t, clientAddr)
	guesser := newConsoleClient(t, adminAddr, "127.0.0.1")
	for i := range 6 {
		if st := guesser.login("alice", fmt.Sprint("guess-", i)); st != http.StatusUnauthorized {
			t.Fatalf("wrong password %d: %d, want 401", i, st)
		}
	}
	if n, z := globalSessions(t, clientAddr), serverZxid(t, clientAddr); n != sessions || z != zxid {
		t.Fatalf("wrong passwords moved the ensemble: sessions %d → %d, zxid %s → %s", sessions, n, zxid, z)
	}
	st, retry, _ := guesser.do("POST", "login", map[string]string{"user": "alice", "password": "guess-6"})
	if secs, _ := strconv.Atoi(retry); st != http.StatusTooManyRequests || secs < 1 {
		t.Fatalf("a guess past the free ones: %d Retry-After %q, want 429", st, retry)
	}
	if st := newConsoleClient(t, adminAddr, "127.0.0.2").login("alice", "guess"); st != http.StatusTooManyRequests {
		t.Fatalf("alice from another address: %d, want 429", st)
	}
	if st := guesser.login("bob", "guess"); st != http.StatusTooManyRequests {
		t.Fatalf("bob from the guessing address: %d, want 429", st)
	}
	if st := guesser.login("", ""); st != http.StatusOK {
		t.Fatalf("anonymous from the guessing address: %d, want 200", st)
	}
	time.Sleep(1100 * time.Millisecond)
	if st := newConsoleClient(t, adminAddr, "127.0.0.3").login("alice", "alice-pw"); st != http.StatusOK {
		t.Fatalf("alice's own password after the wait: %d, want 200", st)
	}
}
