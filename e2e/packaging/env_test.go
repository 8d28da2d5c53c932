package packaging

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/internal/testenv"
)

// cmdTimeout bounds one command: a build or a docker call on a loaded
// two-core machine takes seconds to a few minutes, never more.
const cmdTimeout = 5 * time.Minute

// run runs name with args in dir and returns its trimmed standard output;
// an error carries what it printed.
func run(dir string, env []string, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s %s: %w\n%s%s", name, strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return strings.TrimSpace(stdout.String()), nil
}

// moduleRoot is the directory of the go.mod enclosing the test.
func moduleRoot(t *testing.T) string {
	t.Helper()
	gomod, err := run("", nil, "go", "env", "GOMOD")
	if err != nil {
		t.Fatal(err)
	}
	if gomod == "" || gomod == os.DevNull {
		t.Fatal("not inside a Go module")
	}
	return filepath.Dir(gomod)
}

// requireTools skips t on a developer's machine, and fails it in CI,
// unless every tool is on PATH; each names the Debian package with it.
func requireTools(t *testing.T, tools map[string]string) {
	t.Helper()
	var errs []error
	for tool, pkg := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			errs = append(errs, fmt.Errorf("%s not found (Debian: %s)", tool, pkg))
		}
	}
	testenv.Require(t, errors.Join(errs...))
}
