// Package testproc starts the processes tests run (zkraft members,
// ZooKeeper's JVMs, chromedriver and its Chromium, clients in Java and
// Python, KDCs, CPU hogs) so that none outlives its test, even when the
// test binary dies without running its cleanups (a -timeout panic, a
// kill):
//
//   - each process leads a process group of its own, so that killing the
//     group also kills what it started (chromedriver's Chromium, a
//     shell's children), and a ^C meant for go test is not its business;
//   - the kernel sends it SIGKILL when the test binary dies
//     (PR_SET_PDEATHSIG, on Linux);
//   - Start kills its group in the test's Cleanup;
//   - it carries the run's marker (RunEnv) in its environment, which
//     scripts/gotest.sh's reaper looks for once go test has ended: a
//     grandchild that lost its parent is found there.
//
// Only tests and test helpers import it.
package testproc

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"testing"
)

// RunEnv names the environment variable scripts/gotest.sh sets to a value
// of its own for each go test it runs; every process the run starts
// inherits it, and whatever still carries it once go test has ended is
// killed and reported.
const RunEnv = "ZKRAFT_TEST_RUN"

// Command is exec.Command for a process a test starts: in a group of its
// own, killed with the test binary (see the package comment).
func Command(name string, arg ...string) *exec.Cmd {
	cmd := exec.Command(name, arg...)
	Prepare(cmd)
	return cmd
}

// CommandContext is exec.CommandContext with Command's attributes; the
// context's end kills the process's whole group.
func CommandContext(ctx context.Context, name string, arg ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, arg...)
	Prepare(cmd)
	return cmd
}

// Prepare gives cmd, made elsewhere and not yet started, Command's
// attributes: its own process group and the parent-death signal. If cmd
// has a Cancel function (exec.CommandContext's), it kills the group.
func Prepare(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	setAttr(cmd.SysProcAttr)
	if cmd.Cancel != nil {
		cmd.Cancel = func() error { Kill(cmd); return nil }
	}
}

// Start prepares cmd (Prepare), makes sure an environment of its own
// still carries the run's marker, starts it, and kills its process group
// when t's test ends. Waiting for it stays the caller's business.
func Start(t testing.TB, cmd *exec.Cmd) error {
	t.Helper()
	Prepare(cmd)
	if cmd.Env != nil {
		if v, ok := os.LookupEnv(RunEnv); ok && !slices.Contains(cmd.Env, RunEnv+"="+v) {
			cmd.Env = append(cmd.Env, RunEnv+"="+v)
		}
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	t.Cleanup(func() { Kill(cmd) })
	return nil
}

// Kill sends SIGKILL to cmd's process group (its process and whatever it
// started that stayed in the group), if cmd was started.
func Kill(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	if cmd.SysProcAttr != nil && cmd.SysProcAttr.Setpgid {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	_ = cmd.Process.Kill()
}
