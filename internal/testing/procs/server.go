package procs

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/internal/cli/fourletter"
	"github.com/zkraft/zkraft/internal/testing/testproc"
)

// StartServer runs `zkraft server args...` until the test ends and waits
// up to 20 s for srvr to answer on clientAddr.
func StartServer(t testing.TB, clientAddr string, args ...string) *exec.Cmd {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), "zkraft.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := testproc.Command(Binary(t), append([]string{"server", "--log-level", "warn"}, args...)...)
	cmd.Stdout, cmd.Stderr = logf, logf
	exited := make(chan struct{})
	// Registered before the start: it runs after testproc's kill.
	t.Cleanup(func() {
		<-exited
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("server log:\n%s", Tail(string(b), 40))
		}
	})
	if err := testproc.Start(t, cmd); err != nil {
		close(exited)
		t.Fatal(err)
	}
	go func() { _ = cmd.Wait(); logf.Close(); close(exited) }()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(fourletter.Ask(clientAddr, "srvr"), "Mode: ") {
		select {
		case <-exited:
			b, _ := os.ReadFile(logPath)
			t.Fatalf("zkraft server %v exited:\n%s", args, b)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("server not serving")
		}
		time.Sleep(50 * time.Millisecond)
	}
	return cmd
}

// ConsoleServer starts a standalone zkraft with the web console on
// (--console; extra adds flags); it returns the client and AdminServer
// addresses.
func ConsoleServer(t testing.TB, extra ...string) (clientAddr, adminAddr string) {
	t.Helper()
	clientAddr, adminAddr = FreeAddr(t), FreeAddr(t)
	args := append([]string{"--client-addr", clientAddr, "--data-dir", t.TempDir(), "--admin-addr", adminAddr,
		"--console", "--4lw-whitelist", "*", "--tick-time", "500"}, extra...)
	StartServer(t, clientAddr, args...)
	return clientAddr, adminAddr
}
