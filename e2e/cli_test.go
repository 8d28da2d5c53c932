package e2e

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/zkraft/zkraft/internal/testing/testproc"
)

// TestCLIMillis checks the command line of the original contract, where
// --tick-time and the session timeout bounds are plain milliseconds as in
// zoo.cfg (zkraft server --tick-time 2000 --min-session-timeout MS ...).
func TestCLIMillis(t *testing.T) {
	requireTarget(t, targetZkraft, "zkraft's command line")
	t.Parallel()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	cmd := exec.Command(zkraftBin, "server", "--client-addr", addr, "--data-dir", filepath.Join(t.TempDir(), "data"),
		"--tick-time", "2000", "--min-session-timeout", "4000", "--max-session-timeout", "40000", "--log-level", "warn")
	out, err := startAndProbe(cmd, addr)
	if err != nil {
		t.Errorf("zkraft server --tick-time 2000 --min-session-timeout 4000 --max-session-timeout 40000: %v\n%s", err, out)
	}
}

// startAndProbe starts cmd, waits until addr answers a handshake (or the
// process exits) and stops it again, returning its output.
func startAndProbe(cmd *exec.Cmd, addr string) (string, error) {
	var buf lockedBuffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	testproc.Prepare(cmd)
	if err := cmd.Start(); err != nil {
		return "", err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-done:
			return buf.String(), errExited(err)
		default:
		}
		if probe(addr) == nil {
			cmd.Process.Kill()
			<-done
			return buf.String(), nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	cmd.Process.Kill()
	<-done
	return buf.String(), errNotReady
}

var errNotReady = errorString("not ready after 10s")

type errorString string

// Error implements error.
func (e errorString) Error() string { return string(e) }

// errExited describes an early exit.
func errExited(err error) error {
	if err == nil {
		return errorString("exited with status 0 during startup")
	}
	return errorString("exited during startup: " + err.Error())
}

// lockedBuffer is a bytes.Buffer safe for the process's two output pipes.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write implements io.Writer.
func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
