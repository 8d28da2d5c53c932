package console

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/acl"
	"github.com/zkraft/zkraft/internal/cli/fourletter"
	"github.com/zkraft/zkraft/internal/testing/procs"
	"github.com/zkraft/zkraft/internal/testing/testenv"
	"github.com/zkraft/zkraft/internal/testing/webdriver"
)

// The console's browser tests drive Debian's chromium through
// chromedriver (internal/testing/webdriver) against zkraft processes started as
// an operator would, with --console. Screenshots go to $ZKRAFT_ARTIFACTS
// (default: the test's temporary directory), named in the test log.

// page is a browser window on a console, failing its test on any error.
type page struct {
	t    *testing.T
	s    *webdriver.Session
	base string // http://admin-addr/console/
	dir  string // where screenshots go
}

// The browser is started once for the test binary and shared by the
// console tests (a Chromium start costs seconds on a loaded machine);
// TestMain stops it.
var (
	browserOnce sync.Once
	browserDrv  *webdriver.Driver
	browserWin  *webdriver.Session
	browserErr  error
)

// sharedBrowser returns the test binary's browser window, starting it
// on first use.
func sharedBrowser() (*webdriver.Session, error) {
	browserOnce.Do(func() {
		if browserDrv, browserErr = webdriver.Start(); browserErr != nil {
			return
		}
		if browserWin, browserErr = browserDrv.NewSession(1280, 860); browserErr != nil {
			browserDrv.Close()
			browserDrv = nil
		}
	})
	return browserWin, browserErr
}

// stopBrowser ends the shared browser, if one was started.
func stopBrowser() {
	if browserWin != nil {
		browserWin.Close()
	}
	if browserDrv != nil {
		browserDrv.Close()
	}
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

// openConsole points the shared browser, without cookies, at the console
// at adminAddr.
func openConsole(t *testing.T, adminAddr string) *page {
	t.Helper()
	_, _, err := webdriver.Binaries()
	testenv.Require(t, err)
	s, err := sharedBrowser()
	if err != nil {
		t.Fatal(err)
	}
	dir := os.Getenv("ZKRAFT_ARTIFACTS")
	if dir == "" {
		dir = t.TempDir()
	}
	p := &page{t: t, s: s, base: "http://" + adminAddr + "/console/", dir: dir}
	t.Cleanup(func() {
		if t.Failed() {
			p.screenshot("failed-" + t.Name() + ".png")
		}
	})
	if err := s.Navigate(p.base); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteCookies(); err != nil {
		t.Fatal(err)
	}
	if err := s.Navigate(p.base); err != nil {
		t.Fatal(err)
	}
	return p
}

const uiWait = 10 * time.Second

func (p *page) find(css string) webdriver.Element {
	p.t.Helper()
	e, err := p.s.WaitFind(css, uiWait)
	if err != nil {
		p.t.Fatal(err)
	}
	return e
}

func (p *page) click(css string) {
	p.t.Helper()
	if err := p.find(css).Click(); err != nil {
		p.t.Fatalf("click %s: %v", css, err)
	}
}

func (p *page) typeInto(css, text string) {
	p.t.Helper()
	e := p.find(css)
	if err := e.Clear(); err != nil {
		p.t.Fatalf("clear %s: %v", css, err)
	}
	if err := e.SendKeys(text); err != nil {
		p.t.Fatalf("type into %s: %v", css, err)
	}
}

// waitText waits for css to show text containing want and returns it.
func (p *page) waitText(css, want string) string {
	p.t.Helper()
	text, err := p.s.WaitText(css, want, uiWait)
	if err != nil {
		p.t.Fatal(err)
	}
	return text
}

// login logs in through the form and waits for the tree.
func (p *page) login(user, password string) {
	p.t.Helper()
	p.typeInto("#login-user", user)
	p.typeInto("#login-password", password)
	p.click("#login-submit")
	p.find(`#tree li.node[data-path="/zookeeper"]`)
}

// nodeCSS selects a node's row part in the tree.
func nodeCSS(path, part string) string {
	return fmt.Sprintf(`#tree li.node[data-path=%q] > .row > %s`, path, part)
}

// screenshot saves the window as name under the artifacts directory.
func (p *page) screenshot(name string) {
	p.t.Helper()
	png, err := p.s.Screenshot()
	if err != nil {
		p.t.Fatal(err)
	}
	if err := os.MkdirAll(p.dir, 0o755); err != nil {
		p.t.Fatal(err)
	}
	path := filepath.Join(p.dir, name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		p.t.Fatal(err)
	}
	p.t.Logf("screenshot: %s", path)
}

// fetchStatus runs a fetch in the page (with its cookie, as the page's
// own script would) and returns the HTTP status.
func (p *page) fetchStatus(method, path, csrf, body string) int {
	p.t.Helper()
	var status int
	err := p.s.Exec(&status, `const [m, u, tok, b] = arguments;
		const r = await fetch(u, {method: m, headers: {"Content-Type": "application/json", "X-CSRF-Token": tok}, body: b || undefined});
		return r.status;`, method, p.base+path, csrf, body)
	if err != nil {
		p.t.Fatal(err)
	}
	return status
}

// csrfToken is the page's CSRF token (whoami answers it to the page).
func (p *page) csrfToken() string {
	p.t.Helper()
	var tok string
	if err := p.s.Exec(&tok, `const r = await fetch(arguments[0]); return (await r.json()).csrf;`, p.base+"api/whoami"); err != nil {
		p.t.Fatal(err)
	}
	return tok
}

// knownUsers creates /console-users, readable by anyone, whose ACL names
// each user:password given: the console logs in only identities the
// ensemble knows (a wrong password is a failed login).
func knownUsers(t *testing.T, c *zk.Conn, creds ...string) {
	t.Helper()
	list := zk.WorldACL(zk.PermRead)
	for _, cred := range creds {
		user, password, _ := strings.Cut(cred, ":")
		list = append(list, zk.ACL{Perms: zk.PermRead, Scheme: "digest", ID: acl.DigestID(user, password)})
	}
	if _, err := c.Create("/console-users", nil, 0, list); err != nil {
		t.Fatal(err)
	}
}

// seed creates nodes as alice: /app with a JSON config and a directory of
// 120 children, and /secret that only alice may touch; bob is a user the
// ensemble knows.
func seed(t *testing.T, c *zk.Conn) {
	t.Helper()
	knownUsers(t, c, "bob:bob-pw")
	open := zk.WorldACL(zk.PermAll)
	only := []zk.ACL{{Perms: zk.PermAll, Scheme: "digest", ID: acl.DigestID("alice", "alice-pw")}}
	must := func(path string, data string, acl []zk.ACL) {
		if _, err := c.Create(path, []byte(data), 0, acl); err != nil {
			t.Fatalf("create %s: %v", path, err)
		}
	}
	must("/app", "", open)
	must("/app/config", `{"replicas":3,"name":"web","ports":[80,443]}`, open)
	must("/app/big", "", open)
	for i := range 120 {
		must(fmt.Sprintf("/app/big/n%03d", i), "", open)
	}
	must("/secret", "alice only", only)
}

// TestConsoleInBrowser: in a real browser, a user logs in with digest
// credentials, browses (lazy children, a large directory paged, data as
// pretty JSON and hex, Stat, ACL), searches by prefix, copies a path, sees a change another client makes appear live, has
// an edit refused as a version conflict when another client changed the
// node meanwhile (nothing overwritten), is refused a node whose ACL does
// not name them, and creates and recursively deletes a subtree after a
// confirmation listing what goes.
func TestConsoleInBrowser(t *testing.T) {
	start := time.Now()
	clientAddr, adminAddr := procs.ConsoleServer(t, "--console-writable")
	other := procs.ConnectAdmin(t, []string{clientAddr})
	defer other.Close()
	if err := other.AddAuth("digest", []byte("alice:alice-pw")); err != nil {
		t.Fatal(err)
	}
	seed(t, other)

	p := openConsole(t, adminAddr)
	p.find("#login-user")
	p.login("bob", "bob-pw")
	p.waitText("#who-mode", "writable")
	p.waitText("#live-state", "live")

	// Browse: /app's children load when it is opened.
	p.click(nodeCSS("/app", ".twisty"))
	p.click(nodeCSS("/app/config", ".name"))
	p.waitText("#node-path", "/app/config")
	p.click("#view-json")
	p.waitText("#node-data", "\"replicas\": 3,")
	p.waitText(`#stat tr[data-field="ctime"]`, fmt.Sprint(time.Now().Year()))
	p.waitText(`#stat tr[data-field="dataLength"]`, "44")
	p.waitText("#acl tbody", "world anyone cdrwa")
	p.click("#view-hex")
	p.waitText("#node-data", "00000000  7b 22 72 65 70 6c 69 63")
	p.click("#view-text")
	p.waitText("#node-data", `{"replicas":3,`)

	// Search by path prefix, and copy a path.
	p.typeInto("#search", "/app/co\uE007") // Enter
	p.waitText("#search-results", "/app/config")
	p.click("#copy-path")
	p.waitText("#copied", "copied")

	// A large directory comes a page at a time.
	p.click(nodeCSS("/app/big", ".twisty"))
	p.waitText(`#tree li.node[data-path="/app/big"] .more`, "20 more")
	if n, _ := p.s.FindAll(`#tree li.node[data-path="/app/big"] > ul > li.node`); len(n) != 100 {
		t.Fatalf("first page: %d children, want 100", len(n))
	}
	p.click(`#tree li.node[data-path="/app/big"] .more`)
	p.find(`#tree li.node[data-path="/app/big/n119"]`)
	p.click(nodeCSS("/app/big", ".twisty")) // fold it again

	// Live: another client's create shows up without a reload.
	if _, err := other.Create("/app/fresh", []byte("hello"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	p.find(`#tree li.node[data-path="/app/fresh"]`)
	p.waitText("#feed", "NodeCreated /app/fresh")
	p.click(nodeCSS("/app/config", ".name"))
	p.waitText("#node-path", "/app/config")
	p.screenshot("console-browse.png")

	// Edit with a version conflict: another client writes between the
	// load and the save; the save is refused and theirs is shown.
	p.typeInto("#data-editor", `{"replicas":4}`)
	if _, err := other.Set("/app/config", []byte(`{"replicas":5}`), -1); err != nil {
		t.Fatal(err)
	}
	p.waitText("#message", "saving will conflict") // the live update noticed
	p.click("#save")
	p.find("#conflict")
	p.waitText("#conflict-data", `{"replicas":5}`)
	p.screenshot("console-conflict.png")
	if data, _, _ := other.Get("/app/config"); string(data) != `{"replicas":5}` {
		t.Fatalf("the conflicting save overwrote: %q", data)
	}
	p.click("#conflict-load")
	p.typeInto("#data-editor", `{"replicas":6}`)
	p.click("#save")
	p.waitText("#message", "Saved: version 2")
	if data, _, _ := other.Get("/app/config"); string(data) != `{"replicas":6}` {
		t.Fatalf("save at the current version: %q", data)
	}

	// An ACL that does not name bob refuses him, as on the wire.
	p.click(nodeCSS("/secret", ".name"))
	p.waitText("#message", "NoAuth")

	// Create a child, then delete /app/fresh's subtree with confirmation.
	p.click(nodeCSS("/app/fresh", ".name"))
	p.waitText("#node-path", "/app/fresh")
	p.typeInto("#create-name", "kid")
	p.typeInto("#create-data", "x")
	p.click("#create-submit")
	p.waitText("#message", "Created /app/fresh/kid")
	p.click("#delete")
	p.waitText("#delete-list", "/app/fresh/kid\n/app/fresh")
	p.click("#delete-yes")
	p.waitText("#message", "Deleted 2 nodes")
	if ok, _, _ := other.Exists("/app/fresh"); ok {
		t.Fatal("/app/fresh still there")
	}
	t.Logf("browser test took %v", time.Since(start).Round(time.Millisecond))
}

// TestConsoleReadOnlyInBrowser: a console without --console-writable
// shows no write controls, and a write sent from the page's own script,
// with its CSRF token, is refused with 403 and changes nothing.
func TestConsoleReadOnlyInBrowser(t *testing.T) {
	clientAddr, adminAddr := procs.ConsoleServer(t)
	other := procs.ConnectAdmin(t, []string{clientAddr})
	defer other.Close()
	knownUsers(t, other, "bob:bob-pw")
	if _, err := other.Create("/ro", []byte("v"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	p := openConsole(t, adminAddr)
	p.login("bob", "bob-pw")
	p.waitText("#who-mode", "read-only")
	p.click(nodeCSS("/ro", ".name"))
	p.waitText("#node-data", "v")
	if shown, _ := p.find("#node").Displayed(); !shown {
		t.Fatal("node not shown")
	}
	for _, css := range []string{"#save", "#create-submit", "#delete", "#acl-save"} {
		e, err := p.s.Find(css)
		if err != nil {
			t.Fatal(err)
		}
		if shown, _ := e.Displayed(); shown {
			t.Fatalf("%s is shown on a read-only console", css)
		}
	}
	tok := p.csrfToken()
	if st := p.fetchStatus("POST", "api/set", tok, `{"path":"/ro","data":"w","version":0}`); st != 403 {
		t.Fatalf("set on a read-only console: %d, want 403", st)
	}
	if st := p.fetchStatus("POST", "api/create", tok, `{"path":"/ro2","mode":"persistent"}`); st != 403 {
		t.Fatalf("create on a read-only console: %d, want 403", st)
	}
	if data, st, _ := other.Get("/ro"); string(data) != "v" || st.Version != 0 {
		t.Fatalf("/ro changed: %q", data)
	}
}

// TestConsoleEnsembleInBrowser: the console of a follower in a 3-member
// ensemble (zoo.cfg console.enabled) logs in, writes through that member
// (forwarded to the leader), sees a write made on another member live,
// and its ensemble page shows the three members, one leader, the term,
// and the sessions with their ephemerals.
func TestConsoleEnsembleInBrowser(t *testing.T) {
	members := procs.StartEnsemble(t, 3, "console.enabled=true", "console.readOnly=false")
	leader := procs.LeaderOf(t, members, nil)
	var follower, third *procs.Member
	for _, m := range members {
		switch {
		case m == leader:
		case follower == nil:
			follower = m
		default:
			third = m
		}
	}
	other := procs.ConnectAdmin(t, []string{third.ClientAddr})
	defer other.Close()
	knownUsers(t, other, "carol:carol-pw")
	if _, err := other.Create("/svc", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Create("/svc/eph", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	// The follower knows carol once it has applied /console-users.
	onFollower := procs.ConnectAdmin(t, []string{follower.ClientAddr})
	defer onFollower.Close()
	if _, err := onFollower.Sync("/console-users"); err != nil {
		t.Fatal(err)
	}
	p := openConsole(t, follower.AdminAddr)
	p.login("carol", "carol-pw")
	p.waitText("#live-state", "live")
	p.click(nodeCSS("/svc", ".name"))
	p.typeInto("#create-name", "via-follower")
	p.click("#create-submit")
	p.waitText("#message", "Created /svc/via-follower")
	if ok, _, err := other.Exists("/svc/via-follower"); err != nil || !ok {
		t.Fatalf("write through the follower's console not seen on another member: %v %v", ok, err)
	}
	if _, err := other.Create("/svc/from-elsewhere", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	p.waitText("#feed", "NodeCreated /svc/from-elsewhere")

	p.click("#tab-ensemble")
	rows := p.waitText("#members tbody", "leader")
	if strings.Count(rows, "follower") != 2 || strings.Count(rows, "leader") != 1 {
		t.Fatalf("ensemble rows:\n%s", rows)
	}
	p.waitText("#ens-leader", fmt.Sprint(leader.ID))
	p.waitText("#changes", fmt.Sprintf("leader %d", leader.ID))
	p.waitText("#oplat", "create")
	p.waitText("#sessions", "/svc/eph")
	p.waitText("#sessions", "(you)")
	p.waitText("#sessions", "(your live view)")
	p.screenshot("console-ensemble.png")
}

// TestConsoleTabGoneEndsLogin: a login whose tab is open but hidden (another
// tab in front, its live view stopped so that only the page's heartbeats
// speak for it) outlives three heartbeat timeouts, ephemeral node and all;
// once its tab is closed, the login ends with its ZooKeeper sessions
// within the timeout (and the console's housekeeping second). Before, a
// closed tab's login, and its session, lived on until 30 minutes idle.
func TestConsoleTabGoneEndsLogin(t *testing.T) {
	const timeout = 4 * time.Second
	clientAddr, adminAddr := procs.ConsoleServer(t, "--console-writable", "--console-heartbeat-timeout", "4s")
	other := procs.ConnectAdmin(t, []string{clientAddr})
	defer other.Close()
	knownUsers(t, other, "dave:dave-pw")
	p := openConsole(t, adminAddr)
	front, err := p.s.Window()
	if err != nil {
		t.Fatal(err)
	}
	tab, err := p.s.NewTab()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.s.SwitchTo(tab); err != nil {
		t.Fatal(err)
	}
	if err := p.s.Navigate(p.base); err != nil {
		t.Fatal(err)
	}
	base := globalSessions(t, clientAddr)
	p.login("dave", "dave-pw")
	p.waitText("#who-mode", "writable")
	if st := p.fetchStatus("POST", "api/create", p.csrfToken(), `{"path":"/dave-tab","mode":"ephemeral"}`); st != 200 {
		t.Fatalf("create the tab's ephemeral: %d", st)
	}
	// Only the heartbeats hold the login from now on; the page notes what
	// its visibility was.
	var ok bool
	if err := p.s.Exec(&ok, `stopLive(); window.seenStates = [document.visibilityState];
		document.addEventListener("visibilitychange", () => window.seenStates.push(document.visibilityState));
		return true;`); err != nil || !ok {
		t.Fatalf("stop the live view: %v", err)
	}
	for deadline := time.Now().Add(5 * time.Second); globalSessions(t, clientAddr) != base+1; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions with the live view stopped, want %d: the login's", globalSessions(t, clientAddr), base+1)
		}
	}
	if err := p.s.SwitchTo(front); err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(3 * timeout); time.Now().Before(end); time.Sleep(500 * time.Millisecond) {
		if exists, _, err := other.Exists("/dave-tab"); err != nil || !exists {
			t.Fatalf("the hidden tab's login ended: /dave-tab exists %v (%v)", exists, err)
		}
	}
	if err := p.s.SwitchTo(tab); err != nil {
		t.Fatal(err)
	}
	var states []string
	if err := p.s.Exec(&states, `return window.seenStates;`); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(states, "hidden") {
		t.Fatalf("the tab was never hidden: %v", states)
	}
	p.waitText("#who-mode", "writable")
	if st := p.fetchStatus("POST", "api/heartbeat", p.csrfToken(), "{}"); st != 200 {
		t.Fatalf("the hidden tab's login after %v: %d", 3*timeout, st)
	}
	if n := globalSessions(t, clientAddr); n != base+1 {
		t.Fatalf("%d sessions after the tab was hidden, want %d", n, base+1)
	}
	p.screenshot("console-hidden-tab.png")

	if err := p.s.CloseWindow(); err != nil {
		t.Fatal(err)
	}
	closed := time.Now()
	if err := p.s.SwitchTo(front); err != nil {
		t.Fatal(err)
	}
	for {
		exists, _, err := other.Exists("/dave-tab")
		if err != nil {
			t.Fatal(err)
		}
		if !exists {
			break
		}
		if time.Since(closed) > timeout+3*time.Second {
			t.Fatalf("the closed tab's login (its ephemeral) outlived it by %v", time.Since(closed))
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("the closed tab's login ended %v after the tab closed (heartbeat timeout %v)", time.Since(closed).Round(10*time.Millisecond), timeout)
	if n := globalSessions(t, clientAddr); n != base {
		t.Fatalf("%d sessions after the tab closed, want %d", n, base)
	}
}
