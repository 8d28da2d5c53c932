package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// docBlocks returns the ```sh blocks of docs/operations.md between the
// marker naming test and the end marker, in order.
func docBlocks(t *testing.T, test string) []string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(raw), "<!-- test: "+test+" runs the sh blocks from here -->")
	if !ok {
		t.Fatalf("docs/operations.md has no marker for %s", test)
	}
	section, _, ok = strings.Cut(section, "<!-- end of "+test+" -->")
	if !ok {
		t.Fatalf("docs/operations.md: the %s section has no end marker", test)
	}
	var blocks []string
	for {
		_, after, ok := strings.Cut(section, "```sh\n")
		if !ok {
			break
		}
		block, rest, ok := strings.Cut(after, "```")
		if !ok {
			t.Fatalf("docs/operations.md: a %s block is not closed", test)
		}
		blocks = append(blocks, block)
		section = rest
	}
	if len(blocks) == 0 {
		t.Fatalf("docs/operations.md: no ```sh blocks for %s", test)
	}
	return blocks
}

// TestBackupWalkthrough runs the backup and restore walk-through of
// docs/operations.md as written, in one bash with `set -e`: three members
// started from zoo.cfg files, data written, a snapshot saved and
// inspected, restored into a single member and into a new three-member
// ensemble that serve the same data with the same Stat (the doc diffs
// them), the new ensemble with its own membership. Only the loopback
// prefix (NET) is the test's, so parallel runs do not meet.
func TestBackupWalkthrough(t *testing.T) {
	if testing.Short() {
		t.Skip("starts seven server processes")
	}
	script := "set -e\n" + strings.Join(docBlocks(t, "TestBackupWalkthrough"), "")
	bin := zkraftBinary(t)
	net := fmt.Sprintf("127.%d.%d", 100+rand.IntN(150), 1+rand.IntN(250))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(bin)+":"+os.Getenv("PATH"), "NET="+net, "TMPDIR="+t.TempDir())
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Whatever the script left running (it stopped early) goes with its
	// process group.
	defer func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }()
	err := cmd.Wait()
	if err != nil {
		t.Fatalf("the walk-through failed: %v\n%s", err, out.String())
	}
	for _, want := range []string{
		"saved           backup.snap", "LARGEST SUBTREES BY BYTES", "members         standalone",
		"members         3 (1, 2, 3), this member is 3",
		"server.1=" + net + ".21:2888:3888:participant;" + net + ".21:2181",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the walk-through's output lacks %q:\n%s", want, out.String())
		}
	}
}
