package cluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkraft/zkraft/internal/testing/procs"
	"github.com/zkraft/zkraft/internal/testing/testenv"
)

// tmpfsLogDir mounts a size-byte tmpfs for m's log (zoo.cfg dataLogDir):
// a disk that can really fill up. It is lazily unmounted when the test
// ends.
func tmpfsLogDir(t *testing.T, m *procs.Member, size string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), fmt.Sprintf("log%d", m.ID))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size+",mode=0700"); err != nil {
		testenv.Require(t, fmt.Errorf("mount a tmpfs (needs root): %w", err))
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
	f, err := os.OpenFile(m.CfgPath, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := fmt.Fprintf(f, "dataLogDir=%s\n", dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// fillDisk takes every free byte of the file system at dir with a file of
// allocated blocks and returns its path.
func fillDisk(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var off int64
	for chunk := int64(64 << 20); chunk >= 4096; {
		switch err := syscall.Fallocate(int(f.Fd()), 0, off, chunk); {
		case err == nil:
			off += chunk
		case errors.Is(err, syscall.ENOSPC):
			chunk /= 2
		default:
			t.Fatalf("fill %s: %v", dir, err)
		}
	}
	return path
}

// TestDiskFullOnTheLeader: the leader's log disk fills up while clients
// write through the followers. The leader stops (it cannot make its log
// durable: "cannot write the Raft log; stopping", ENOSPC), the other two
// elect a new leader and go on taking writes, and every write answered OK
// is there, on the new leader and, once space is freed and the old leader
// restarted, on it too. The followers' case is the soak's full-disk member
// and the storage suite's (storage.TestFaultMemberStackReportsOnlyDurable).
func TestDiskFullOnTheLeader(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three server processes")
	}
	logDirs := map[int]string{}
	members := procs.StartPreparedEnsemble(t, 3, func(m *procs.Member) {
		logDirs[m.ID] = tmpfsLogDir(t, m, "48m") // the journal alone takes 16 MiB
	})
	leader := procs.LeaderOf(t, members, nil)
	var followers []string
	for _, m := range members {
		if m != leader {
			followers = append(followers, m.ClientAddr)
		}
	}
	conn := procs.ConnectAdmin(t, followers)
	defer conn.Close()
	if _, err := conn.Create("/full", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	filler := fillDisk(t, logDirs[leader.ID])

	// Write until the leader has stopped and a new leader has taken a
	// few more: 8 KiB each, so the leader's bolt file must grow.
	data := []byte(strings.Repeat("x", 8<<10))
	acked := map[string]bool{}
	deadline := time.Now().Add(60 * time.Second)
	afterStop := 0
	for i := 0; afterStop < 20; i++ {
		if time.Now().After(deadline) {
			t.Fatalf("leader exited %v; %d writes acknowledged, %d after it stopped", leader.Exited(), len(acked), afterStop)
		}
		p := fmt.Sprintf("/full/n%05d", i)
		if _, err := conn.Create(p, data, 0, zk.WorldACL(zk.PermAll)); err == nil {
			acked[p] = true
			if leader.Exited() {
				afterStop++
			}
		} else if !errors.Is(err, zk.ErrConnectionClosed) && !errors.Is(err, zk.ErrNodeExists) {
			t.Logf("create %s: %v", p, err) // outcome unknown: neither counted nor required
		}
	}
	log := leader.Log()
	if !strings.Contains(log, "cannot write the Raft log; stopping") || !strings.Contains(log, "no space left on device") {
		t.Fatalf("the leader did not stop on its full disk:\n%s", procs.Tail(log, 30))
	}
	newLeader := procs.LeaderOf(t, members, leader)
	check := func(m *procs.Member) {
		t.Helper()
		c := procs.ConnectTo(t, m.ClientAddr)
		defer c.Close()
		if _, err := c.Sync("/full"); err != nil {
			t.Fatal(err)
		}
		for p := range acked {
			if got, _, err := c.Get(p); err != nil || len(got) != len(data) {
				t.Fatalf("member %d: acknowledged %s: %v (%d bytes)", m.ID, p, err, len(got))
			}
		}
	}
	check(newLeader)

	// Space back, the old leader restarted: it catches up and holds them.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	leader.Start(t)
	for deadline := time.Now().Add(30 * time.Second); leader.Mode() != "follower"; {
		if leader.Exited() || time.Now().After(deadline) {
			t.Fatalf("the old leader did not come back as a follower:\n%s", procs.Tail(leader.Log(), 30))
		}
		time.Sleep(50 * time.Millisecond)
	}
	check(leader)
	t.Logf("%d writes acknowledged; member %d stopped on ENOSPC, member %d took over", len(acked), leader.ID, newLeader.ID)
}
