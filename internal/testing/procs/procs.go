// Package procs runs zkraft as its operators do, as processes of the
// binary, for the tests under e2e/ that check what a process does: it
// builds the binary once per test binary, starts members and ensembles
// from zoo.cfg files, standalone servers from flags, and followers of a
// ZooKeeper ensemble, runs the command line, and asks members what they
// are. Every process is started through testproc, so none outlives its
// test. Only tests import it.
package procs

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/zkraft/zkraft/internal/testing/testenv"
	"github.com/zkraft/zkraft/internal/testing/testport"
	"github.com/zkraft/zkraft/internal/testing/testproc"
)

// The binary, built once per test binary (Binary), and the directory it
// is in, removed by RunTests.
var (
	buildOnce sync.Once
	binDir    string
	binPath   string
	buildErr  error
)

// Binary returns the path of a zkraft binary built from this checkout's
// cmd/zkraft, building it on the first call (with -race under
// ZKRAFT_RACE=1, as make test-race sets).
func Binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "zkraft-bin-")
		if buildErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "zkraft")
		args := append([]string{"build", "-o", binPath}, testenv.BuildFlags()...)
		out, err := exec.Command("go", append(args, "github.com/zkraft/zkraft/cmd/zkraft")...).CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// RunTests is the TestMain body of a package whose tests start zkraft
// processes: it runs the tests, removes the binary Binary built and the
// classes CompileJava compiled and, under ZKRAFT_RACE=1, fails the run on
// a data race any of those processes reported.
func RunTests(m *testing.M) int {
	return testenv.CollectingRaces(func() int {
		defer func() {
			removeReleases()
			for _, dir := range []string{binDir, javaDir} {
				if dir != "" {
					os.RemoveAll(dir)
				}
			}
		}()
		return m.Run()
	})
}

// FreeAddr is a free loopback address, "127.0.0.1:port", from
// internal/testing/testport: below the kernel's ephemeral range and
// claimed across processes, so that two ensembles of packages testing at
// once are not handed the same member port (a member that heard another
// ensemble's leader once found itself removed from the configuration).
func FreeAddr(t testing.TB) string {
	t.Helper()
	addr, err := testport.Addr()
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

// Tail is the last n lines of s.
func Tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Run runs `zkraft args...` to its end and returns what it printed,
// stdout and stderr together. A non-zero exit is an error that carries
// that output, as the command's own error did in process.
func Run(t testing.TB, args ...string) (string, error) {
	t.Helper()
	out, err := testproc.Command(Binary(t), args...).CombinedOutput()
	if _, exited := err.(*exec.ExitError); err != nil && !exited {
		t.Fatalf("zkraft %v: %v", args, err)
	}
	if err != nil {
		return string(out), fmt.Errorf("zkraft %s: %w: %s", args[0], err, bytes.TrimSpace(out))
	}
	return string(out), nil
}

// RunSplit runs `zkraft args...` with env added to the test's
// environment and returns its stdout and stderr apart and whether it
// exited 0.
func RunSplit(t testing.TB, env []string, args ...string) (stdout, stderr string, ok bool) {
	t.Helper()
	cmd := testproc.Command(Binary(t), args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if _, exited := err.(*exec.ExitError); err != nil && !exited {
		t.Fatalf("zkraft %v: %v", args, err)
	}
	return out.String(), errOut.String(), err == nil
}
