package main

import (
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zkraft/zkraft/internal/testing/procs"
)

// TestSIGTERMHandsOffLeadership: a leader stopped with SIGTERM (a rolling
// restart) hands leadership to a follower before it exits, and the others
// go on with a new leader.
func TestSIGTERMHandsOffLeadership(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three server processes")
	}
	members := procs.StartPreparedEnsemble(t, 3, func(m *procs.Member) { m.LogLevel = "info" })
	leader := procs.LeaderOf(t, members, nil)
	if err := leader.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	next := procs.LeaderOf(t, members, leader)
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, _ := os.ReadFile(leader.LogPath)
		if strings.Contains(string(b), "leadership handed off") {
			break
		}
		if strings.Contains(string(b), "leadership not handed off") || time.Now().After(deadline) {
			t.Fatalf("member %d stopped without handing off:\n%s", leader.ID, procs.Tail(string(b), 20))
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("member %d handed off to member %d", leader.ID, next.ID)
}
