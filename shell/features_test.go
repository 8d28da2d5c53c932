package shell

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// runScript runs commands in-process against addr and returns stdout and
// stderr, with the banner lines and the connect event removed from stdout.
func runScript(t *testing.T, addr, script string, opts Options) (string, string) {
	t.Helper()
	opts.Server = addr
	if opts.Timeout == 0 {
		opts.Timeout = 10 * time.Second
	}
	var out, errw syncBuffer
	Run(opts, nil, "", strings.NewReader(script), &out, &errw)
	o := out.String()
	// The banner is on stderr in a JSON session.
	if i := strings.Index(o, "JLine support is disabled\n"); i >= 0 {
		o = o[i+len("JLine support is disabled\n"):]
	}
	o = strings.Replace(o, "\nWATCHER::\n\nWatchedEvent state:SyncConnected type:None path:null zxid: -1\n", "", 1)
	return o, errw.String()
}

// TestBeyondZkCli covers what zkCli lacks: --output json, tree, get -b/-x
// (zkCli 3.9 only), set -b, and safe display of binary data.
func TestBeyondZkCli(t *testing.T) {
	addr := testServer(t)
	resetRoot(t, addr, "/t_feat")
	t.Cleanup(func() { resetRoot(t, addr, "/t_feat") })
	setup := strings.Join([]string{
		"create /t_feat top",
		"create /t_feat/b",
		"create /t_feat/a",
		"create /t_feat/a/x",
		"create /t_feat/a/y",
		"create /t_feat/a/x/deep",
		"set -b /t_feat/b AP8B",
		"create -e /t_feat/e",
	}, "\n") + "\n"

	out, errs := runScript(t, addr, setup+strings.Join([]string{
		"get -b /t_feat/b",
		"get -x /t_feat",
		"get /t_feat/b",
		"tree /t_feat",
		"tree -d 1 /t_feat",
		"tree /t_feat/missing",
	}, "\n")+"\n", Options{})
	want := "AP8B\n" +
		"         +-------------------------------------------------+\n" +
		"         |  0  1  2  3  4  5  6  7  8  9  a  b  c  d  e  f |\n" +
		"+--------+-------------------------------------------------+----------------+\n" +
		"|00000000| 74 6f 70                                        |top             |\n" +
		"+--------+-------------------------------------------------+----------------+\n" +
		"\x00\uFFFD\x01\n" +
		"/t_feat\n" +
		"├── a\n" +
		"│   ├── x\n" +
		"│   │   └── deep\n" +
		"│   └── y\n" +
		"├── b\n" +
		"└── e\n" +
		"/t_feat\n" +
		"├── a\n" +
		"├── b\n" +
		"└── e\n"
	if out != want {
		t.Errorf("output:\n%s\nwant:\n%s\n%s", out, want, diffLines(want, out))
	}
	if !strings.HasSuffix(errs, "Node does not exist: /t_feat/missing\n") {
		t.Errorf("stderr: %q", errs)
	}

	// Binary data on a terminal is escaped rather than sent raw.
	out, _ = runScript(t, addr, "get /t_feat/b\n", Options{Terminal: true})
	if out != "\\x00\uFFFD\\x01\n" {
		t.Errorf("terminal get: %q", out)
	}

	// JSON, per command and as the shell default.
	out, _ = runScript(t, addr, strings.Join([]string{
		"get --output json /t_feat",
		"get -s --output=json /t_feat/b",
		"ls --output json /t_feat",
		"ls -R --output json /t_feat/a",
		"stat --output json /t_feat",
		"getAcl --output json /t_feat",
		"getEphemerals --output json /t_feat",
		"getAllChildrenNumber --output json /t_feat",
		"tree --output json /t_feat/a",
		"whoami --output json",
	}, "\n")+"\n", Options{})
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 10 {
		t.Fatalf("want 10 JSON lines, got:\n%s", out)
	}
	var v []any
	for _, l := range lines {
		var x any
		if err := json.Unmarshal([]byte(l), &x); err != nil {
			t.Fatalf("not JSON: %q: %v", l, err)
		}
		v = append(v, x)
	}
	check := func(i int, path string, want any) {
		t.Helper()
		cur := v[i]
		for _, k := range strings.Split(path, ".") {
			if k == "" {
				continue
			}
			m, ok := cur.(map[string]any)
			if !ok {
				t.Errorf("line %d: %s: not an object", i, path)
				return
			}
			cur = m[k]
		}
		if b, _ := json.Marshal(cur); string(b) != want {
			t.Errorf("line %d %s = %s, want %s", i, path, b, want)
		}
	}
	check(0, "data", `"top"`)
	check(1, "dataBase64", `"AP8B"`)
	check(1, "stat.dataLength", `3`)
	check(2, "children", `["a","b"]`)
	check(3, "paths", `["/t_feat/a","/t_feat/a/x","/t_feat/a/y","/t_feat/a/x/deep"]`)
	check(4, "stat.numChildren", `2`)
	check(5, "acl", `[{"id":"anyone","perms":"cdrwa","scheme":"world"}]`)
	check(6, "", `[]`)
	check(7, "total", `5`)
	check(8, "children", `[{"children":[{"name":"deep","path":"/t_feat/a/x/deep"}],"name":"x","path":"/t_feat/a/x"},{"name":"y","path":"/t_feat/a/y"}]`)
	check(9, "", `[{"scheme":"ip","user":"127.0.0.1"}]`)

	out, _ = runScript(t, addr, "ls /t_feat\nstat /t_feat/b\n", Options{Output: "json"})
	if !strings.HasPrefix(out, `{"path":"/t_feat","children":["a","b"]}`+"\n"+`{"path":"/t_feat/b","stat":{`) {
		t.Errorf("default json output: %s", out)
	}
	_, errs = runScript(t, addr, "ls --output yaml /t_feat\n", Options{})
	if errs != "unknown output format \"yaml\" (want text or json)\n" {
		t.Errorf("bad format: %q", errs)
	}
}

// TestAuthFailed: a rejected addauth ends the session as in zkCli (an
// AuthFailed event, then "Not connected"), not go-zookeeper's reconnect.
func TestAuthFailed(t *testing.T) {
	addr := testServer(t)
	out, _ := runScript(t, addr, "addauth digest\nls /\nwhoami\n", Options{})
	want := "\nWATCHER::\n\nWatchedEvent state:AuthFailed type:None path:null zxid: -1\nNot connected\nNot connected\n"
	if out != want {
		t.Errorf("got %q, want %q", out, want)
	}
}
