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

	"github.com/go-zookeeper/zk"
	"github.com/zkraft/zkraft/internal/testing/testenv"
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

// requireRoot skips t on a developer's machine, and fails it in CI, unless
// the test runs as root (dpkg -i, users, chown).
func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		testenv.Require(t, errors.New("not running as root (installing a package needs it)"))
	}
}

// quietLogger drops go-zookeeper's connection chatter.
type quietLogger struct{}

func (quietLogger) Printf(string, ...any) {}

// writeRead creates path with data through the server at writeAddr, then
// reads it back through readAddr (after a sync, so a follower has it).
func writeRead(writeAddr, readAddr, path string, data []byte) error {
	w, err := connect(writeAddr)
	if err != nil {
		return err
	}
	defer w.Close()
	if _, err := w.Create(path, data, 0, zk.WorldACL(zk.PermAll)); err != nil {
		return fmt.Errorf("create %s through %s: %w", path, writeAddr, err)
	}
	if err := readBack(readAddr, path, data); err != nil {
		return fmt.Errorf("%w (written through %s)", err, writeAddr)
	}
	return nil
}

// readBack reads path through the server at addr, after a sync, and
// checks it holds data.
func readBack(addr, path string, data []byte) error {
	r, err := connect(addr)
	if err != nil {
		return err
	}
	defer r.Close()
	if _, err := r.Sync(path); err != nil {
		return fmt.Errorf("sync %s through %s: %w", path, addr, err)
	}
	got, _, err := r.Get(path)
	if err != nil {
		return fmt.Errorf("get %s through %s: %w", path, addr, err)
	}
	if !bytes.Equal(got, data) {
		return fmt.Errorf("get %s through %s: %q, want %q", path, addr, got, data)
	}
	return nil
}

// connect opens a session with the server at addr, waiting up to 30s
// for it (a member still starting, an ensemble still electing).
func connect(addr string) (*zk.Conn, error) {
	c, events, err := zk.Connect([]string{addr}, 10*time.Second, zk.WithLogger(quietLogger{}))
	if err != nil {
		return nil, fmt.Errorf("connect %s: %w", addr, err)
	}
	deadline := time.After(30 * time.Second)
	for {
		select {
		case ev := <-events:
			if ev.State == zk.StateHasSession {
				return c, nil
			}
		case <-deadline:
			c.Close()
			return nil, fmt.Errorf("connect %s: no session after 30s", addr)
		}
	}
}
