package migration

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/internal/testing/procs"
	"github.com/zkraft/zkraft/internal/testing/testproc"
	"github.com/zkraft/zkraft/internal/testing/zktest"
)

// TestMigrateFollow runs zkraft migrate follow against a real ZooKeeper
// 3.8 ensemble, configured as an operator adds an Observer, while a
// client writes; it follows a leader kill, and on SIGTERM reports the
// leader's last zxid with every transaction's digest equal to
// ZooKeeper's; restarted, it resumes from the tree it saved and is synced
// by DIFF. A participant line for its own id is refused. ZooKeeper runs
// with -Dzookeeper.extendedTypesEnabled=true and each round of writes
// creates a TTL node, while the observer's zoo.cfg does not enable them
// (issue #38): the TTL nodes it gets by SNAP, in the stream and by DIFF
// are applied (the digests match) and it warns to set the option.
func TestMigrateFollow(t *testing.T) {
	e := zktest.Start(t, "-Dzookeeper.extendedTypesEnabled=true")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "myid"), []byte(fmt.Sprintln(e.ObserverID)), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "zoo.cfg")
	text := fmt.Sprintf("tickTime=500\ninitLimit=20\nsyncLimit=10\ndataDir=%s\npeerType=observer\n%s\n", dir, strings.Join(e.ServerLines, "\n"))
	if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	participant := filepath.Join(dir, "participant.cfg")
	if err := os.WriteFile(participant, []byte(strings.ReplaceAll(text, ":observer", "")), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := procs.Run(t, "migrate", "follow", "--config", participant); err == nil || !strings.Contains(err.Error(), "not an observer line") {
		t.Errorf("follow as a participant: %v", err)
	}

	lead := e.Leader()
	c, _, err := zk.Connect(e.ClientAddrs(), 10*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	write := func(n int) {
		t.Helper()
		for i := range n {
			p := fmt.Sprintf("/follow-%d-%d", time.Now().UnixNano(), i)
			if _, err := c.Create(p, []byte("x"), 0, zk.WorldACL(zk.PermAll)); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Set(p, []byte("y"), 0); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := c.CreateTTL(fmt.Sprintf("/ttl-%d", time.Now().UnixNano()), []byte("t"), zk.FlagTTL, zk.WorldACL(zk.PermAll), time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	write(20)

	// follow starts zkraft migrate follow; caughtUp waits for its status
	// line with the leader's last zxid; stop sends SIGTERM and returns its
	// summary.
	type follower struct {
		cmd    *exec.Cmd
		stdout *bytes.Buffer
		status chan map[string]any
		// ttlWarned: it warned that ZooKeeper commits TTL nodes while
		// its extendedTypesEnabled is off (read once status is closed).
		ttlWarned bool
	}
	follow := func() *follower {
		t.Helper()
		f := &follower{stdout: &bytes.Buffer{}, status: make(chan map[string]any, 1000)}
		f.cmd = testproc.Command(procs.Binary(t), "migrate", "follow", "--config", cfg, "--check-digests",
			"--status-interval", "100ms", "--log-format", "json")
		f.cmd.Stdout = f.stdout
		stderr, err := f.cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := testproc.Start(t, f.cmd); err != nil {
			t.Fatal(err)
		}
		go func() {
			sc := bufio.NewScanner(stderr)
			for sc.Scan() {
				var line map[string]any
				if json.Unmarshal(sc.Bytes(), &line) == nil && line["msg"] == "following" {
					f.status <- line
				}
				if strings.Contains(sc.Text(), "extendedTypesEnabled is off") {
					f.ttlWarned = true
				}
			}
			close(f.status)
		}()
		return f
	}
	caughtUp := func(f *follower, lead *zktest.Server) map[string]any {
		t.Helper()
		want := e.LastZxid(lead)
		deadline := time.After(60 * time.Second)
		for {
			select {
			case line, ok := <-f.status:
				if !ok {
					t.Fatalf("migrate follow exited: %s", f.stdout.String())
				}
				z, _ := strconv.ParseInt(strings.TrimPrefix(fmt.Sprint(line["zxid"]), "0x"), 16, 64)
				if line["synced"] == true && z >= want {
					return line
				}
			case <-deadline:
				t.Fatalf("migrate follow did not reach zxid %#x", want)
			}
		}
	}
	stop := func(f *follower) string {
		t.Helper()
		if err := f.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		for range f.status {
		}
		if err := f.cmd.Wait(); err != nil {
			t.Fatalf("migrate follow: %v\n%s", err, f.stdout.String())
		}
		return f.stdout.String()
	}

	f := follow()
	if st := caughtUp(f, lead); st["lastSync"] != "SNAP" {
		t.Errorf("first sync %v, want SNAP", st["lastSync"])
	}
	write(20)
	caughtUp(f, lead)
	e.Kill(lead)
	lead = e.Leader()
	write(20)
	caughtUp(f, lead)
	out := stop(f)
	want := e.LastZxid(lead)
	for _, s := range []string{fmt.Sprintf("last zxid       %#x", want), " checked, 0 differed"} {
		if !strings.Contains(out, s) {
			t.Errorf("summary lacks %q:\n%s", s, out)
		}
	}
	if strings.Contains(out, "digests         0 checked") {
		t.Errorf("no digest checked:\n%s", out)
	}
	if !f.ttlWarned {
		t.Error("no warning that ZooKeeper commits TTL nodes while this server's extendedTypesEnabled is off")
	}

	// Restarted, it resumes from the tree it saved: a DIFF.
	write(20)
	f = follow()
	if st := caughtUp(f, lead); st["lastSync"] != "DIFF" || st["syncs"] != float64(1) {
		t.Errorf("after a restart: %v syncs, the last %v; want one DIFF", st["syncs"], st["lastSync"])
	}
	write(5)
	caughtUp(f, lead)
	if out := stop(f); !strings.Contains(out, " checked, 0 differed") || !strings.Contains(out, "(last: DIFF)") {
		t.Errorf("summary after the restart:\n%s", out)
	}
}
