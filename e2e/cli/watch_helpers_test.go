package cli

import (
	"os"
	"testing"

	"github.com/zkraft/zkraft/internal/testing/procs"
	"github.com/zkraft/zkraft/internal/testing/testproc"
)

// startProc starts `zkraft command args...` as a lockProc (its output
// buffered, its exit status kept).
func startProc(t *testing.T, command string, args ...string) *lockProc {
	t.Helper()
	return startProcEnv(t, nil, command, args...)
}

// startProcEnv is startProc with env added to the environment.
func startProcEnv(t *testing.T, env []string, command string, args ...string) *lockProc {
	t.Helper()
	p := &lockProc{cmd: testproc.Command(procs.Binary(t), append([]string{command}, args...)...), done: make(chan struct{})}
	if env != nil {
		p.cmd.Env = append(os.Environ(), env...)
	}
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	p.run(t)
	return p
}
