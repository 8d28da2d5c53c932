package console

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/acl"
)

// TestLoginFailure: malformed credentials and a member that opens no
// session refuse the login with 401 and set no cookie; a read without a
// login is 401.
func TestLoginFailure(t *testing.T) {
	addr := startZK(t)
	b := newBrowser(t, startConsole(t, addr, false))
	for _, creds := range []loginRequest{{User: "a:b", Password: "x"}, {User: "", Password: "x"}} {
		if st, out := b.do("POST", "/api/login", creds, nil); st != http.StatusUnauthorized {
			t.Fatalf("login %q: %d %v, want 401", creds.User, st, out)
		}
	}
	if st, _ := b.get("/api/children?path=/"); st != http.StatusUnauthorized {
		t.Fatalf("children without login: %d, want 401", st)
	}
	// No server behind the console: the login fails, no cookie is set.
	ln, _ := listenClosed(t)
	down := newBrowser(t, startConsole(t, ln, false))
	if st, out := down.do("POST", "/api/login", loginRequest{User: "alice", Password: "pw"}, nil); st != http.StatusUnauthorized {
		t.Fatalf("login with the server down: %d %v", st, out)
	}
	for _, s := range append(b.seen, down.seen...) {
		if s.headers.Get("Set-Cookie") != "" {
			t.Fatalf("%s set a cookie on a failed login", s.url)
		}
	}
	// A form post (what a cross-site page can send without CORS) is refused.
	resp, err := http.Post(b.base+"/api/login", "application/x-www-form-urlencoded", strings.NewReader("user=a&password=b"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnsupportedMediaType {
		t.Fatalf("form login: %d, want 415", resp.StatusCode)
	}
}

// TestNoCredentialInResponses: after a login and a tour of every
// endpoint, no response body, header or URL carries the password, its
// digest, or the cookie token (outside the Set-Cookie that sets it).
func TestNoCredentialInResponses(t *testing.T) {
	addr := startZK(t)
	b := newBrowser(t, startConsole(t, addr, true))
	const password = "Sekr3t-Passw0rd"
	b.login("alice", password)
	mine := []aclJSON{{Scheme: "digest", ID: "alice:" + password, Perms: "cdrwa"}}
	if st, out := b.post("/api/create", createRequest{Path: "/app", Data: "x", Mode: "persistent", ACL: mine}); st != http.StatusOK {
		t.Fatalf("create: %d %v", st, out)
	}
	b.post("/api/create", createRequest{Path: "/app/eph", Mode: "ephemeral"})
	for _, p := range []string{"/api/whoami", "/api/children?path=/", "/api/children?path=/app", "/api/node?path=/app",
		"/api/search?prefix=/a", "/api/subtree?path=/app", "/api/ensemble", "/", "/app.js"} {
		b.get(p)
	}
	b.post("/api/set", map[string]any{"path": "/app", "data": "y", "version": 0})
	_, node := b.get("/api/node?path=/app")
	shown := node["acl"].([]any)[0].(map[string]any)
	if shown["id"] != "alice:"+hiddenHash {
		t.Fatalf("the ACL shows %v", shown)
	}
	kept := []aclJSON{{Scheme: "digest", ID: shown["id"].(string), Perms: "rwa"}}
	if st, out := b.post("/api/setacl", map[string]any{"path": "/app", "acl": kept, "version": 0}); st != http.StatusOK {
		t.Fatalf("setacl keeping the hidden entry: %d %v", st, out)
	}
	b.post("/api/logout", struct{}{})
	var token string
	for _, s := range b.seen {
		if c := s.headers.Get("Set-Cookie"); strings.HasPrefix(c, cookieName+"=") && token == "" {
			token = strings.TrimPrefix(strings.Split(c, ";")[0], cookieName+"=")
			mustContain(t, c, "HttpOnly", "SameSite=Strict")
		}
	}
	if token == "" {
		t.Fatal("no session cookie was set")
	}
	secrets := []string{password, strings.SplitN(acl.DigestID("alice", password), ":", 2)[1],
		base64.StdEncoding.EncodeToString([]byte("alice:" + password)), token}
	for _, s := range b.seen {
		hdrs := s.headers.Clone()
		hdrs.Del("Set-Cookie")
		for _, secret := range secrets {
			if strings.Contains(s.body, secret) || strings.Contains(s.url, secret) || strings.Contains(strings.Join(flatten(hdrs), "\n"), secret) {
				t.Fatalf("%s shows a secret %q:\n%v\n%s", s.url, secret, hdrs, s.body)
			}
		}
	}
	// setACL kept alice's entry (her hash) with the new permissions.
	other := dialZK(t, addr, "alice:"+password)
	got, _, err := other.GetACL("/app")
	if err != nil || len(got) != 1 || got[0].ID != acl.DigestID("alice", password) || got[0].Perms != zk.PermRead|zk.PermWrite|zk.PermAdmin {
		t.Fatalf("ACL after setacl: %v %v", got, err)
	}
}

func flatten(h http.Header) []string {
	var out []string
	for k, vs := range h {
		for _, v := range vs {
			out = append(out, k+": "+v)
		}
	}
	return out
}

// TestCSRFRequiredForWrites: a write without the login's CSRF token, with
// a wrong one, or from another origin is refused and changes nothing;
// with it, it goes through.
func TestCSRFRequiredForWrites(t *testing.T) {
	addr := startZK(t)
	b := newBrowser(t, startConsole(t, addr, true))
	b.login("alice", "pw")
	req := createRequest{Path: "/csrf", Mode: "persistent"}
	for name, hdr := range map[string]map[string]string{
		"no token":     nil,
		"wrong token":  {csrfHeader: strings.Repeat("A", len(b.csrf))},
		"other origin": {csrfHeader: b.csrf, "Origin": "http://evil.example"},
	} {
		if st, out := b.do("POST", "/api/create", req, hdr); st != http.StatusForbidden {
			t.Fatalf("%s: %d %v, want 403", name, st, out)
		}
	}
	other := dialZK(t, addr)
	if ok, _, _ := other.Exists("/csrf"); ok {
		t.Fatal("a refused write created the node")
	}
	if st, out := b.post("/api/create", req); st != http.StatusOK {
		t.Fatalf("create with the token: %d %v", st, out)
	}
	if ok, _, _ := other.Exists("/csrf"); !ok {
		t.Fatal("create with the token did not create the node")
	}
}

// TestReadOnlyRefusesWrites: a console without Writable refuses every
// change, even with a valid token, and reads still work.
func TestReadOnlyRefusesWrites(t *testing.T) {
	addr := startZK(t)
	other := dialZK(t, addr)
	if _, err := other.Create("/ro", []byte("v"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t, startConsole(t, addr, false))
	b.login("", "")
	if _, who := b.get("/api/whoami"); who["writable"] != false {
		t.Fatalf("whoami: %v", who)
	}
	for path, body := range map[string]any{
		"/api/create": createRequest{Path: "/ro2", Mode: "persistent"},
		"/api/set":    map[string]any{"path": "/ro", "data": "w", "version": 0},
		"/api/delete": deleteRequest{Path: "/ro"},
		"/api/setacl": map[string]any{"path": "/ro", "acl": []aclJSON{{Scheme: "world", ID: "anyone", Perms: "r"}}, "version": 0},
	} {
		if st, out := b.post(path, body); st != http.StatusForbidden || !strings.Contains(out["error"].(string), "read-only") {
			t.Fatalf("%s: %d %v, want 403 read-only", path, st, out)
		}
	}
	data, st, _ := other.Get("/ro")
	if string(data) != "v" || st.Version != 0 {
		t.Fatalf("/ro changed: %q version %d", data, st.Version)
	}
	if code, node := b.get("/api/node?path=/ro"); code != http.StatusOK || node["data"] != base64.StdEncoding.EncodeToString([]byte("v")) {
		t.Fatalf("read: %d %v", code, node)
	}
}

// TestACLAppliesToLogin: a node only alice may read is refused to bob
// (its data and children) and shown to alice; the refusal is ZooKeeper's
// NoAuth.
func TestACLAppliesToLogin(t *testing.T) {
	addr := startZK(t)
	owner := dialZK(t, addr, "alice:pw")
	only := []zk.ACL{{Perms: zk.PermAll, Scheme: "digest", ID: acl.DigestID("alice", "pw")}}
	if _, err := owner.Create("/secret", []byte("hidden"), 0, only); err != nil {
		t.Fatal(err)
	}
	if _, err := owner.Create("/secret/child", nil, 0, only); err != nil {
		t.Fatal(err)
	}
	hs := startConsole(t, addr, true)
	bob := newBrowser(t, hs)
	bob.login("bob", "pw")
	if st, out := bob.get("/api/children?path=/secret"); st != http.StatusForbidden || out["code"] != "NoAuth" {
		t.Fatalf("bob lists /secret: %d %v", st, out)
	}
	// getACL wants READ or ADMIN too (as ZooKeeper's): nothing is shown.
	st, out := bob.get("/api/node?path=/secret")
	if st != http.StatusForbidden || out["code"] != "NoAuth" {
		t.Fatalf("bob reads /secret: %d %v", st, out)
	}
	if st, out := bob.post("/api/set", map[string]any{"path": "/secret", "data": "x", "version": 0}); st != http.StatusForbidden || out["code"] != "NoAuth" {
		t.Fatalf("bob sets /secret: %d %v", st, out)
	}
	// A wrong password is another identity: refused the same way.
	eve := newBrowser(t, hs)
	eve.login("alice", "wrong")
	if st, _ := eve.get("/api/children?path=/secret"); st != http.StatusForbidden {
		t.Fatalf("alice with a wrong password lists /secret: %d", st)
	}
	alice := newBrowser(t, hs)
	alice.login("alice", "pw")
	st, out = alice.get("/api/node?path=/secret")
	if st != http.StatusOK || out["data"] != base64.StdEncoding.EncodeToString([]byte("hidden")) {
		t.Fatalf("alice reads /secret: %d %v", st, out)
	}
	if st, out := alice.get("/api/children?path=/secret"); st != http.StatusOK || out["total"] != 1.0 {
		t.Fatalf("alice lists /secret: %d %v", st, out)
	}
}

// TestSetConflictShown: a set at the version the page loaded fails with
// 409 BadVersion and the node as it is now once another client changed
// it; nothing is overwritten.
func TestSetConflictShown(t *testing.T) {
	addr := startZK(t)
	other := dialZK(t, addr)
	if _, err := other.Create("/cfg", []byte("v0"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t, startConsole(t, addr, true))
	b.login("alice", "pw")
	_, node := b.get("/api/node?path=/cfg")
	version := node["stat"].(map[string]any)["version"]
	if _, err := other.Set("/cfg", []byte("theirs"), 0); err != nil {
		t.Fatal(err)
	}
	st, out := b.post("/api/set", map[string]any{"path": "/cfg", "data": "mine", "version": version})
	if st != http.StatusConflict || out["code"] != "BadVersion" {
		t.Fatalf("set at a stale version: %d %v", st, out)
	}
	cur := out["current"].(map[string]any)
	if cur["data"] != base64.StdEncoding.EncodeToString([]byte("theirs")) || cur["stat"].(map[string]any)["version"] != 1.0 {
		t.Fatalf("conflict shows %v", cur)
	}
	if data, _, _ := other.Get("/cfg"); string(data) != "theirs" {
		t.Fatalf("overwritten: %q", data)
	}
	if st, out := b.post("/api/set", map[string]any{"path": "/cfg", "data": "mine", "version": 1}); st != http.StatusOK {
		t.Fatalf("set at the current version: %d %v", st, out)
	}
	if st, _ := b.post("/api/set", map[string]any{"path": "/cfg", "data": "x"}); st != http.StatusBadRequest {
		t.Fatalf("set without a version: %d, want 400", st)
	}
}

// TestRecursiveDeleteConfirmed: the subtree is listed children first; a
// delete naming that list removes it all; one whose list is stale (a node
// appeared since) deletes nothing and answers the new list.
func TestRecursiveDeleteConfirmed(t *testing.T) {
	addr := startZK(t)
	other := dialZK(t, addr)
	for _, p := range []string{"/d", "/d/a", "/d/a/x", "/d/b"} {
		if _, err := other.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
	}
	b := newBrowser(t, startConsole(t, addr, true))
	b.login("alice", "pw")
	_, sub := b.get("/api/subtree?path=/d")
	listed := toStrings(sub["paths"])
	if want := []string{"/d/a/x", "/d/a", "/d/b", "/d"}; !slices.Equal(listed, want) {
		t.Fatalf("subtree %v, want %v", listed, want)
	}
	if _, err := other.Create("/d/late", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	st, out := b.post("/api/delete", deleteRequest{Path: "/d", Recursive: true, Expect: listed})
	if st != http.StatusConflict || !slices.Contains(toStrings(out["paths"]), "/d/late") {
		t.Fatalf("stale delete: %d %v", st, out)
	}
	if ok, _, _ := other.Exists("/d/a/x"); !ok {
		t.Fatal("a stale confirmation deleted nodes")
	}
	st, out = b.post("/api/delete", deleteRequest{Path: "/d", Recursive: true, Expect: toStrings(out["paths"])})
	if st != http.StatusOK || len(toStrings(out["deleted"])) != 5 {
		t.Fatalf("confirmed delete: %d %v", st, out)
	}
	if ok, _, _ := other.Exists("/d"); ok {
		t.Fatal("/d still there")
	}
}

func toStrings(v any) []string {
	var out []string
	list, _ := v.([]any)
	for _, x := range list {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

// TestCreateModes: every create mode the page offers makes the node
// ZooKeeper would: an ephemeral owned by the login's own session (gone
// when it logs out), sequential names, a container, TTL nodes.
func TestCreateModes(t *testing.T) {
	addr := startZK(t)
	other := dialZK(t, addr)
	b := newBrowser(t, startConsole(t, addr, true))
	b.login("alice", "pw")
	_, who := b.get("/api/whoami")
	created := map[string]string{}
	for _, req := range []createRequest{
		{Path: "/p", Mode: "persistent", Data: "d"},
		{Path: "/e", Mode: "ephemeral"},
		{Path: "/s-", Mode: "sequential"},
		{Path: "/es-", Mode: "ephemeral-sequential"},
		{Path: "/c", Mode: "container"},
		{Path: "/t", Mode: "ttl", TTLMs: 60000},
		{Path: "/ts-", Mode: "persistent-sequential-ttl", TTLMs: 60000},
	} {
		st, out := b.post("/api/create", req)
		if st != http.StatusOK {
			t.Fatalf("create %s: %d %v", req.Mode, st, out)
		}
		created[req.Mode] = out["path"].(string)
	}
	if created["sequential"] != "/s-0000000002" || !strings.HasPrefix(created["ephemeral-sequential"], "/es-00000000") {
		t.Fatalf("sequential names: %v", created)
	}
	owner := func(p string) string {
		_, st, err := other.Get(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		return fmt.Sprintf("0x%x", st.EphemeralOwner)
	}
	if owner("/e") != who["session"] || owner(created["ephemeral-sequential"]) != who["session"] || owner("/p") != "0x0" {
		t.Fatalf("owners: /e %s, /p %s, login %v", owner("/e"), owner("/p"), who["session"])
	}
	if st, out := b.post("/api/create", createRequest{Path: "/x", Mode: "bogus"}); st != http.StatusBadRequest {
		t.Fatalf("unknown mode: %d %v", st, out)
	}
	if st, out := b.post("/api/create", createRequest{Path: "/p", Mode: "persistent"}); st != http.StatusConflict || out["code"] != "NodeExists" {
		t.Fatalf("create twice: %d %v", st, out)
	}
	b.post("/api/logout", struct{}{})
	deadline := time.Now().Add(5 * time.Second)
	for {
		ok, _, _ := other.Exists("/e")
		if !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the ephemeral outlived the logout")
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, p := range []string{"/p", "/c", "/t", created["sequential"]} {
		if ok, _, _ := other.Exists(p); !ok {
			t.Fatalf("%s gone after the logout", p)
		}
	}
}

// TestLoginsBoundedPerIdentity: logins are bounded by identity, not by
// address (behind a reverse proxy every browser has one address): more
// logins than the old per-address bound come from one address; past
// MaxLoginsPerUser a user's next login, and past MaxAnonymousLogins an
// anonymous one, is refused with 503 before a ZooKeeper session is
// opened, while other users still log in; logging out makes room again.
func TestLoginsBoundedPerIdentity(t *testing.T) {
	addr := startZK(t)
	cfg := consoleConfig(addr, false)
	cfg.MaxLoginsPerUser, cfg.MaxAnonymousLogins = 3, 10
	hs := serveConsole(t, cfg)
	before := sessionCount(t, addr)
	var alice []*browser
	for range 3 {
		b := newBrowser(t, hs)
		b.login("alice", "pw")
		alice = append(alice, b)
	}
	for range 10 { // one address, more than the 8 it once had
		newBrowser(t, hs).login("", "")
	}
	refused := func(user, password string) {
		t.Helper()
		if st, out := newBrowser(t, hs).do("POST", "/api/login", loginRequest{User: user, Password: password}, nil); st != http.StatusServiceUnavailable {
			t.Fatalf("login as %q past its bound: %d %v, want 503", user, st, out)
		}
	}
	refused("alice", "pw")
	refused("", "")
	if n := sessionCount(t, addr); n != before+13 {
		t.Fatalf("%d sessions, want %d: a refused login opened one", n, before+13)
	}
	newBrowser(t, hs).login("bob", "pw")
	if st, out := alice[0].post("/api/logout", struct{}{}); st != http.StatusOK {
		t.Fatalf("logout: %d %v", st, out)
	}
	newBrowser(t, hs).login("alice", "pw")
}

// sessionCount is the number of sessions the zkraft at addr holds.
func sessionCount(t testing.TB, addr string) int {
	t.Helper()
	zs := serverAt(addr)
	tree := zs.node.RLockTree()
	defer zs.node.RUnlockTree()
	return len(tree.Sessions())
}
