package console

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/acl"
	"github.com/zkraft/zkraft/internal/cli/zkjson"
	"github.com/zkraft/zkraft/session"
)

// mkTree creates paths (parents first) with data "d:<path>" as conn, in
// multis of 200.
func mkTree(t testing.TB, conn *zk.Conn, acl []zk.ACL, paths ...string) {
	t.Helper()
	for len(paths) > 0 {
		n := min(len(paths), 200)
		ops := make([]any, n)
		for i, p := range paths[:n] {
			ops[i] = &zk.CreateRequest{Path: p, Data: []byte("d:" + p), Acl: acl}
		}
		if _, err := conn.Multi(ops...); err != nil {
			t.Fatalf("create %s...: %v", paths[0], err)
		}
		paths = paths[n:]
	}
}

// wide is root and n children below it, in two levels of directories.
func wide(root string, n int) []string {
	out := []string{root}
	for i := range n / 100 {
		dir := fmt.Sprintf("%s/g%02d", root, i)
		out = append(out, dir)
		for k := range 99 {
			out = append(out, fmt.Sprintf("%s/n%02d", dir, k))
		}
	}
	return out
}

// surveyOf asks the console what an operation on p would take on.
func surveyOf(t *testing.T, b *browser, p string) expectJSON {
	t.Helper()
	st, out := b.get("/api/survey?path=" + p)
	if st != http.StatusOK {
		t.Fatalf("survey %s: %d %v", p, st, out)
	}
	return expectJSON{Count: int(out["count"].(float64)), Fingerprint: out["fingerprint"].(string)}
}

// runJob starts a job and waits for it to end, returning its last state.
func runJob(t *testing.T, b *browser, req jobRequest) map[string]any {
	t.Helper()
	st, out := b.post("/api/jobs", req)
	if st != http.StatusAccepted {
		t.Fatalf("start %s job: %d %v", req.Kind, st, out)
	}
	id := out["id"].(string)
	for out["state"] == jobRunning {
		time.Sleep(20 * time.Millisecond)
		if st, out = b.get("/api/jobs/" + id); st != http.StatusOK {
			t.Fatalf("job %s: %d %v", id, st, out)
		}
	}
	return out
}

// TestSubtreeCopyAndMove: a copy takes every node's data and ACL, leaves
// an ephemeral out and says so; a target that exists, a source that
// changed since the confirmation and a move of a subtree with an
// ephemeral are refused with nothing written; a small move is one multi
// (atomic) and leaves no source.
func TestSubtreeCopyAndMove(t *testing.T) {
	addr := startZK(t)
	other := dialZK(t, addr, "alice:pw")
	mine := []zk.ACL{{Perms: zk.PermAll, Scheme: "digest", ID: acl.DigestID("alice", "pw")}, {Perms: zk.PermRead, Scheme: "world", ID: "anyone"}}
	mkTree(t, other, mine, "/src", "/src/a", "/src/a/x", "/src/b")
	if _, err := other.Create("/src/b/eph", []byte("e"), zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	mkTree(t, other, zk.WorldACL(zk.PermAll), "/taken")
	b := newBrowser(t, startConsole(t, addr, true))
	b.login("alice", "pw")

	exp := surveyOf(t, b, "/src")
	if exp.Count != 5 {
		t.Fatalf("survey counted %d nodes, want 5", exp.Count)
	}
	if st, out := b.post("/api/jobs", jobRequest{Kind: "copy", From: "/src", To: "/taken", Expect: &exp}); st != http.StatusConflict || out["code"] != "NodeExists" {
		t.Fatalf("copy onto an existing node: %d %v", st, out)
	}
	if st, out := b.post("/api/jobs", jobRequest{Kind: "copy", From: "/src", To: "/src/a/in", Expect: &exp}); st != http.StatusBadRequest {
		t.Fatalf("copy into itself: %d %v", st, out)
	}
	out := runJob(t, b, jobRequest{Kind: "copy", From: "/src", To: "/dst", Expect: &exp})
	if out["state"] != jobDone || out["atomic"] != true || !slices.Equal(toStrings(out["skipped"]), []string{"/src/b/eph"}) {
		t.Fatalf("copy: %v", out)
	}
	for _, p := range []string{"/dst", "/dst/a", "/dst/a/x", "/dst/b"} {
		data, _, err := other.Get(p)
		if err != nil || string(data) != "d:/src"+p[len("/dst"):] {
			t.Fatalf("%s: %q %v", p, data, err)
		}
		got, _, _ := other.GetACL(p)
		if !slices.Equal(got, mine) {
			t.Fatalf("%s ACL %v, want %v", p, got, mine)
		}
	}
	if ok, _, _ := other.Exists("/dst/b/eph"); ok {
		t.Fatal("an ephemeral was copied")
	}

	// A move of a subtree holding an ephemeral is refused.
	out = runJob(t, b, jobRequest{Kind: "move", From: "/src", To: "/moved", Expect: &exp})
	if out["state"] != jobFailed || !strings.Contains(out["error"].(string), "ephemeral") {
		t.Fatalf("move with an ephemeral: %v", out)
	}
	if ok, _, _ := other.Exists("/moved"); ok {
		t.Fatal("a refused move wrote")
	}

	// A move whose source changed since its survey is refused.
	exp = surveyOf(t, b, "/dst")
	if _, err := other.Set("/dst/a/x", []byte("changed"), -1); err != nil {
		t.Fatal(err)
	}
	out = runJob(t, b, jobRequest{Kind: "move", From: "/dst", To: "/moved", Expect: &exp})
	if out["state"] != jobFailed || out["error"] != errChanged.Error() {
		t.Fatalf("stale move: %v", out)
	}
	if ok, _, _ := other.Exists("/moved"); ok {
		t.Fatal("a stale move wrote")
	}
	exp = surveyOf(t, b, "/dst")
	out = runJob(t, b, jobRequest{Kind: "move", From: "/dst", To: "/moved", Expect: &exp})
	if out["state"] != jobDone || out["atomic"] != true || out["done"].(float64) != 8 {
		t.Fatalf("move: %v", out)
	}
	if ok, _, _ := other.Exists("/dst"); ok {
		t.Fatal("the moved source is still there")
	}
	if data, _, _ := other.Get("/moved/a/x"); string(data) != "changed" {
		t.Fatalf("moved data %q", data)
	}
}

// TestBigDeleteAndMoveJobs: past the 1,000 nodes the console changes in
// one request, a move and a recursive delete of 1,200 nodes run as
// background jobs in batches and report their progress to the end.
func TestBigDeleteAndMoveJobs(t *testing.T) {
	if testing.Short() {
		t.Skip("creates 1,200 nodes")
	}
	// 1,200 nodes walked, moved and deleted under -race on a busy machine:
	// a session timeout of seconds could lapse between two replies.
	addr := startZKWith(t, session.Config{TickTime: 200 * time.Millisecond, MaxSessionTimeout: 60 * time.Second})
	other := dialZK(t, addr)
	paths := wide("/big", 1200)
	mkTree(t, other, zk.WorldACL(zk.PermAll), paths...)
	cfg := consoleConfig(addr, false)
	cfg.Writable, cfg.SessionTimeout = true, 60*time.Second
	b := newBrowser(t, serveConsole(t, cfg))
	b.login("", "")

	_, sub := b.get("/api/subtree?path=/big")
	if sub["truncated"] != true {
		t.Fatalf("the one-request delete's listing is not truncated: %v", sub["truncated"])
	}
	exp := surveyOf(t, b, "/big")
	if exp.Count != len(paths) {
		t.Fatalf("survey counted %d, want %d", exp.Count, len(paths))
	}
	out := runJob(t, b, jobRequest{Kind: "move", From: "/big", To: "/big2", Expect: &exp})
	if out["state"] != jobDone || out["atomic"] != false || int(out["done"].(float64)) != 2*len(paths) || out["total"] != out["done"] {
		t.Fatalf("big move: %v", out)
	}
	if ok, _, _ := other.Exists("/big"); ok {
		t.Fatal("/big still there after the move")
	}
	kids, _, _ := other.Children("/big2/g11")
	if data, _, _ := other.Get("/big2/g11/n98"); len(kids) != 99 || string(data) != "d:/big/g11/n98" {
		t.Fatalf("moved: %d children, data %q", len(kids), data)
	}

	exp = surveyOf(t, b, "/big2")
	out = runJob(t, b, jobRequest{Kind: "delete", From: "/big2", Expect: &exp})
	if out["state"] != jobDone || int(out["done"].(float64)) != len(paths) || out["phase"] != "deleting" {
		t.Fatalf("big delete: %v", out)
	}
	if ok, _, _ := other.Exists("/big2"); ok {
		t.Fatal("/big2 still there after the delete")
	}
	_, list := b.get("/api/jobs")
	if n := len(list["jobs"].([]any)); n != 2 {
		t.Fatalf("%d jobs listed, want 2", n)
	}
}

// TestExportImport: an export is a zkjson.Tree file that zkjson.ReadTree
// (what any tool reading such files uses) accepts; with digest hashes
// hidden (the default) it is refused for import, with them kept it imports
// under another path with the same data and ACLs; a file written without the
// console imports too; a target that exists, a file past the node bound
// and a body past the size bound are refused.
func TestExportImport(t *testing.T) {
	addr := startZK(t)
	other := dialZK(t, addr, "alice:pw")
	mine := []zk.ACL{{Perms: zk.PermAll, Scheme: "digest", ID: acl.DigestID("alice", "pw")}}
	mkTree(t, other, mine, "/ex", "/ex/a", "/ex/a/deep", "/ex/b")
	if _, err := other.Create("/ex/b/eph", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	hs := startConsole(t, addr, true)
	b := newBrowser(t, hs)
	b.login("alice", "pw")

	export := func(query string) *zkjson.Tree {
		t.Helper()
		resp, err := b.hc.Get(b.base + "/api/export?path=/ex" + query)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if cd := resp.Header.Get("Content-Disposition"); resp.StatusCode != http.StatusOK || !strings.Contains(cd, `filename=zk-ex.json`) {
			t.Fatalf("export: %d, Content-Disposition %q", resp.StatusCode, cd)
		}
		file, err := zkjson.ReadTree(resp.Body, maxImportNodes)
		if err != nil {
			t.Fatal(err)
		}
		return file
	}
	// By default the digest hashes are hidden, as on the page, and such a
	// file does not import.
	hidden := export("")
	if id := hidden.Nodes[0].ACL[0].ID; id != "alice:"+hiddenHash {
		t.Fatalf("exported digest id %q", id)
	}
	if st, out := b.post("/api/jobs", jobRequest{Kind: "import", To: "/imported", Tree: hidden}); st != http.StatusBadRequest || !strings.Contains(out["error"].(string), "alice") {
		t.Fatalf("import of hidden digests: %d %v", st, out)
	}
	file := export("&digests=keep")
	var rels []string
	for _, n := range file.Nodes {
		rels = append(rels, n.Path)
	}
	if !slices.Equal(rels, []string{"", "a", "a/deep", "b"}) || !slices.Equal(file.Skipped, []string{"/ex/b/eph"}) {
		t.Fatalf("exported %q, skipped %q", rels, file.Skipped)
	}

	out := runJob(t, b, jobRequest{Kind: "import", To: "/imported", Tree: file})
	if out["state"] != jobDone || out["done"].(float64) != 4 {
		t.Fatalf("import: %v", out)
	}
	for _, rel := range rels {
		p := zkjson.Under("/imported", rel)
		data, _, err := other.Get(p)
		got, _, _ := other.GetACL(p)
		if err != nil || string(data) != "d:"+zkjson.Under("/ex", rel) || !slices.Equal(got, mine) {
			t.Fatalf("%s: %q %v, ACL %v", p, data, err, got)
		}
	}

	// A file another tool wrote (no ACL: world:anyone) imports under /.
	raw := `{"format":"zkraft-subtree/1","root":"/elsewhere","nodes":[{"path":"","data":"aGk="},{"path":"k","data":null}]}`
	hand, err := zkjson.ReadTree(strings.NewReader(raw), 10)
	if err != nil {
		t.Fatal(err)
	}
	if out := runJob(t, b, jobRequest{Kind: "import", To: "/hand", Tree: hand}); out["state"] != jobDone {
		t.Fatalf("import of a hand-written file: %v", out)
	}
	if data, _, _ := other.Get("/hand"); string(data) != "hi" {
		t.Fatalf("/hand holds %q", data)
	}

	if st, out := b.post("/api/jobs", jobRequest{Kind: "import", To: "/imported", Tree: file}); st != http.StatusConflict {
		t.Fatalf("import onto an existing node: %d %v", st, out)
	}
	big := &zkjson.Tree{Format: zkjson.TreeFormat, Root: "/x", Nodes: []zkjson.TreeNode{{Path: ""}}}
	for i := range maxImportNodes {
		big.Nodes = append(big.Nodes, zkjson.TreeNode{Path: fmt.Sprint(i)})
	}
	if st, out := b.post("/api/jobs", jobRequest{Kind: "import", To: "/many", Tree: big}); st != http.StatusRequestEntityTooLarge || !strings.Contains(out["error"].(string), "at most") {
		t.Fatalf("import past the node bound: %d %v", st, out)
	}
	// Just past maxImportBody: 25 MiB of data is 33.3 MiB in base64.
	huge := &zkjson.Tree{Format: zkjson.TreeFormat, Root: "/x"}
	for range 25 {
		huge.Nodes = append(huge.Nodes, zkjson.TreeNode{Path: "", Data: bytes.Repeat([]byte{1}, 1<<20)})
	}
	if st, out := b.post("/api/jobs", jobRequest{Kind: "import", To: "/huge", Tree: huge}); st != http.StatusRequestEntityTooLarge {
		t.Fatalf("import past the body bound: %d %v", st, out)
	}
	if ok, _, _ := other.Exists("/many"); ok {
		t.Fatal("a refused import wrote")
	}
}

// TestJobsBoundedAndEndWithLogin: a login runs one job at a time; a job
// can be cancelled; a login's end cancels its jobs and forgets them.
func TestJobsBoundedAndEndWithLogin(t *testing.T) {
	s := newJobStore()
	l := &login{ended: make(chan struct{})}
	wait := func(ctx context.Context, _ *job) error { <-ctx.Done(); return ctx.Err() }
	first := &job{kind: "delete"}
	if err := s.start(l, first, wait); err != nil {
		t.Fatal(err)
	}
	if err := s.start(l, &job{kind: "copy"}, wait); err != errJobRunning {
		t.Fatalf("a second running job: %v", err)
	}
	first.cancel()
	for first.running() {
		time.Sleep(time.Millisecond)
	}
	if got := first.json(); got.State != jobCancelled {
		t.Fatalf("cancelled job: %+v", got)
	}
	second := &job{kind: "copy"}
	if err := s.start(l, second, wait); err != nil {
		t.Fatalf("a job after the first ended: %v", err)
	}
	close(l.ended)
	for second.running() {
		time.Sleep(time.Millisecond)
	}
	if got := second.json(); got.State != jobCancelled {
		t.Fatalf("job of an ended login: %+v", got)
	}
	for len(s.list(l)) != 0 {
		time.Sleep(time.Millisecond)
	}
}

// TestSetTooLarge: data past jute.maxbuffer is refused with 413 and a
// JSON error, not sent (go-zookeeper would fail it as a 500).
func TestSetTooLarge(t *testing.T) {
	addr := startZK(t)
	other := dialZK(t, addr)
	mkTree(t, other, zk.WorldACL(zk.PermAll), "/n")
	b := newBrowser(t, startConsole(t, addr, true))
	b.login("", "")
	v := int32(0)
	big := strings.Repeat("x", 2<<20)
	st, out := b.post("/api/set", setRequest{Path: "/n", Data: big, Version: &v})
	if st != http.StatusRequestEntityTooLarge || out["code"] != "TooLarge" {
		t.Fatalf("2 MiB set: %d %v", st, out)
	}
	st, out = b.post("/api/create", createRequest{Path: "/n/big", Data: big, Mode: "persistent"})
	if st != http.StatusRequestEntityTooLarge {
		t.Fatalf("2 MiB create: %d %v", st, out)
	}
	raw, _ := json.Marshal(setRequest{Path: "/n", Data: strings.Repeat("x", maxBody), Version: &v})
	st, _ = b.do("POST", "/api/set", json.RawMessage(raw), map[string]string{csrfHeader: b.csrf})
	if st != http.StatusRequestEntityTooLarge {
		t.Fatalf("a body past %d bytes: %d", maxBody, st)
	}
}
