package cluster

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkraft/zkraft/internal/testing/procs"
	"github.com/zkraft/zkraft/internal/testing/testproc"
)

// statusLine is one member's entry of `zkraft status --json`, the
// fields the tests read, decoded by their JSON names (the command's own
// type is package main's).
type statusLine struct {
	Address  string `json:"address"`
	Healthy  bool   `json:"healthy"`
	Error    string `json:"error,omitempty"`
	Mode     string `json:"mode,omitempty"`
	LeaderID int64  `json:"leader_id"`
	Term     uint64 `json:"raft_term,omitempty"`
	Zxid     string `json:"zxid,omitempty"`
	Lag      *int64 `json:"lag,omitempty"`
}

// runStatus runs the built binary's `zkraft status --server addrs` with
// args (no --admin-addr if admins is nil) and returns its stdout, stderr and whether it exited 0.
func runStatus(t *testing.T, addrs, admins []string, args ...string) (stdout, stderr string, ok bool) {
	t.Helper()
	args = append([]string{"status", "--server", strings.Join(addrs, ",")}, args...)
	if admins != nil {
		args = append(args, "--admin-addr", strings.Join(admins, ","))
	}
	cmd := testproc.Command(procs.Binary(t), args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if _, exited := err.(*exec.ExitError); err != nil && !exited {
		t.Fatalf("zkraft status: %v", err)
	}
	return out.String(), errOut.String(), err == nil
}

// statusJSON is runStatus with --json, its stdout decoded (it must be
// nothing but JSON).
func statusJSON(t *testing.T, addrs, admins []string) ([]statusLine, bool) {
	t.Helper()
	out, errOut, ok := runStatus(t, addrs, admins, "--json", "--connect-timeout", "2s")
	var statuses []statusLine
	if err := json.Unmarshal([]byte(out), &statuses); err != nil {
		t.Fatalf("status --json stdout is not JSON: %v\n%s\nstderr: %s", err, out, errOut)
	}
	if len(statuses) != len(addrs) {
		t.Fatalf("status --json: %d members, want %d:\n%s", len(statuses), len(addrs), out)
	}
	return statuses, ok
}

// agreed reports, with why not, whether statuses show a healthy ensemble
// of one leader and followers, known to all, at one term and zxid.
func agreed(statuses []statusLine) (string, bool) {
	var leaders int
	for _, s := range statuses {
		if s.Mode == "leader" {
			leaders++
		}
	}
	first := statuses[0]
	for _, s := range statuses {
		switch {
		case !s.Healthy:
			return fmt.Sprintf("%s unhealthy: %s", s.Address, s.Error), false
		case s.Mode != "leader" && s.Mode != "follower":
			return fmt.Sprintf("%s mode %q", s.Address, s.Mode), false
		case s.LeaderID <= 0 || s.LeaderID != first.LeaderID:
			return fmt.Sprintf("%s knows leader %d, %s knows %d", s.Address, s.LeaderID, first.Address, first.LeaderID), false
		case s.Term == 0 || s.Term != first.Term:
			return fmt.Sprintf("%s term %d, %s term %d", s.Address, s.Term, first.Address, first.Term), false
		case s.Zxid != first.Zxid || s.Lag == nil || *s.Lag != 0:
			return fmt.Sprintf("%s zxid %s (lag %v), %s zxid %s", s.Address, s.Zxid, s.Lag, first.Address, first.Zxid), false
		}
	}
	if leaders != 1 {
		return fmt.Sprintf("%d leaders", leaders), false
	}
	return "", true
}

// TestStatusCommand: zkraft status shows a 3-member ensemble as one leader
// and two followers at one term, equal zxids after a write (lag 0), in a
// table and in JSON; with a member killed it shows that one unhealthy,
// the others healthy, and exits non-zero.
func TestStatusCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three server processes")
	}
	members := procs.StartEnsemble(t, 3)
	addrs := procs.ClientAddrs(members)
	var admins []string
	for _, m := range members {
		admins = append(admins, m.AdminAddr)
	}
	leader := procs.LeaderOf(t, members, nil)
	conn := procs.ConnectAdmin(t, addrs)
	if _, err := conn.Create("/status", []byte("x"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	conn.Close()

	// Followers apply the write a moment after the leader: wait for one
	// zxid everywhere.
	deadline := time.Now().Add(15 * time.Second)
	for {
		statuses, ok := statusJSON(t, addrs, admins)
		why, same := agreed(statuses)
		if same && ok {
			if want := int64(leader.ID); statuses[0].LeaderID != want {
				t.Fatalf("leader id %d, srvr says member %d leads", statuses[0].LeaderID, want)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no agreement (exit ok %v): %s", ok, why)
		}
		time.Sleep(100 * time.Millisecond)
	}

	out, errOut, ok := runStatus(t, addrs, admins)
	t.Logf("zkraft status:\n%s", out)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if !ok || errOut != "" || len(lines) != 4 || !strings.HasPrefix(lines[0], "ADDRESS") ||
		strings.Count(out, " leader ") != 1 || strings.Count(out, " follower ") != 2 || strings.Count(out, "healthy") != 3 {
		t.Fatalf("status table (exit ok %v, stderr %q):\n%s", ok, errOut, out)
	}

	// Without --admin-addr: the same, leader and term from srvr (the one
	// word the default whitelist allows; startEnsemble's allows all).
	statuses, ok := statusJSON(t, addrs, nil)
	if why, same := agreed(statuses); !ok || !same || statuses[0].LeaderID != int64(leader.ID) {
		t.Fatalf("status without --admin-addr (exit ok %v): %s: %+v", ok, why, statuses)
	}

	var victim *procs.Member
	for _, m := range members {
		if m != leader {
			victim = m
			break
		}
	}
	victim.Kill()
	deadline = time.Now().Add(10 * time.Second)
	for {
		statuses, ok := statusJSON(t, addrs, admins)
		var bad []string
		for _, s := range statuses {
			if !s.Healthy {
				bad = append(bad, s.Address)
			}
		}
		if len(bad) == 1 && bad[0] == victim.ClientAddr {
			if ok {
				t.Fatal("status exited 0 with a member down")
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("unhealthy %v, want only %s", bad, victim.ClientAddr)
		}
		time.Sleep(100 * time.Millisecond)
	}
	out, errOut, ok = runStatus(t, addrs, admins)
	t.Logf("zkraft status, member %d killed:\n%s", victim.ID, out)
	if ok || !strings.Contains(out, victim.ClientAddr) || strings.Count(out, "unhealthy") != 1 ||
		!strings.Contains(errOut, "unhealthy members: "+victim.ClientAddr) {
		t.Fatalf("status with member %d killed (exit ok %v, stderr %q):\n%s", victim.ID, ok, errOut, out)
	}
}
