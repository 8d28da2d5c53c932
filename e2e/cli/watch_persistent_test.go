package cli

import (
	"fmt"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/internal/cli/fourletter"
	"github.com/zkraft/zkraft/internal/testing/procs"
)

// watched reports whether the member at addr holds a watch on p (wchp
// lists each watched path on a line of its own, its sessions below).
func watched(addr, p string) bool {
	for _, l := range strings.Split(fourletter.Ask(addr, "wchp"), "\n") {
		if strings.TrimRight(l, "\r") == p {
			return true
		}
	}
	return false
}

// TestWatchEveryRapidDataChange: 200 setData on one node in a tight loop
// from another client are printed as 200 NodeDataChanged lines, each at
// the zxid the writer got back, strictly increasing. A watcher re-arming
// one-shot watches coalesces the changes made between an event and its
// re-arm into one.
func TestWatchEveryRapidDataChange(t *testing.T) {
	t.Parallel()
	addr := lockServer(t)
	conn := procs.ConnectTo(t, addr)
	defer conn.Close()
	if _, err := conn.Create("/hot", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	w := startWatch(t, "--server", addr, "/hot")
	const n = 200
	zxids := make([]int64, n)
	for i := range zxids {
		st, err := conn.Set("/hot", []byte(fmt.Sprint(i)), -1)
		if err != nil {
			t.Fatal(err)
		}
		zxids[i] = st.Mzxid
	}
	got := w.waitEvents(t, n)
	time.Sleep(300 * time.Millisecond)
	got = w.events(t)
	want := make([]string, n)
	for i := range want {
		want[i] = "NodeDataChanged /hot"
	}
	checkEvents(t, got, want, zxids)
	for i := 1; i < len(got); i++ {
		if got[i].zxid <= got[i-1].zxid {
			t.Fatalf("zxid 0x%x after 0x%x", got[i].zxid, got[i-1].zxid)
		}
	}
}

// TestWatchRecursiveDeepCreates: --recursive prints every change of
// subtrees built deep below the root and torn down again as fast as a
// client can (a chain of eight nodes, a data change of the deepest, then
// the deletions bottom up), each at its zxid, in order. A watcher that
// must list a new node, setting a watch, before it hears of its children
// never sees a node created and deleted before that listing.
func TestWatchRecursiveDeepCreates(t *testing.T) {
	t.Parallel()
	addr := lockServer(t)
	conn := procs.ConnectTo(t, addr)
	defer conn.Close()
	acl := zk.WorldACL(zk.PermAll)
	if _, err := conn.Create("/deep", nil, 0, acl); err != nil {
		t.Fatal(err)
	}
	w := startWatch(t, "--server", addr, "-r", "/deep")
	var want []string
	var zxids []int64
	note := func(typ, p string, zxid int64) {
		want = append(want, typ+" "+p)
		zxids = append(zxids, zxid)
	}
	for b := 0; b < 5; b++ {
		var chain []string
		p := fmt.Sprintf("/deep/b%d", b)
		for d := 0; d < 8; d++ {
			if _, err := conn.Create(p, nil, 0, acl); err != nil {
				t.Fatal(err)
			}
			_, st, err := conn.Exists(p)
			if err != nil {
				t.Fatal(err)
			}
			note("NodeCreated", p, st.Czxid)
			chain = append(chain, p)
			p += fmt.Sprintf("/d%d", d)
		}
		st, err := conn.Set(chain[len(chain)-1], []byte("x"), -1)
		if err != nil {
			t.Fatal(err)
		}
		note("NodeDataChanged", chain[len(chain)-1], st.Mzxid)
		for i := len(chain) - 1; i >= 0; i-- {
			if err := conn.Delete(chain[i], -1); err != nil {
				t.Fatal(err)
			}
			_, pst, err := conn.Exists(path.Dir(chain[i]))
			if err != nil {
				t.Fatal(err)
			}
			note("NodeDeleted", chain[i], pst.Pzxid)
		}
	}
	w.waitEvents(t, len(want))
	time.Sleep(300 * time.Millisecond)
	checkEvents(t, w.events(t), want, zxids)
}
