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

// TestElectWorkedExample runs the worked example of docs/operations.md's
// election section as written, with zkraft on the PATH and its server's
// port swapped for a free one: beta leads after alpha with its token in
// CMD's environment, and the listener printed the changes in order.
func TestElectWorkedExample(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(raw), "<!-- test: TestElectWorkedExample runs this block -->\n```sh\n")
	if !ok {
		t.Fatal("docs/operations.md has no sh block marked for TestElectWorkedExample")
	}
	block, _, _ := strings.Cut(after, "```")
	addr := lockServer(t)
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
	for _, want := range []string{`(?m)^elected "alpha": fencing token [1-9]\d* `, `(?m)^beta leads, token [1-9]\d*$`,
		`(?m)^\(no leader\)\nalpha\nbeta\n\(no leader\)\n`} {
		if !regexp.MustCompile(want).Match(out) {
			t.Errorf("no %s", want)
		}
	}
}
