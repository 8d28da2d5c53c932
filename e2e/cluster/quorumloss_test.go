package cluster

import (
	"syscall"
	"testing"
	"time"

	"github.com/zkraft/zkraft/internal/testing/procs"
)

// TestLeaderWithoutFollowersGoesReadOnlyAtOnce: with read-only mode on,
// a leader whose two followers stop (SIGTERM) says "Mode: read-only" in
// srvr at once, as kazoo's test_read_only expects within 6 s (it once
// took 11.5-12.4 s: Raft's lease, P = 10 s here), and exits at once when
// stopped in turn.
func TestLeaderWithoutFollowersGoesReadOnlyAtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three server processes")
	}
	members := procs.StartEnsemble(t, 3, "readonlymode.enabled=true")
	leader := procs.LeaderOf(t, members, nil)
	for _, m := range members {
		if m != leader {
			m.Stop(t)
		}
	}
	stopped := time.Now()
	for mode := leader.Mode(); mode != "read-only"; mode = leader.Mode() {
		if time.Since(stopped) > 2*time.Second {
			t.Fatalf("srvr says Mode: %q 2 s after the followers stopped", mode)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("read-only %v after the followers stopped", time.Since(stopped).Round(time.Millisecond))
	start := time.Now()
	leader.Stop(t)
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("the leader took %v to exit on SIGTERM", took)
	}
}

// TestLeaderWithStoppedFollowersExitsAtOnce: a leader whose followers
// were stopped with SIGSTOP (their kernels still accept connections)
// exits at once on SIGTERM, as ZooKeeper's does; it used to wait 10 s
// (P), handing leadership to a follower that could not take it.
func TestLeaderWithStoppedFollowersExitsAtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three server processes")
	}
	members := procs.StartEnsemble(t, 3)
	leader := procs.LeaderOf(t, members, nil)
	for _, m := range members {
		if m != leader {
			m.Signal(syscall.SIGSTOP)
		}
	}
	time.Sleep(time.Second)
	start := time.Now()
	leader.Stop(t)
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("the leader took %v to exit on SIGTERM", took)
	}
	t.Logf("exited %v after SIGTERM", time.Since(start).Round(time.Millisecond))
}
