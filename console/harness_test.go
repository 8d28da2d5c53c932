package console

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/ensemble"
	"github.com/zkraft/zkraft/session"
	"github.com/zkraft/zkraft/znode"
)

// zkServer is a test's in-process zkraft.
type zkServer struct {
	srv  *session.Server
	node *ensemble.Node
}

// servers holds the tests' zkraft servers by client address, so that
// startConsole dials them in-process, as cmd/zkraft wires the console.
var servers sync.Map // string → *zkServer

// startZK runs an in-process one-member zkraft and returns its client
// address.
func startZK(t testing.TB) string {
	t.Helper()
	// The sessions may last as long as consoleConfig asks (30 s): the
	// default bound, 20 ticks, is 4 s, which a race pass on a loaded
	// machine spent encoding one large import (TestExportImport's login
	// expired under it).
	return startZKWith(t, session.Config{TickTime: 200 * time.Millisecond, MaxSessionTimeout: time.Minute})
}

// startZKWith is startZK with the session server's configuration given.
func startZKWith(t testing.TB, cfg session.Config) string {
	t.Helper()
	node, err := ensemble.Open(ensemble.Config{DataDir: t.TempDir(), TickTime: 200 * time.Millisecond,
		Tree: znode.Options{ExtendedTypes: true}})
	if err != nil {
		t.Fatal(err)
	}
	srv := session.New(cfg, node)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	addr := ln.Addr().String()
	servers.Store(addr, &zkServer{srv: srv, node: node})
	t.Cleanup(func() {
		servers.Delete(addr)
		srv.Close()
		node.Close()
	})
	return addr
}

// serverAt is the zkraft startZK started at addr, nil if none.
func serverAt(addr string) *zkServer {
	if s, ok := servers.Load(addr); ok {
		return s.(*zkServer)
	}
	return nil
}

// consoleConfig is the Config cmd/zkraft would give a console of the
// zkraft at addr: its sessions dialled in-process. known adds the
// known-identity check (cmd/zkraft's consoleKnows); without it every
// identity is known, as in ZooKeeper.
func consoleConfig(addr string, known bool) Config {
	cfg := Config{ClientAddr: addr, SessionTimeout: 30 * time.Second} // a login outlives a starved race pass
	if zs := serverAt(addr); zs != nil {
		cfg.Dial = zs.srv.DialInProcess
		if known {
			cfg.KnownUser = zs.knows
		}
	}
	return cfg
}

// knows is the known-identity check cmd/zkraft gives the console.
func (zs *zkServer) knows(user, password string) bool {
	ids := zs.srv.DigestIdentities(user + ":" + password)
	tree := zs.node.RLockTree()
	defer zs.node.RUnlockTree()
	for _, id := range ids {
		if id.Scheme == "super" || tree.NamesIdentity(id) {
			return true
		}
	}
	return false
}

// startConsole serves a console for the zkraft at addr over httptest.
func startConsole(t testing.TB, addr string, writable bool) *httptest.Server {
	t.Helper()
	cfg := consoleConfig(addr, false)
	cfg.Writable = writable
	return serveConsole(t, cfg)
}

// serveConsole serves a console of cfg over httptest.
func serveConsole(t testing.TB, cfg Config) *httptest.Server {
	t.Helper()
	c := New(cfg)
	hs := httptest.NewServer(c.Handler())
	t.Cleanup(func() {
		hs.Close()
		c.Close()
	})
	return hs
}

// dialZK is another client, as the console's users would meet one.
func dialZK(t testing.TB, addr string, auth ...string) *zk.Conn {
	t.Helper()
	conn, ev, err := zk.Connect([]string{addr}, 4*time.Second, zk.WithLogger(quietLogger{}), zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	for e := range ev {
		if e.State == zk.StateHasSession {
			break
		}
	}
	for _, a := range auth {
		if err := conn.AddAuth("digest", []byte(a)); err != nil {
			t.Fatal(err)
		}
	}
	return conn
}

// browser is an HTTP client with a cookie jar, as a browser keeps one; it
// records every response it saw.
type browser struct {
	t    testing.TB
	base string
	hc   *http.Client
	csrf string
	seen []seenResponse
}

// seenResponse is what a browser could show or store of one response.
type seenResponse struct {
	url     string
	headers http.Header
	body    string
}

// browserTimeout bounds one request of a test's browser: long enough for
// a request that waits on the member (an Exists) to be answered on a
// machine running a second make test with this package under -race
// (one took more than 20 s there), short of the package's timeout.
const browserTimeout = time.Minute

func newBrowser(t testing.TB, hs *httptest.Server) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, base: hs.URL + "/console", hc: &http.Client{Jar: jar, Timeout: browserTimeout}}
}

// do sends a request and returns the status and the decoded JSON body.
func (b *browser) do(method, path string, body any, hdr map[string]string) (int, map[string]any) {
	b.t.Helper()
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, b.base+path, rd)
	if err != nil {
		b.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := b.hc.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	b.seen = append(b.seen, seenResponse{url: req.URL.String(), headers: resp.Header, body: string(raw)})
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return resp.StatusCode, out
}

func (b *browser) get(path string) (int, map[string]any) { return b.do("GET", path, nil, nil) }

// post sends a write with the login's CSRF token.
func (b *browser) post(path string, body any) (int, map[string]any) {
	return b.do("POST", path, body, map[string]string{csrfHeader: b.csrf})
}

// login logs in and keeps the CSRF token; it fails the test on refusal.
func (b *browser) login(user, password string) {
	b.t.Helper()
	st, out := b.do("POST", "/api/login", loginRequest{User: user, Password: password}, nil)
	if st != http.StatusOK {
		b.t.Fatalf("login %s: %d %v", user, st, out)
	}
	b.csrf, _ = out["csrf"].(string)
	if b.csrf == "" {
		b.t.Fatalf("login: no CSRF token in %v", out)
	}
}

// mustContain fails unless s contains every one of want.
func mustContain(t testing.TB, s string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(s, w) {
			t.Fatalf("%q does not contain %q", s, w)
		}
	}
}

// listenClosed returns an address nothing listens on.
func listenClosed(t testing.TB) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr, nil
}
