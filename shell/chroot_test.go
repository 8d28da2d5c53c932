package shell

import (
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// TestChroot runs a session with a chroot in the connect string
// ("host:port/t_chroot") through zkCli and zkraft shell.
func TestChroot(t *testing.T) {
	addr := testServer(t)
	script := strings.Join([]string{
		"create /x data",
		"ls /",
		"get /x",
		"create -s /x/s- v",
		"stat /",
		"getAllChildrenNumber /",
		"create -e /e",
		"getEphemerals /t_chroot",
		"get -w /x",
		"set /x y",
		"addWatch /r",
		"create /r",
		"create /r/c",
		"ls -R /",
		"delete /nope",
		"sync /",
		"tree /",
	}, "\n") + "\n"
	fresh := func() {
		resetRoot(t, addr, "/t_chroot")
		c, _, err := zk.Connect([]string{addr}, 10*time.Second, zk.WithLogInfo(false), zk.WithLogger(quietLogger{}))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.Create("/t_chroot", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { resetRoot(t, addr, "/t_chroot") })
	fresh()
	out, _ := runOurs(t, addr+"/t_chroot", script)
	got := normalize(out, addr)
	for _, want := range []string{
		"Created /x\n[x]\ndata\nCreated /x/s-0000000000\n",
		"[/t_chroot/e]\n",
		"/\n/e\n/r\n/x\n/r/c\n/x/s-0000000000\n",
		"Node does not exist: /nope\n",
		"WatchedEvent state:SyncConnected type:NodeDataChanged path:/x\n",
		"WatchedEvent state:SyncConnected type:NodeCreated path:/r/c\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if !javaAvailable() {
		return
	}
	fresh()
	jout, _ := runZkCli(t, addr+"/t_chroot", strings.TrimSuffix(script, "tree /\n"))
	want := normalize(jout, addr)
	got = normalize(strings.Replace(out, "/\n├── e\n├── r\n│   └── c\n└── x\n    └── s-0000000000\n", "", 1), addr)
	if got != want {
		t.Errorf("differs from zkCli (- zkCli, + zkraft):\n%s", diffLines(want, got))
	}
}
