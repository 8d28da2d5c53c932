package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zkraft/zkraft/internal/testing/procs"
	"github.com/zkraft/zkraft/internal/testing/testport"
	"github.com/zkraft/zkraft/internal/testing/testproc"
)

// readmeBlock returns the lines of the fenced block that follows the
// marker comment naming test in the repository's README.
func readmeBlock(t *testing.T, test string) []string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(raw), "<!-- test: "+test+" runs this block -->")
	if !ok {
		t.Fatalf("README.md has no block marked for %s", test)
	}
	_, after, ok = strings.Cut(after, "```sh\n")
	if !ok {
		t.Fatalf("README.md: no ```sh block after the %s marker", test)
	}
	block, _, ok := strings.Cut(after, "```")
	if !ok {
		t.Fatalf("README.md: the %s block is not closed", test)
	}
	return strings.Split(strings.TrimSpace(block), "\n")
}

// TestReadmeQuickStart runs the README's three-member quick start as
// written, as one sh -e script from a directory holding bin/zkraft (what
// make build leaves), with only its ports swapped for free ones: the
// members start in the background, `zkraft status --wait` finds them
// healthy at once with ZooKeeper's default four-letter-word whitelist
// (srvr alone), leader and term included, and a node created through one
// member is read through another. No command is retried.
func TestReadmeQuickStart(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts three server processes")
	}
	lines := readmeBlock(t, "TestReadmeQuickStart")
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(procs.Binary(t), filepath.Join(dir, "bin", "zkraft")); err != nil {
		t.Fatal(err)
	}

	// Every port the block names becomes a free one, the same everywhere.
	hostPort := regexp.MustCompile(`127\.0\.0\.1:(\d+)`)
	ports := map[string]string{}
	for _, p := range hostPort.FindAllStringSubmatch(strings.Join(lines, "\n"), -1) {
		if _, ok := ports[p[1]]; !ok {
			n, err := testport.Free()
			if err != nil {
				t.Fatal(err)
			}
			ports[p[1]] = fmt.Sprint(n)
		}
	}
	script := hostPort.ReplaceAllStringFunc(strings.Join(lines, "\n"), func(a string) string {
		return "127.0.0.1:" + ports[strings.TrimPrefix(a, "127.0.0.1:")]
	})

	// The members outlive the script, in its process group: they write to
	// the log file (a pipe would hold Wait until they end) and are stopped
	// with the group.
	logPath := filepath.Join(dir, "quickstart.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := testproc.CommandContext(ctx, "sh", "-ec", script)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := testproc.Start(t, cmd); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		pgid := cmd.Process.Pid
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		for deadline := time.Now().Add(10 * time.Second); syscall.Kill(-pgid, 0) == nil && time.Now().Before(deadline); {
			time.Sleep(50 * time.Millisecond)
		}
	})
	err = cmd.Wait()
	out, _ := os.ReadFile(logPath)
	t.Logf("$ sh -ec <<README's block>>\n%s", out)
	if err != nil {
		t.Fatalf("the quick start failed: %v", err)
	}
	healthy := regexp.MustCompile(`(?m)^127\.0\.0\.1:\d+\s+(leader|follower)\s+[123]\s+[1-9]\d*\s.*\shealthy$`)
	if n := len(healthy.FindAll(out, -1)); n != 3 {
		t.Errorf("status shows %d healthy members with their leader and term, want 3", n)
	}
	if !bytes.Contains(out, []byte("world")) {
		t.Fatal("the quick start's last command did not read the value back")
	}
}
