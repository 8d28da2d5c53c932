package console

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/acl"
	"github.com/zkraft/zkraft/internal/cli/fourletter"
	"github.com/zkraft/zkraft/internal/testing/procs"
	"github.com/zkraft/zkraft/internal/testing/testproc"
)

// The data editor edits exactly the node's bytes, shows a bounded view
// of a large node, checks JSON before it saves, and the page shows names
// with their control characters escaped (console/static/data.js).

// js runs script in the page and returns its result.
func (p *page) js(script string, args ...any) any {
	p.t.Helper()
	var out any
	if err := p.s.Exec(&out, script, args...); err != nil {
		p.t.Fatalf("%s: %v", script, err)
	}
	return out
}

// jsBool runs script in the page and returns its boolean result.
func (p *page) jsBool(script string, args ...any) bool {
	p.t.Helper()
	b, _ := p.js(script, args...).(bool)
	return b
}

// jsInt runs script in the page and returns its numeric result.
func (p *page) jsInt(script string, args ...any) int {
	p.t.Helper()
	f, _ := p.js(script, args...).(float64)
	return int(f)
}

// editor is the data editor's text.
func (p *page) editor() string {
	p.t.Helper()
	s, _ := p.js(`return document.querySelector("#data-editor").value;`).(string)
	return s
}

// shown reports whether the element css selects is displayed.
func (p *page) shown(css string) bool {
	p.t.Helper()
	e, err := p.s.Find(css)
	if err != nil {
		p.t.Fatal(err)
	}
	ok, err := e.Displayed()
	if err != nil {
		p.t.Fatal(err)
	}
	return ok
}

// mustData fails unless path holds want at version.
func mustData(t *testing.T, c *zk.Conn, path string, want []byte, version int32) {
	t.Helper()
	data, st, err := c.Get(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, want) || st.Version != version {
		t.Fatalf("%s: %x at version %d, want %x at version %d", path, data, st.Version, want, version)
	}
}

// selectNode clicks a top-level node in the tree and waits for it.
func (p *page) selectNode(path string) {
	p.t.Helper()
	p.click(nodeCSS(path, ".name"))
	p.waitText("#node-path", path)
}

// TestConsoleBinaryDataInBrowser: 256 random bytes and Latin-1 text (not
// UTF-8) open in the hex editor; text editing is off for them with a
// note, and no save can happen in that form; saved unchanged as hex and
// as base64 they keep every byte, and a one-byte change in hex writes
// exactly that change. Bad hex writes nothing. A user who may not read a
// node's data gets no editor and no Save. Before, such data showed an
// empty editor whose Save wrote empty data.
func TestConsoleBinaryDataInBrowser(t *testing.T) {
	clientAddr, adminAddr := procs.ConsoleServer(t, "--console-writable")
	other := procs.ConnectAdmin(t, []string{clientAddr})
	defer other.Close()
	knownUsers(t, other, "bob:bob-pw")
	rng := rand.New(rand.NewPCG(39, 256))
	random := make([]byte, 256)
	for i := range random {
		random[i] = byte(rng.IntN(256))
	}
	random[0], random[1], random[2] = 0xff, 0x0d, 0x0a // not UTF-8, and a CR LF a text box would change
	latin1 := []byte("caf\xe9 cr\xe8me br\xfbl\xe9e, na\xefve")
	open := zk.WorldACL(zk.PermAll)
	if err := other.AddAuth("digest", []byte("alice:alice-pw")); err != nil {
		t.Fatal(err)
	}
	nobody := []zk.ACL{{Perms: zk.PermAll, Scheme: "digest", ID: acl.DigestID("alice", "alice-pw")}}
	adminOnly := append([]zk.ACL{{Perms: zk.PermAdmin, Scheme: "digest", ID: acl.DigestID("bob", "bob-pw")}}, nobody...)
	for _, n := range []struct {
		path string
		data []byte
		acl  []zk.ACL
	}{{"/bin", random, open}, {"/latin1", latin1, open}, {"/noread", []byte("hidden"), adminOnly}, {"/secret", []byte("alice only"), nobody}} {
		if _, err := other.Create(n.path, n.data, 0, n.acl); err != nil {
			t.Fatalf("create %s: %v", n.path, err)
		}
	}

	p := openConsole(t, adminAddr)
	p.login("bob", "bob-pw")
	p.waitText("#who-mode", "writable")

	p.selectNode("/bin")
	p.find("#editor")
	if !p.jsBool(`return document.querySelector("#edit-hex").checked;`) {
		t.Fatal("binary data does not open in the hex editor")
	}
	if got := strings.Join(strings.Fields(p.editor()), ""); got != hex.EncodeToString(random) {
		t.Fatalf("hex editor shows %s, want %x", got, random)
	}
	// Text: off, with a note, and Save cannot be pressed.
	p.click("#edit-text")
	p.waitText("#edit-note", "not valid UTF-8")
	if !p.jsBool(`return document.querySelector("#data-editor").disabled && document.querySelector("#save").disabled;`) {
		t.Fatal("text editing of binary data is on")
	}
	p.js(`document.querySelector("#save").click(); return true;`)
	p.screenshot("console-binary-text-off.png")
	mustData(t, other, "/bin", random, 0)

	// Hex and base64 keep every byte.
	p.click("#edit-hex")
	p.click("#save")
	p.waitText("#message", "Saved: version 1")
	mustData(t, other, "/bin", random, 1)
	changed := bytes.Clone(random)
	changed[255] ^= 0xff
	p.typeInto("#data-editor", hex.EncodeToString(changed))
	p.click("#save")
	p.waitText("#message", "Saved: version 2")
	mustData(t, other, "/bin", changed, 2)
	p.click("#edit-base64")
	if got := strings.Join(strings.Fields(p.editor()), ""); got != base64.StdEncoding.EncodeToString(changed) {
		t.Fatalf("base64 editor shows %s", got)
	}
	p.click("#save")
	p.waitText("#message", "Saved: version 3")
	mustData(t, other, "/bin", changed, 3)
	p.click("#edit-hex")
	p.typeInto("#data-editor", "0g")
	p.click("#save")
	p.waitText("#message", "Not saved: not hex")
	mustData(t, other, "/bin", changed, 3)

	// Latin-1: the same.
	p.selectNode("/latin1")
	p.find("#editor")
	p.click("#edit-text")
	p.waitText("#edit-note", "not valid UTF-8")
	p.click("#edit-base64")
	p.click("#save")
	p.waitText("#message", "Saved: version 1")
	mustData(t, other, "/latin1", latin1, 1)
	p.click("#edit-hex")
	fixed := append(bytes.Clone(latin1), '!')
	p.typeInto("#data-editor", hex.EncodeToString(fixed))
	p.click("#save")
	p.waitText("#message", "Saved: version 2")
	mustData(t, other, "/latin1", fixed, 2)
	p.screenshot("console-binary-hex.png")

	// No READ: no editor, no Save; its Stat and ACL still show.
	p.selectNode("/noread")
	p.waitText("#no-editor", "you may not read this node's data")
	p.waitText("#acl tbody", "digest")
	if p.shown("#editor") || p.shown("#save") {
		t.Fatal("an editor is offered for a node the user may not read")
	}
	p.screenshot("console-no-read.png")
	p.selectNode("/secret")
	p.waitText("#message", "NoAuth")
	if p.shown("#editor") || p.shown("#save") {
		t.Fatal("an editor is offered for a node the user may not see")
	}
	mustData(t, other, "/noread", []byte("hidden"), 0)
}

// TestConsoleJSONEditInBrowser: in the JSON view the editor shows the
// same pretty JSON; a save in JSON form parses first, refuses invalid
// JSON with the parse error and writes nothing, and saves valid JSON as
// typed. JSON that indenting would change (a number beyond a double's
// precision) is shown and edited as stored, and saves unchanged.
func TestConsoleJSONEditInBrowser(t *testing.T) {
	clientAddr, adminAddr := procs.ConsoleServer(t, "--console-writable")
	other := procs.ConnectAdmin(t, []string{clientAddr})
	defer other.Close()
	knownUsers(t, other, "bob:bob-pw")
	compact := []byte(`{"replicas":3,"ports":[80,443]}`)
	if _, err := other.Create("/cfg", compact, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	precise := []byte(`{"id":12345678901234567890}`)
	if _, err := other.Create("/id", precise, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	p := openConsole(t, adminAddr)
	p.login("bob", "bob-pw")
	p.selectNode("/cfg")
	p.click("#view-json")
	view := p.waitText("#node-data", `"replicas": 3,`)
	if !p.jsBool(`return document.querySelector("#edit-json").checked;`) {
		t.Fatal("the JSON view's editor is not in JSON form")
	}
	pretty, _ := p.js(`return document.querySelector("#node-data").textContent;`).(string)
	if p.editor() != pretty {
		t.Fatalf("the editor shows %q, the view %q (%q)", p.editor(), pretty, view)
	}
	p.typeInto("#data-editor", `{"replicas": 4,`)
	p.click("#save")
	p.waitText("#message", "Not saved: not JSON")
	p.screenshot("console-json-invalid.png")
	mustData(t, other, "/cfg", compact, 0)
	p.typeInto("#data-editor", `{"replicas": 4}`)
	p.click("#save")
	p.waitText("#message", "Saved: version 1")
	mustData(t, other, "/cfg", []byte(`{"replicas": 4}`), 1)

	p.selectNode("/id")
	p.waitText("#node-data", "shown as stored")
	p.waitText("#node-data", "12345678901234567890")
	if p.editor() != string(precise) {
		t.Fatalf("the JSON editor shows %q, want %q as stored", p.editor(), precise)
	}
	p.click("#save")
	p.waitText("#message", "Saved: version 1")
	mustData(t, other, "/id", precise, 1)
}

// TestConsoleLargeNodeInBrowser: a 1 MB node shows its first 64 KiB
// (text and hex dump bounded in the DOM), with more and all on demand;
// it can be edited only once all of it is loaded, and then saves
// unchanged. Before, the page rendered all of it (a 4.8-million
// character hex dump).
func TestConsoleLargeNodeInBrowser(t *testing.T) {
	clientAddr, adminAddr := procs.ConsoleServer(t, "--console-writable")
	other := procs.ConnectAdmin(t, []string{clientAddr})
	defer other.Close()
	knownUsers(t, other, "bob:bob-pw")
	big := bytes.Repeat([]byte("0123456789abcdef"), 62_500) // 1,000,000 bytes
	if _, err := other.Create("/large", big, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	p := openConsole(t, adminAddr)
	p.login("bob", "bob-pw")
	p.selectNode("/large")
	p.waitText("#data-bound", "Showing the first 64 KiB (65536 bytes) of 976.6 KiB (1000000 bytes)")
	preLen := `return document.querySelector("#node-data").textContent.length;`
	if n := p.jsInt(preLen); n != 65536 {
		t.Fatalf("the text view holds %d characters, want the first 65536", n)
	}
	p.waitText("#no-editor", "Load all")
	if p.shown("#editor") {
		t.Fatal("an editor is offered before all the data is loaded")
	}
	p.click("#view-hex")
	p.waitText("#node-data", "0000fff0  ")
	if n := p.jsInt(preLen); n > 4096*80 {
		t.Fatalf("the hex dump holds %d characters for 64 KiB", n)
	}
	p.screenshot("console-large.png")
	p.click("#data-more")
	p.waitText("#data-bound", "Showing the first 128 KiB")
	p.waitText("#node-data", "0001fff0  30 31 32 33 34 35 36 37 38 39 61 62 63 64 65 66  0123456789abcdef")
	p.click("#view-text")
	if n := p.jsInt(preLen); n != 2*65536 {
		t.Fatalf("the text view holds %d characters after more, want %d", n, 2*65536)
	}
	if !p.jsBool(`return document.querySelector("#node-data").textContent === "0123456789abcdef".repeat(8192);`) {
		t.Fatal("the text view after more is not the node's first 128 KiB")
	}
	p.click("#view-hex")
	p.click("#data-all")
	p.find("#editor")
	p.waitText("#data-bound", "A hex dump shows at most 256 KiB")
	if n := p.jsInt(preLen); n > 16384*80 {
		t.Fatalf("the hex dump of all of it holds %d characters", n)
	}
	p.click("#view-text")
	p.click("#edit-text")
	if n := len(p.editor()); n != len(big) {
		t.Fatalf("the editor holds %d characters, want %d", n, len(big))
	}
	p.click("#save")
	p.waitText("#message", "Saved: version 1")
	mustData(t, other, "/large", big, 1)
}

// TestConsoleNamesEscapedInBrowser: a name holding U+202E (right-to-left
// override) shows it escaped, as ⟨U+202E⟩, in the tree, the path bar,
// search results, the live feed, the delete confirmation and the
// sessions table, so it reverses nothing; Copy path copies the real path.
func TestConsoleNamesEscapedInBrowser(t *testing.T) {
	clientAddr, adminAddr := procs.ConsoleServer(t, "--console-writable")
	other := procs.ConnectAdmin(t, []string{clientAddr})
	defer other.Close()
	knownUsers(t, other, "bob:bob-pw")
	const name, shown = "report\u202Efdp.exe", "report⟨U+202E⟩fdp.exe"
	if _, err := other.Create("/dl", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	p := openConsole(t, adminAddr)
	p.login("bob", "bob-pw")
	p.waitText("#live-state", "live")
	if _, err := other.Create("/dl/"+name, []byte("x"), zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	p.waitText("#feed", "NodeCreated /dl/"+shown)
	p.waitText(nodeCSS("/dl", ".count"), "1")
	p.click(nodeCSS("/dl", ".twisty"))
	p.waitText(`#tree li.node[data-path="/dl"] > ul`, shown)
	p.click(`#tree li.node[data-path="/dl/` + name + `"] > .row > .name`) // the raw character: %q would escape it
	p.waitText("#node-path", "/dl/"+shown)
	p.find("#node-path .ctl")
	p.js(`window.copied = null; navigator.clipboard.writeText = async (s) => { window.copied = s; }; return true;`)
	p.click("#copy-path")
	p.waitText("#copied", "copied")
	if got, _ := p.js(`return window.copied;`).(string); got != "/dl/"+name {
		t.Fatalf("copy path copied %q", got)
	}
	p.typeInto("#search", "/dl/rep\uE007")
	p.waitText("#search-results", "/dl/"+shown)
	p.click("#delete")
	p.waitText("#delete-root", "/dl/"+shown)
	p.waitText("#delete-list", "/dl/"+shown)
	p.screenshot("console-bidi-delete.png")
	p.click("#delete-cancel")
	for _, css := range []string{"#tree", "#node-path", "#search-results", "#feed", "#delete-dialog"} {
		if p.jsBool(`return document.querySelector(arguments[0]).textContent.includes("\u202E");`, css) {
			t.Fatalf("%s shows a raw U+202E", css)
		}
	}
	p.click("#tab-ensemble")
	p.waitText("#sessions", "/dl/"+shown)
	if p.jsBool(`return document.querySelector("#sessions").textContent.includes("\u202E");`) {
		t.Fatal("the sessions table shows a raw U+202E")
	}
	p.click("#tab-tree")
	p.screenshot("console-bidi.png")
}

// TestConsoleSearchClearInBrowser: search results sit in a bounded,
// scrolling list that leaves the tree in view, and the clear button or
// Escape ends the search and shows the tree alone.
func TestConsoleSearchClearInBrowser(t *testing.T) {
	clientAddr, adminAddr := procs.ConsoleServer(t, "--console-writable")
	other := procs.ConnectAdmin(t, []string{clientAddr})
	defer other.Close()
	knownUsers(t, other, "bob:bob-pw")
	if _, err := other.Create("/many", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	for i := range 150 {
		if _, err := other.Create(fmt.Sprintf("/many/n%03d", i), nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
	}
	p := openConsole(t, adminAddr)
	p.login("bob", "bob-pw")
	p.typeInto("#search", "/many\uE007")
	p.waitText("#search-results", "/many/n149")
	if !p.jsBool(`const r = document.querySelector("#search-results"); return r.scrollHeight > r.clientHeight;`) {
		t.Fatal("150 results do not scroll in their own list")
	}
	treeInView := `const t = document.querySelector('#tree li.node[data-path="/zookeeper"]').getBoundingClientRect();
		const side = document.querySelector("#side").getBoundingClientRect();
		return t.top >= side.top && t.bottom <= side.bottom && t.bottom <= window.innerHeight;`
	if !p.jsBool(treeInView) {
		t.Fatal("the search results push the tree out of view")
	}
	p.screenshot("console-search.png")
	if err := p.find("#search").SendKeys("\uE00C"); err != nil { // Escape
		t.Fatal(err)
	}
	if p.shown("#search-results") || p.shown("#search-clear") {
		t.Fatal("Escape left the search results")
	}
	if v, _ := p.js(`return document.querySelector("#search").value;`).(string); v != "" {
		t.Fatalf("Escape left %q in the search box", v)
	}
	p.typeInto("#search", "/many/n1\uE007")
	p.waitText("#search-results", "/many/n100")
	p.click("#search-clear")
	if p.shown("#search-results") {
		t.Fatal("the clear button left the search results")
	}
	if !p.jsBool(treeInView) {
		t.Fatal("the tree is not in view after the search is cleared")
	}
}

// TestConsolePeersEnsembleInBrowser: on an ensemble started with --peers
// (the README's way), a member whose entry carries its client address
// (id=host:port;clientAddr) shows its role on another member's ensemble
// page, and one whose entry does not shows as "unknown" with the reason,
// not as down like a crashed member. Before, every member but the
// console's own showed "down / no client address in its server line".
func TestConsolePeersEnsembleInBrowser(t *testing.T) {
	type member struct{ client, admin, peer string }
	ms := make([]member, 3)
	for i := range ms {
		ms[i] = member{procs.FreeAddr(t), procs.FreeAddr(t), procs.FreeAddr(t)}
	}
	peers := fmt.Sprintf("1=%s;%s,2=%s;%s,3=%s", ms[0].peer, ms[0].client, ms[1].peer, ms[1].client, ms[2].peer)
	for i, m := range ms {
		dir := t.TempDir()
		logf, err := os.Create(filepath.Join(dir, "zkraft.log"))
		if err != nil {
			t.Fatal(err)
		}
		cmd := testproc.Command(procs.Binary(t), "server", "--log-level", "warn", "--id", fmt.Sprint(i+1), "--peers", peers,
			"--client-addr", m.client, "--data-dir", dir, "--admin-addr", m.admin, "--console", "--4lw-whitelist", "*")
		cmd.Stdout, cmd.Stderr = logf, logf
		if err := testproc.Start(t, cmd); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			logf.Close()
			if t.Failed() {
				b, _ := os.ReadFile(logf.Name())
				t.Logf("member %d log:\n%s", i+1, procs.Tail(string(b), 30))
			}
		})
	}
	for i, m := range ms {
		for deadline := time.Now().Add(30 * time.Second); !strings.Contains(fourletter.Ask(m.client, "srvr"), "Mode: "); time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("member %d not serving", i+1)
			}
		}
	}
	other := procs.ConnectAdmin(t, []string{ms[0].client})
	defer other.Close()
	knownUsers(t, other, "erin:erin-pw")
	onFirst := procs.ConnectAdmin(t, []string{ms[0].client})
	defer onFirst.Close()
	if _, err := onFirst.Sync("/console-users"); err != nil {
		t.Fatal(err)
	}
	p := openConsole(t, ms[0].admin)
	p.login("erin", "erin-pw")
	p.click("#tab-ensemble")
	p.waitText(`#members tr[data-id="3"]`, "unknown")
	p.waitText(`#members tr[data-id="3"]`, "no client address known for this member")
	for _, id := range []string{"1", "2"} {
		row := p.waitText(`#members tr[data-id="`+id+`"]`, "0x")
		if !strings.Contains(row, "leader") && !strings.Contains(row, "follower") {
			t.Fatalf("member %s: %q", id, row)
		}
	}
	if rows := p.waitText("#members tbody", "unknown"); strings.Contains(rows, "down") {
		t.Fatalf("a healthy member shows as down:\n%s", rows)
	}
	p.screenshot("console-peers-ensemble.png")
}
