package shell

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/internal/testing/testenv"
)

// Golden transcripts: each testdata/shell/NAME.zk script is piped into
// zkCli.sh (Apache's ZooKeeperMain) and into zkraft shell against the same
// server; after normalize the two outputs must be identical. The zkCli output
// is recorded in NAME.golden (rewrite with -update) and re-checked whenever
// java is present, so a stale recording is caught too. Every script works
// under its own root /t_NAME, which is removed before each run.

var update = flag.Bool("update", false, "rewrite testdata/shell/*.golden from zkCli.sh")

const goldenDir = "../testdata/shell"

// runOurs pipes script into "zkraft shell -server addr" in a child process
// and returns its combined stdout+stderr and exit status.
func runOurs(t *testing.T, addr, stdin string, args ...string) (string, int) {
	t.Helper()
	return runCombined(t, oursCmd(addr, args...), stdin)
}

func oursCmd(addr string, args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], append([]string{"shell", "-server", addr}, args...)...)
	cmd.Env = append(os.Environ(), execEnv+"=1", "TZ=UTC")
	return cmd
}

func zkCliCmd(addr string, args ...string) *exec.Cmd {
	cmd := exec.Command("java", append([]string{"-XX:-UsePerfData", "-cp", zkJar + ":" + slf4jNop,
		"org.apache.zookeeper.ZooKeeperMain", "-server", addr}, args...)...)
	cmd.Env = append(os.Environ(), "TZ=UTC")
	return cmd
}

// runZkCli pipes script into Apache's ZooKeeperMain (what zkCli.sh runs),
// quiet thanks to slf4j-nop.
func runZkCli(t *testing.T, addr, stdin string, args ...string) (string, int) {
	t.Helper()
	return runCombined(t, zkCliCmd(addr, args...), stdin)
}

func runCombined(t *testing.T, cmd *exec.Cmd, stdin string) (string, int) {
	t.Helper()
	var out bytes.Buffer
	return runWith(t, cmd, stdin, &out, &out)
}

// runStdout is runCombined with stderr discarded.
func runStdout(t *testing.T, cmd *exec.Cmd, stdin string) (string, int) {
	t.Helper()
	var out bytes.Buffer
	return runWith(t, cmd, stdin, &out, nil)
}

func runWith(t *testing.T, cmd *exec.Cmd, stdin string, out *bytes.Buffer, errw *bytes.Buffer) (string, int) {
	t.Helper()
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Stdout = out
	if errw != nil {
		cmd.Stderr = errw
	}
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", cmd.Path, err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return out.String(), ee.ExitCode()
		}
		if err != nil {
			t.Fatalf("run %s: %v", cmd.Path, err)
		}
		return out.String(), 0
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("%s timed out; output so far:\n%s", cmd.Path, out.String())
		return "", -1
	}
}

// connectedEvent is dropped from the event list: zkCli prints it from its
// event thread at a moment that races with the first command's output (or
// not at all when a single command exits first).
const connectedEvent = "WatchedEvent state:SyncConnected type:None path:null"

var (
	reZxid    = regexp.MustCompile(`(?m)^([cmp]Zxid = )0x[0-9a-f]+$`)
	reDate    = regexp.MustCompile(`(?m)^([cm]time = )[A-Z][a-z]{2} [A-Z][a-z]{2} \d\d \d\d:\d\d:\d\d [A-Z]+ \d{4}$`)
	reOwner   = regexp.MustCompile(`(?m)^(ephemeralOwner = )0x[0-9a-f]*[1-9a-f][0-9a-f]*$`)
	reEvZxid  = regexp.MustCompile(`(?m)^(WatchedEvent .*) zxid: -?\d+$`)
	reVersion = regexp.MustCompile(`(?m)^ZooKeeper CLI version: .*$`)
)

// normalize removes what legitimately differs between runs and clients:
// zxids, times, session ids, the server address, the version banner,
// 3.9's " zxid: N" suffix of events (3.8's zkCli has none), and
// SyncConnected session events (see connectedEvent).
func normalize(s, addr string) string {
	s = strings.ReplaceAll(s, addr, "SERVER")
	s = reZxid.ReplaceAllString(s, "${1}0xZXID")
	s = reDate.ReplaceAllString(s, "${1}DATE")
	s = reOwner.ReplaceAllString(s, "${1}0xSESSION")
	s = reEvZxid.ReplaceAllString(s, "$1")
	s = reVersion.ReplaceAllString(s, "ZooKeeper CLI version: VERSION")
	// zkCli prints events on its event thread and command output on the
	// main thread, so their interleaving varies from run to run. Compare
	// the events as their own ordered list after the command output.
	// Each of zkCli's two printlns ("\nWATCHER::", "\nWatchedEvent ...") is
	// atomic, so each marker line is removed with the empty line before it.
	// When an event lands inside a line of command output (ls prints its
	// list in pieces), the event's leading newline ended that partial line:
	// it is joined with the rest that follows the event.
	var events, kept []string
	join := false
	for _, line := range strings.Split(s, "\n") {
		if line == "WATCHER::" || strings.HasPrefix(line, "WatchedEvent ") {
			if n := len(kept); n > 0 && kept[n-1] == "" {
				kept = kept[:n-1]
			} else if n > 0 {
				join = true
			}
			if line != "WATCHER::" && line != connectedEvent {
				events = append(events, line)
			}
			continue
		}
		if join {
			kept[len(kept)-1] += line
			join = false
			continue
		}
		kept = append(kept, line)
	}
	return strings.Join(kept, "\n") + "--- events ---\n" + strings.Join(events, "\n") + "\n"
}

// resetRoot deletes a script's subtree (and its quota records) so every run
// starts from the same state.
func resetRoot(t *testing.T, addr, root string) {
	t.Helper()
	c, _, err := zk.Connect([]string{addr}, 10*time.Second, zk.WithLogInfo(false), zk.WithLogger(quietLogger{}))
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer c.Close()
	for _, p := range []string{root, quotaRoot + root} {
		if err := deleteTree(c, p); err != nil {
			t.Fatalf("reset %s: %v", p, err)
		}
	}
}

func deleteTree(c *zk.Conn, p string) error {
	children, _, err := c.Children(p)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if errors.Is(err, zk.ErrNoAuth) {
		children = nil // unreadable: can still be deleted if it is a leaf
	} else if err != nil {
		return err
	}
	for _, ch := range children {
		if err := deleteTree(c, joinPath(p, ch)); err != nil {
			return err
		}
	}
	if err := c.Delete(p, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
		return err
	}
	return nil
}

func TestGoldenTranscripts(t *testing.T) { runGoldenTranscripts(t, testServer(t)) }

// runGoldenTranscripts runs every script through zkCli and through our shell
// against the server at addr and compares both with the recorded output.
func runGoldenTranscripts(t *testing.T, addr string) {
	scripts, err := filepath.Glob(filepath.Join(goldenDir, "*.zk"))
	if err != nil || len(scripts) == 0 {
		t.Fatalf("no scripts in %s: %v", goldenDir, err)
	}
	java := javaAvailable()
	if !java && testenv.InCI() {
		t.Fatal("CI=true but java / zookeeper.jar missing: the zkCli side of the transcripts cannot run")
	}
	for _, script := range scripts {
		name := strings.TrimSuffix(filepath.Base(script), ".zk")
		t.Run(name, func(t *testing.T) {
			t.Parallel() // each script owns its root; sessions are separate
			b, err := os.ReadFile(script)
			if err != nil {
				t.Fatal(err)
			}
			root := "/t_" + name
			goldenPath := filepath.Join(goldenDir, name+".golden")
			var want string
			if java {
				resetRoot(t, addr, root)
				out, _ := runZkCli(t, addr, string(b))
				want = normalize(out, addr)
				if *update {
					if err := os.WriteFile(goldenPath, []byte(want), 0o644); err != nil {
						t.Fatal(err)
					}
				} else if rec, err := os.ReadFile(goldenPath); err != nil || string(rec) != want {
					t.Errorf("recorded %s differs from zkCli's output now (rerun with -update):\n%s",
						goldenPath, diffLines(string(rec), want))
				}
			} else {
				rec, err := os.ReadFile(goldenPath)
				if err != nil {
					t.Fatal(err)
				}
				want = string(rec)
			}
			resetRoot(t, addr, root)
			out, _ := runOurs(t, addr, string(b))
			got := normalize(out, addr)
			if got != want {
				t.Errorf("zkraft shell differs from zkCli on %s (- zkCli, + zkraft):\n%s", script, diffLines(want, got))
			}
			if !java {
				resetRoot(t, addr, root)
				return
			}
			// Same again with stdout alone: each line must go to the same
			// stream as zkCli's.
			resetRoot(t, addr, root)
			jout, _ := runStdout(t, zkCliCmd(addr), string(b))
			resetRoot(t, addr, root)
			oout, _ := runStdout(t, oursCmd(addr), string(b))
			if w, g := normalize(jout, addr), normalize(oout, addr); w != g {
				t.Errorf("stdout alone differs on %s (- zkCli, + zkraft):\n%s", script, diffLines(w, g))
			}
			resetRoot(t, addr, root)
		})
	}
}

// diffLines is a small line diff for test failures.
func diffLines(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	// Longest common subsequence table.
	n, m := len(al), len(bl)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if al[i] == bl[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var sb strings.Builder
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && al[i] == bl[j]:
			sb.WriteString("  " + al[i] + "\n")
			i++
			j++
		case j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]):
			sb.WriteString("+ " + bl[j] + "\n")
			j++
		default:
			sb.WriteString("- " + al[i] + "\n")
			i++
		}
	}
	return sb.String()
}
