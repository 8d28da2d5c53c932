package console

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/internal/cli/zkjson"
	"github.com/zkraft/zkraft/internal/testing/procs"
)

// createAll creates paths (parents first, data "d:<path>", open ACL) in
// multis of 200.
func createAll(t *testing.T, c *zk.Conn, paths []string) {
	t.Helper()
	for len(paths) > 0 {
		n := min(len(paths), 200)
		ops := make([]any, n)
		for i, p := range paths[:n] {
			ops[i] = &zk.CreateRequest{Path: p, Data: []byte("d:" + p), Acl: zk.WorldACL(zk.PermAll)}
		}
		if _, err := c.Multi(ops...); err != nil {
			t.Fatalf("create %s...: %v", paths[0], err)
		}
		paths = paths[n:]
	}
}

// jobWait bounds the wait for a big job's end.
const jobWait = 2 * time.Minute

// mustHold fails unless p holds want (any version).
func mustHold(t *testing.T, c *zk.Conn, p, want string) {
	t.Helper()
	if data, _, err := c.Get(p); err != nil || string(data) != want {
		t.Fatalf("%s: %q %v, want %q", p, data, err, want)
	}
}

// TestConsoleSubtreeInBrowser: in a real browser, a user copies a subtree
// (the confirmation says the ephemeral below is left out, and the copy
// is atomic), renames the copy, exports it as JSON (a file zkjson reads,
// as any tool would), imports that file under another path, is refused a
// move of a subtree holding an ephemeral, and deletes 2,500 nodes, past
// what one request deletes, as a background job whose progress bar runs
// to the end; a 2 MiB set answers 413.
func TestConsoleSubtreeInBrowser(t *testing.T) {
	clientAddr, adminAddr := procs.ConsoleServer(t, "--console-writable")
	other := procs.ConnectAdmin(t, []string{clientAddr})
	defer other.Close()
	knownUsers(t, other, "bob:bob-pw")
	createAll(t, other, []string{"/proj", "/proj/cfg", "/proj/cfg/db", "/proj/jobs"})
	if _, err := other.Create("/proj/jobs/lock", []byte("held"), zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	many := []string{"/many"}
	for i := range 25 {
		many = append(many, fmt.Sprintf("/many/g%02d", i))
		for k := range 99 {
			many = append(many, fmt.Sprintf("/many/g%02d/n%02d", i, k))
		}
	}
	createAll(t, other, many)

	p := openConsole(t, adminAddr)
	p.login("bob", "bob-pw")
	p.waitText("#who-mode", "writable")

	// Copy: the confirmation counts the nodes and names the ephemeral.
	p.click(nodeCSS("/proj", ".name"))
	p.waitText("#node-path", "/proj")
	p.click("#st-copy")
	p.waitText("#st-summary", "5 nodes")
	p.waitText("#st-summary", "in one multi")
	p.waitText("#st-ephemerals", "/proj/jobs/lock")
	p.typeInto("#st-target", "/proj-copy")
	p.screenshot("console-subtree-copy-confirm.png")
	p.click("#st-yes")
	p.waitText("#message", "Copied 4 of 4. 1 ephemeral node(s) left out: /proj/jobs/lock")
	p.waitText("#node-path", "/proj-copy")
	mustHold(t, other, "/proj-copy/cfg/db", "d:/proj/cfg/db")
	if ok, _, _ := other.Exists("/proj-copy/jobs/lock"); ok {
		t.Fatal("the ephemeral was copied")
	}

	// Rename the copy (a move to a sibling).
	p.click("#st-rename")
	p.waitText("#st-summary", "4 nodes")
	p.typeInto("#st-target", "proj-renamed")
	p.click("#st-yes")
	p.waitText("#message", "Renamed 8 of 8")
	p.waitText("#node-path", "/proj-renamed")
	p.find(`#tree li.node[data-path="/proj-renamed"]`)
	if ok, _, _ := other.Exists("/proj-copy"); ok {
		t.Fatal("/proj-copy is still there after the rename")
	}

	// Export: the page's download is a subtree file any tool reads.
	p.click("#st-digests")
	p.click("#st-export")
	p.waitText("#message", "Exported /proj-renamed")
	var exported string
	if err := p.s.Exec(&exported, `const r = await fetch(arguments[0]); return await r.text();`, p.base+"api/export?path=/proj-renamed&digests=keep"); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "zk-proj-renamed.json")
	if err := os.WriteFile(file, []byte(exported), 0o644); err != nil {
		t.Fatal(err)
	}
	f, _ := os.Open(file)
	tree, err := zkjson.ReadTree(f, 100)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	var rels []string
	for _, n := range tree.Nodes {
		rels = append(rels, n.Path)
	}
	if !slices.Equal(rels, []string{"", "cfg", "cfg/db", "jobs"}) || tree.Root != "/proj-renamed" {
		t.Fatalf("exported %s: %q", tree.Root, rels)
	}

	// Import that file under another path.
	p.click(nodeCSS("/", ".name"))
	p.waitText("#node-path", "/")
	p.click("#st-import")
	p.typeInto("#st-target", "/restored")
	if err := p.find("#st-file").SendKeys(file); err != nil {
		t.Fatal(err)
	}
	p.click("#st-yes")
	p.waitText("#message", "Imported 4 of 4")
	p.waitText("#node-path", "/restored")
	mustHold(t, other, "/restored/cfg/db", "d:/proj/cfg/db")

	// A move of a subtree holding an ephemeral is refused in the dialog.
	p.click(nodeCSS("/proj", ".name"))
	p.waitText("#node-path", "/proj")
	p.click("#st-move")
	p.waitText("#st-error", "Cannot move: 1 ephemeral")
	var disabled bool
	if err := p.s.Exec(&disabled, `return document.querySelector("#st-yes").disabled;`); err != nil || !disabled {
		t.Fatalf("the move of a subtree with an ephemeral can be confirmed (%v)", err)
	}
	p.screenshot("console-subtree-move-refused.png")
	p.click("#st-no")

	// Delete 2,501 nodes: past what one request deletes, a job with a
	// progress bar.
	p.click(nodeCSS("/many", ".name"))
	p.waitText("#node-path", "/many")
	p.click("#delete")
	p.waitText("#st-summary", "2501 nodes")
	p.waitText("#st-summary", "NOT atomic")
	p.screenshot("console-subtree-delete-confirm.png")
	p.click("#st-yes")
	// A loaded machine may take a while over 2,501 replicated deletes: the
	// wait is for the end, however long, not a speed bound.
	if _, err := p.s.WaitText("#st-job-title", "Deleted: /many", jobWait); err != nil {
		t.Fatal(err)
	}
	p.waitText("#st-job-count", "2501 / 2501")
	p.waitText("#st-job-title", "Deleted: /many")
	p.waitText("#message", "Deleted 2501 of 2501")
	var bar [2]float64
	if err := p.s.Exec(&bar, `const b = document.querySelector("#st-progress"); return [b.value, b.max];`); err != nil {
		t.Fatal(err)
	}
	if bar != [2]float64{2501, 2501} {
		t.Fatalf("progress bar at %v, want full at 2501", bar)
	}
	// The page showed the job running before it showed it done.
	var seen []struct {
		State, Phase string
		Done, Total  int
	}
	if err := p.s.Exec(&seen, `return subtree.history;`); err != nil {
		t.Fatal(err)
	}
	if len(seen) < 2 || seen[0].State != "running" || seen[len(seen)-1].State != "done" || seen[len(seen)-1].Done != 2501 {
		t.Fatalf("job states shown: %+v", seen)
	}
	t.Logf("job states shown: %+v", seen)
	if err := p.s.Exec(nil, `document.querySelector("#st-job").scrollIntoView({block: "center"});`); err != nil {
		t.Fatal(err)
	}
	p.screenshot("console-subtree-delete-done.png")
	if ok, _, _ := other.Exists("/many"); ok {
		t.Fatal("/many is still there")
	}

	// A 2 MiB set is refused as too large (413), not a server error.
	body := fmt.Sprintf(`{"path":"/restored","data":%q,"version":0}`, strings.Repeat("x", 2<<20))
	if st := p.fetchStatus("POST", "api/set", p.csrfToken(), body); st != 413 {
		t.Fatalf("2 MiB set: %d, want 413", st)
	}
}

// TestConsoleSubtreeReadOnlyInBrowser: a read-only console offers export
// but no copy, move, rename or import, and refuses a job the page's own
// script starts.
func TestConsoleSubtreeReadOnlyInBrowser(t *testing.T) {
	clientAddr, adminAddr := procs.ConsoleServer(t)
	other := procs.ConnectAdmin(t, []string{clientAddr})
	defer other.Close()
	knownUsers(t, other, "bob:bob-pw")
	createAll(t, other, []string{"/ro", "/ro/kid"})
	p := openConsole(t, adminAddr)
	p.login("bob", "bob-pw")
	p.waitText("#who-mode", "read-only")
	p.click(nodeCSS("/ro", ".name"))
	p.waitText("#node-path", "/ro")
	if shown, _ := p.find("#st-export").Displayed(); !shown {
		t.Fatal("no export on a read-only console")
	}
	for _, css := range []string{"#st-copy", "#st-move", "#st-rename", "#st-import"} {
		e, err := p.s.Find(css)
		if err != nil {
			t.Fatal(err)
		}
		if shown, _ := e.Displayed(); shown {
			t.Fatalf("%s is shown on a read-only console", css)
		}
	}
	p.click("#st-export")
	p.waitText("#message", "Exported /ro")
	body := `{"kind":"delete","from":"/ro","expect":{"count":2,"fingerprint":"0"}}`
	if st := p.fetchStatus("POST", "api/jobs", p.csrfToken(), body); st != 403 {
		t.Fatalf("a job on a read-only console: %d, want 403", st)
	}
	if ok, _, _ := other.Exists("/ro/kid"); !ok {
		t.Fatal("/ro/kid went")
	}
}
