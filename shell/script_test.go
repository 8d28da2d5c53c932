package shell

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// runSplit runs "zkraft shell --server addr args..." as a process with
// stdin and returns stdout, stderr and the exit status.
func runSplit(t *testing.T, addr, stdin string, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := oursCmd(addr, args...)
	cmd.Env = append(cmd.Env, env...)
	var out, errw bytes.Buffer
	_, code := runWith(t, cmd, stdin, &out, &errw)
	return out.String(), errw.String(), code
}

// TestJSONSessionStdoutIsJSON: with -o json every line a script of many
// commands prints on stdout is a JSON document, reads and writes alike;
// the banner, events, watch notifications, "Not connected", errors and
// the text of commands without a JSON form are on stderr.
func TestJSONSessionStdoutIsJSON(t *testing.T) {
	addr := testServer(t)
	resetRoot(t, addr, "/t_json")
	t.Cleanup(func() { resetRoot(t, addr, "/t_json") })
	script := strings.Join([]string{
		"create /t_json top",
		"create /t_json/a one",
		"create -s /t_json/s- seq",
		"create -e /t_json/e",
		"set -s /t_json/a two",
		"set /t_json/a two",
		"get /t_json/a",
		"get -s /t_json/a",
		"get -w /t_json/a",
		"set /t_json/a three",
		"ls /t_json",
		"ls -s /t_json",
		"ls -R /t_json",
		"stat /t_json",
		"getAcl /t_json",
		"getAllChildrenNumber /t_json",
		"getEphemerals /t_json",
		"tree /t_json",
		"sync /t_json",
		"config",
		"version",
		"history",
		"printwatches",
		"listquota /t_json",
		"get /t_json/missing",
		"bogus",
		"close",
		"get /t_json/a",
		"connect " + addr,
		"get --output text /t_json/a",
		"get /t_json/a",
	}, "\n") + "\n"
	out, errs, _ := runSplit(t, addr, script, nil, "-o", "json")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	for i, l := range lines {
		if !json.Valid([]byte(l)) {
			t.Errorf("stdout line %d is not JSON: %q", i+1, l)
		}
	}
	for _, want := range []string{
		`{"path":"/t_json/a"}`, `{"path":"/t_json/s-`, `"path":"/t_json/a","stat":{`,
		`{"path":"/t_json","synced":true}`, `{"version":`, `"data":"three"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %s:\n%s", want, out)
		}
	}
	// 20 commands print JSON: every one but the failures, close, connect,
	// set without -s, history, printwatches, listquota and the --output
	// text get.
	if len(lines) != 20 {
		t.Errorf("%d JSON documents, want 20:\n%s", len(lines), out)
	}
	for _, want := range []string{"Connecting to", "WATCHER::", "type:NodeDataChanged path:/t_json/a", "Created /t_json/a",
		"Node does not exist: /t_json/missing", "Command not found", "Not connected", "printwatches is on", "\nthree\n"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
	// One command on the command line asking for JSON, before or after its
	// arguments, in either spelling, makes a JSON run too.
	for _, args := range [][]string{
		{"-o", "json", "get", "/t_json/a"}, {"get", "/t_json/a", "-o", "json"},
		{"get", "/t_json/a", "--output", "json"}, {"get", "--output=json", "/t_json/a"},
	} {
		out, errs, code := runSplit(t, addr, "", nil, args...)
		if code != 0 || out != `{"path":"/t_json/a","data":"three"}`+"\n" || !strings.Contains(errs, "Connecting to") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, out, errs)
		}
	}
}

// TestQuietShell: --quiet prints no banner and no connection events, so
// stdout holds what the commands print, and watch notifications.
func TestQuietShell(t *testing.T) {
	addr := testServer(t)
	resetRoot(t, addr, "/t_quiet")
	t.Cleanup(func() { resetRoot(t, addr, "/t_quiet") })
	out, errs, code := runSplit(t, addr, "create /t_quiet x\nget -w /t_quiet\nset /t_quiet y\nget /t_quiet\nclose\n", nil, "--quiet")
	if code != 0 || errs != "Created /t_quiet\n" {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
	if !strings.HasPrefix(out, "x\n\nWATCHER::\n\nWatchedEvent state:SyncConnected type:NodeDataChanged path:/t_quiet zxid: ") ||
		!strings.HasSuffix(out, "\ny\n") || strings.Count(out, "WATCHER::") != 1 {
		t.Errorf("stdout:\n%s", out)
	}
	// -q, and with one command given as arguments.
	if out, errs, code := runSplit(t, addr, "", nil, "-q", "get", "/t_quiet"); code != 0 || out != "y\n" || errs != "" {
		t.Errorf("-q get: exit %d, %q, %q", code, out, errs)
	}
}

// TestStopOnError: with --stop-on-error (-e) a script from stdin or
// --file stops at its first failing command and exits with its status
// (1, 127 for an unknown command, 1 for "Not connected"); without it
// every command runs and the status is the last one's, as zkCli's.
func TestStopOnError(t *testing.T) {
	addr := testServer(t)
	resetRoot(t, addr, "/t_stop")
	t.Cleanup(func() { resetRoot(t, addr, "/t_stop") })
	exists := func(p string) bool {
		c, _, err := zk.Connect([]string{addr}, 10*time.Second, zk.WithLogInfo(false), zk.WithLogger(quietLogger{}))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		ok, _, err := c.Exists(p)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	script := "create /t_stop\ncreate /t_stop/a\nget /t_stop/missing\ncreate /t_stop/after\n"
	_, errs, code := runSplit(t, addr, script, nil, "-e")
	if code != 1 || !strings.Contains(errs, "stopped at line 3 (exit status 1): get /t_stop/missing") || exists("/t_stop/after") {
		t.Errorf("-e: exit %d, /t_stop/after made: %v:\n%s", code, exists("/t_stop/after"), errs)
	}
	file := filepath.Join(t.TempDir(), "script")
	if err := os.WriteFile(file, []byte("create /t_stop/b\nbogus\ncreate /t_stop/after\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := runSplit(t, addr, "", nil, "--stop-on-error", "--file", file); code != 127 || exists("/t_stop/after") || !exists("/t_stop/b") {
		t.Errorf("--file: exit %d:\n%s", code, errs)
	}
	if _, errs, code := runSplit(t, addr, "close\nget /t_stop\ncreate /t_stop/after\n", nil, "-e"); code != 1 || !strings.Contains(errs, "Not connected") {
		t.Errorf("-e after close: exit %d:\n%s", code, errs)
	}
	// Without it, every command runs and the last one's status counts.
	if _, errs, code := runSplit(t, addr, script, nil); code != 0 || !exists("/t_stop/after") {
		t.Errorf("without -e: exit %d:\n%s", code, errs)
	}
}

// TestAuthFlagAndEnv: a node readable only with a digest credential is
// read with --auth scheme:credential, with the user:password form, with
// --auth after the command, and with $ZKRAFT_AUTH (which keeps the secret
// out of the process's arguments); without one it is refused.
func TestAuthFlagAndEnv(t *testing.T) {
	addr := testServer(t)
	resetRoot(t, addr, "/t_auth")
	t.Cleanup(func() { resetRoot(t, addr, "/t_auth") })
	c, _, err := zk.Connect([]string{addr}, 10*time.Second, zk.WithLogInfo(false), zk.WithLogger(quietLogger{}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.AddAuth("digest", []byte("u:p,w")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create("/t_auth", []byte("secret"), 0, zk.DigestACL(zk.PermAll, "u", "p,w")); err != nil {
		t.Fatal(err)
	}
	if out, errs, code := runSplit(t, addr, "", nil, "-q", "get", "/t_auth"); code != 1 || out != "" || !strings.Contains(errs, "Insufficient permission") {
		t.Errorf("no credential: exit %d %q %q", code, out, errs)
	}
	for _, tc := range []struct {
		env  []string
		args []string
	}{
		{nil, []string{"--auth", "digest:u:p,w", "get", "/t_auth"}},
		{nil, []string{"--auth", "ip:10.0.0.1", "--auth", "u:p,w", "get", "/t_auth"}},
		{nil, []string{"get", "/t_auth", "--auth", "digest:u:p,w"}},
		{[]string{"ZKRAFT_AUTH=digest:u:p,w"}, []string{"get", "/t_auth"}},
	} {
		out, errs, code := runSplit(t, addr, "", tc.env, append([]string{"-q"}, tc.args...)...)
		if code != 0 || out != "secret\n" {
			t.Errorf("%v %v: exit %d %q %q", tc.env, tc.args, code, out, errs)
		}
	}
	if _, errs, code := runSplit(t, addr, "", nil, "--auth", "nocolon", "ls", "/"); code != 1 || !strings.Contains(errs, "want scheme:credential") {
		t.Errorf("--auth nocolon: exit %d %q", code, errs)
	}
}
