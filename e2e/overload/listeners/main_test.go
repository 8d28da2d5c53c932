//go:build linux

package listeners

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zkraft/zkraft/internal/testing/testenv"
)

// zkraftBin is the zkraft binary TestMain built for the package's tests.
var zkraftBin string

// TestMain builds the zkraft binary once, runs the tests, and removes it.
func TestMain(m *testing.M) {
	os.Exit(testenv.CollectingRaces(func() int {
		dir, err := os.MkdirTemp("", "zkraft-overload-")
		if err != nil {
			fmt.Fprintln(os.Stderr, "overload:", err)
			return 1
		}
		defer os.RemoveAll(dir)
		if zkraftBin, err = buildZkraft(dir); err != nil {
			fmt.Fprintf(os.Stderr, "overload: FAIL: cannot build the zkraft binary: %v\n", err)
			return 1
		}
		return m.Run()
	}))
}

// buildZkraft builds ./cmd/zkraft of the enclosing module into dir.
func buildZkraft(dir string) (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("not inside a Go module")
	}
	bin := filepath.Join(dir, "zkraft")
	args := append([]string{"build", "-o", bin}, testenv.BuildFlags()...)
	cmd := exec.Command("go", append(args, "./cmd/zkraft")...)
	cmd.Dir = filepath.Dir(gomod)
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build ./cmd/zkraft: %w\n%s", err, buf.String())
	}
	return bin, nil
}
