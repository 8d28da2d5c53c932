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
// written, with its ports swapped for free ones: the members start from
// the command lines shown, `zkraft status` finds them healthy with
// ZooKeeper's default four-letter-word whitelist (srvr alone), and a node
// created through one member is read through another.
func TestReadmeQuickStart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three server processes")
	}
	lines := readmeBlock(t, "TestReadmeQuickStart")
	bin := procs.Binary(t)
	dir := t.TempDir()

	// Every port the block names becomes a free one, the same everywhere.
	ports := map[string]string{}
	for _, p := range regexp.MustCompile(`127\.0\.0\.1:(\d+)`).FindAllStringSubmatch(strings.Join(lines, "\n"), -1) {
		if _, ok := ports[p[1]]; !ok {
			n, err := testport.Free()
			if err != nil {
				t.Fatal(err)
			}
			ports[p[1]] = fmt.Sprint(n)
		}
	}
	rewrite := func(line string) string {
		line = regexp.MustCompile(`127\.0\.0\.1:(\d+)`).ReplaceAllStringFunc(line, func(a string) string {
			return "127.0.0.1:" + ports[strings.TrimPrefix(a, "127.0.0.1:")]
		})
		return strings.Replace(line, "zkraft ", bin+" ", 1)
	}

	var last string
	for _, line := range lines {
		line = rewrite(line)
		if cmdLine, ok := strings.CutSuffix(line, " &"); ok {
			cmd := testproc.Command("sh", "-c", "exec "+cmdLine)
			cmd.Dir = dir
			logf, err := os.Create(filepath.Join(dir, fmt.Sprintf("member%d.log", cmdCount(dir)+1)))
			if err != nil {
				t.Fatal(err)
			}
			cmd.Stdout, cmd.Stderr = logf, logf
			if err := testproc.Start(t, cmd); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				_ = cmd.Process.Signal(syscall.SIGTERM)
				done := make(chan struct{})
				go func() { _ = cmd.Wait(); close(done) }()
				select {
				case <-done:
				case <-time.After(10 * time.Second):
					_ = cmd.Process.Kill()
				}
				logf.Close()
			})
			continue
		}
		// A command may run before the members have elected: the quick
		// start says they do within a second; allow 20.
		deadline := time.Now().Add(20 * time.Second)
		for {
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			cmd := testproc.CommandContext(ctx, "sh", "-c", line)
			cmd.Dir = dir
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			cancel()
			if err == nil {
				last = out.String()
				t.Logf("$ %s\n%s", line, last)
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("$ %s: %v\n%s", line, err, out.String())
			}
			time.Sleep(250 * time.Millisecond)
		}
	}
	if !strings.Contains(last, "world") {
		t.Fatalf("the quick start's last command did not read the value back:\n%s", last)
	}
}

// cmdCount counts the member logs already in dir, to name the next one.
func cmdCount(dir string) int {
	m, _ := filepath.Glob(filepath.Join(dir, "member*.log"))
	return len(m)
}
