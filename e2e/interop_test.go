package e2e

// Real ZooKeeper clients other than go-zookeeper: the Java client through
// zkCli (ZooKeeperMain), kazoo, and the C client's cli_mt. They come from
// Debian packages (zookeeper, python3-kazoo, zookeeper-bin); a missing one
// fails the test when CI=true and skips it loudly otherwise.

import (
	"context"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// requireFile fails (CI) or skips (elsewhere) t when path is missing.
func requireFile(t *testing.T, path, pkg string) {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and %s is missing (Debian package %s): %v", path, pkg, err)
		}
		t.Skipf("SKIP (not CI): %s is missing (Debian package %s)", path, pkg)
	}
}

// runTool runs a client program with a deadline and returns its output.
func runTool(t *testing.T, stdin string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return string(out)
}

// javaForClients returns the java executable for the client tests.
func javaForClients(t *testing.T) string {
	t.Helper()
	requireFile(t, zookeeperJar, "zookeeper")
	java, err := exec.LookPath("java")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and java is missing: %v", err)
		}
		t.Skipf("SKIP (not CI): java is missing")
	}
	return java
}

var (
	zxidLine = regexp.MustCompile(`(?m)^(cZxid|mZxid|pZxid) = 0x[0-9a-f]+$`)
	timeLine = regexp.MustCompile(`(?m)^(ctime|mtime) = .*$`)
	ownerHex = regexp.MustCompile(`(?m)^ephemeralOwner = 0x[0-9a-f]*[1-9a-f][0-9a-f]*$`)
)

// TestZkCli drives the Java client through zkCli's command loop and checks
// the transcript (zxids, times and session ids masked).
func TestZkCli(t *testing.T) {
	t.Parallel()
	java := javaForClients(t)
	gz := connect(t, shared, sessionTimeout)
	root := testRoot(t, gz)
	script := strings.ReplaceAll(`create R/x hello
create R/x again
create -e -s R/x/e- eph
get -s R/x
set R/x bye
get R/x
ls -s R/x
stat R/nope
getAcl R/x
addauth digest u:p
setAcl R/x auth::crdwa
getAcl R/x
delete R/x
sync R
quit
`, "R", root)
	out := runTool(t, script, java, "-cp", zookeeperJar+":"+slf4jNopJar,
		"org.apache.zookeeper.ZooKeeperMain", "-server", shared.Addr)
	// Keep the part between the connect event and the close event.
	if i := strings.Index(out, "type:None path:null\n"); i >= 0 {
		out = out[i+len("type:None path:null\n"):]
	}
	if i := strings.Index(out, "\nWATCHER::"); i >= 0 {
		out = out[:i]
	}
	out = zxidLine.ReplaceAllString(out, "$1 = Z")
	out = timeLine.ReplaceAllString(out, "$1 = T")
	out = ownerHex.ReplaceAllString(out, "ephemeralOwner = SESSION")
	out = strings.ReplaceAll(out, root, "R")
	want := `Created R/x
Node already exists: R/x
Created R/x/e-0000000000
hello
cZxid = Z
ctime = T
mZxid = Z
mtime = T
pZxid = Z
cversion = 1
dataVersion = 0
aclVersion = 0
ephemeralOwner = 0x0
dataLength = 5
numChildren = 1
bye
[e-0000000000]
cZxid = Z
ctime = T
mZxid = Z
mtime = T
pZxid = Z
cversion = 1
dataVersion = 1
aclVersion = 0
ephemeralOwner = 0x0
dataLength = 3
numChildren = 1
Node does not exist: R/nope
'world,'anyone
: cdrwa
'digest,'u:Jq7wMyA/w2Vd5WIDAKdu4OIIFEQ=
: cdrwa
Node not empty: R/x
Sync is OK
`
	if strings.TrimSpace(out) != strings.TrimSpace(want) {
		t.Errorf("zkCli transcript:\n%s\nwant:\n%s", out, want)
	}
}

// TestKazoo runs testdata/kazoo_client.py (CRUD, watches, transactions, the
// Lock recipe) and checks its transcript.
func TestKazoo(t *testing.T) {
	t.Parallel()
	requireFile(t, "/usr/lib/python3/dist-packages/kazoo/__init__.py", "python3-kazoo")
	gz := connect(t, shared, sessionTimeout)
	root := testRoot(t, gz)
	// Debian's python3 (not a pyenv one on PATH) sees python3-kazoo.
	out := runTool(t, "", "/usr/bin/python3", "testdata/kazoo_client.py", shared.Addr, root)
	want := `create existing: NodeExistsError
sequential: /q-0000000001
get: b'1' version=0
set wrong version: BadVersionError
get missing: NoNodeError
watch: ['CHANGED /a']
child watch: ['CHILD ']
transaction: ['R/t1', 'bool', 'ZnodeStat']
failed transaction: ['RolledBackError', 'BadVersionError']
t2 exists: False
lock contenders: ['me']
delete non-empty: NotEmptyError
children: ['a', 'b', 'lock', 'q-*', 't1']
root exists after recursive delete: False
`
	want = strings.ReplaceAll(want, "R/", root+"/")
	if strings.TrimSpace(out) != strings.TrimSpace(want) {
		t.Errorf("kazoo transcript:\n%s\nwant:\n%s", out, want)
	}
}

// TestCClient runs the C client's cli_mt for a create, an ls and a get.
func TestCClient(t *testing.T) {
	t.Parallel()
	const cli = "/usr/lib/zookeeper/bin/cli_mt"
	requireFile(t, cli, "zookeeper-bin")
	gz := connect(t, shared, sessionTimeout)
	root := testRoot(t, gz)
	mustCreate(t, gz, root+"/kid", []byte("payload"), 0)

	out := runTool(t, "", cli, "-h", shared.Addr, "-c", "create "+root+"/c")
	if !strings.Contains(out, "["+root+"/c]: rc = 0") || !strings.Contains(out, "name = "+root+"/c") {
		t.Errorf("cli_mt create:\n%s", out)
	}
	out = runTool(t, "", cli, "-h", shared.Addr, "-c", "ls "+root)
	if !strings.Contains(out, root+": rc = 0") || !strings.Contains(out, "\tkid\n") || !strings.Contains(out, "\tc\n") {
		t.Errorf("cli_mt ls:\n%s", out)
	}
	out = runTool(t, "", cli, "-h", shared.Addr, "-c", "get "+root+"/kid")
	if !strings.Contains(out, "payload") || !strings.Contains(out, "version=0\taversion=0") {
		t.Errorf("cli_mt get:\n%s", out)
	}
}
