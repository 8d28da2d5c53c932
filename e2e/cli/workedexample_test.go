package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/internal/testing/procs"
	"github.com/zkraft/zkraft/internal/testing/testproc"
)

// runWorkedExample runs the sh block of docs/operations.md marked
// "<!-- test: <t.Name()> runs this block -->" as written, in a temporary
// directory, with zkraft on the PATH and 127.0.0.1:2181 swapped for addr,
// and returns its output; the block failing fails t.
func runWorkedExample(t *testing.T, addr string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(raw), "<!-- test: "+t.Name()+" runs this block -->\n```sh\n")
	if !ok {
		t.Fatalf("docs/operations.md has no sh block marked for %s", t.Name())
	}
	block, _, _ := strings.Cut(after, "```")
	script := strings.ReplaceAll(block, "127.0.0.1:2181", addr)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := testproc.CommandContext(ctx, "sh", "-ec", script)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(procs.Binary(t))+":"+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	t.Logf("$ sh -ec <<the block>>\n%s", out)
	if err != nil {
		t.Fatalf("the worked example failed: %v", err)
	}
	return out
}
