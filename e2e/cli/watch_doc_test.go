package cli

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/internal/testing/procs"
	"github.com/zkraft/zkraft/internal/testing/testproc"
)

// TestWatchWorkedExample runs the worked example of docs/operations.md's
// watch section as written, with zkraft on the PATH and its server's
// port swapped for a free one, and checks the events it prints.
func TestWatchWorkedExample(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(raw), "<!-- test: TestWatchWorkedExample runs this block -->\n```sh\n")
	if !ok {
		t.Fatal("docs/operations.md has no sh block marked for TestWatchWorkedExample")
	}
	block, _, _ := strings.Cut(after, "```")
	addr := lockServer(t)
	script := strings.ReplaceAll(block, "127.0.0.1:2181", addr)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := testproc.CommandContext(ctx, "sh", "-ec", script)
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(procs.Binary(t))+":"+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	t.Logf("$ sh -ec <<the block>>\n%s", out)
	if err != nil {
		t.Fatalf("the worked example failed: %v", err)
	}
	var events []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "Node") {
			events = append(events, regexp.MustCompile(` 0x[0-9a-f]+$`).ReplaceAllString(l, " ZXID"))
		}
	}
	want := []string{"NodeCreated /app ZXID", "NodeCreated /app/db ZXID", "NodeDataChanged /app/db ZXID", "NodeDeleted /app/db ZXID"}
	if strings.Join(events, "\n") != strings.Join(want, "\n") {
		t.Fatalf("events:\n%s\nwant:\n%s", strings.Join(events, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(string(out), "watching /app (recursive, 0 nodes)") {
		t.Error("no line watching /app")
	}
}
