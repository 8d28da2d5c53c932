package cluster

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/internal/cli/fourletter"
	"github.com/zkraft/zkraft/internal/testing/procs"
	"github.com/zkraft/zkraft/internal/testing/testproc"
)

// TestEnsembleSurvivesLeaderKill runs three zkraft processes from zoo.cfg
// files, spreads go-zookeeper clients over them, kills -9 the leader under
// load, and checks that every acknowledged sequential create survives with
// a unique name and that no session was lost.
func TestEnsembleSurvivesLeaderKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three server processes")
	}
	members := procs.StartEnsemble(t, 3)
	addrs := procs.ClientAddrs(members)
	admin := procs.ConnectAdmin(t, addrs)
	defer admin.Close()
	if _, err := admin.Create("/load", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}

	const clients = 4
	conns, stopLoad := procs.CreateLoad(t, addrs, clients)
	sessions := make([]int64, clients)
	time.Sleep(1500 * time.Millisecond)
	for i, c := range conns {
		sessions[i] = c.SessionID()
	}
	leader := procs.LeaderOf(t, members, nil)
	killedAt := time.Now()
	leader.Kill()
	newLeader := procs.LeaderOf(t, members, leader)
	t.Logf("member %d killed; member %d leads after %v", leader.ID, newLeader.ID, time.Since(killedAt))
	time.Sleep(3 * time.Second)
	acked := stopLoad()

	seen := map[string]bool{}
	for _, p := range acked {
		if seen[p] {
			t.Fatalf("duplicate sequential name %s", p)
		}
		seen[p] = true
	}
	procs.RequirePresent(t, admin, acked)
	for i, c := range conns {
		if c.SessionID() != sessions[i] || c.State() == zk.StateExpired {
			t.Fatalf("client %d lost its session: %x -> %x (%v)", i, sessions[i], c.SessionID(), c.State())
		}
	}
	t.Logf("%d acknowledged creates, all present and unique; %d sessions survived", len(acked), clients)

	leader.Start(t) // the killed member rejoins and catches up
	deadline := time.Now().Add(20 * time.Second)
	want := fourletter.Field(fourletter.Ask(newLeader.ClientAddr, "srvr"), "Node count: ")
	for fourletter.Field(fourletter.Ask(leader.ClientAddr, "srvr"), "Node count: ") != want {
		if time.Now().After(deadline) {
			t.Fatalf("restarted member did not catch up: %q vs %q", fourletter.Field(fourletter.Ask(leader.ClientAddr, "srvr"), "Node count: "), want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestEnsembleKeepsAcknowledgedWritesWhenAllDie kills -9 all three members
// at once under write load, restarts them, and checks every acknowledged
// create is there: members write their logs in the background
// (ensemble/asynclog.go), and only what reached a majority's logs may have
// been acknowledged.
func TestEnsembleKeepsAcknowledgedWritesWhenAllDie(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three server processes twice")
	}
	members := procs.StartEnsemble(t, 3)
	acked := procs.KillAllUnderLoad(t, members, 8, 1500*time.Millisecond, 100)
	t.Logf("%d acknowledged creates before all members died, all present after the restart", acked)
}

// TestMembersCommand lists and shrinks a three-process ensemble with
// `zkraft members` as the super user, and refuses to remove a non-member
// (a reconfig that would change nothing but the version). Its members come from a dynamic
// config file, as a ZooKeeper 3.5+ ensemble with reconfig enabled has
// them (a zoo.cfg without server lines would start three standalone
// servers, and the list would hold one).
func TestMembersCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three server processes")
	}
	// super:secret
	members := procs.StartEnsemble(t, 3, "reconfigEnabled=true", "superDigest=super:lK75jTNcA+U9vtVEw5vB51mj/w4=", procs.DynamicMembers)
	server := members[0].ClientAddr
	run := func(args ...string) string {
		out, err := testproc.Command(procs.Binary(t), append([]string{"members"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("zkraft members %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(run("list", "--server", server), "version=") {
		if time.Now().After(deadline) {
			t.Fatal("no ensemble configuration")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if out := run("list", "--server", server); strings.Count(out, "server.") != 3 {
		t.Fatalf("list:\n%s", out)
	}
	var listed struct {
		Version string
		Members []struct{ ID, Server string }
	}
	if out := run("list", "-o", "json", "--server", server); json.Unmarshal([]byte(out), &listed) != nil ||
		len(listed.Members) != 3 || listed.Members[0].ID != "1" || listed.Version == "" {
		t.Fatalf("list -o json:\n%s", out)
	}
	// Without credentials the refusal says where they come from, in
	// members and in the shell's reconfig.
	out, err := testproc.Command(procs.Binary(t), "members", "remove", "--server", server, "3").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "not authenticated") || !strings.Contains(string(out), "--auth digest:super:PASSWORD or $ZKRAFT_AUTH") {
		t.Fatalf("reconfig without the super user must fail with NoAuth, naming --auth: %v\n%s", err, out)
	}
	out, err = testproc.Command(procs.Binary(t), "shell", "-q", "--server", server, "reconfig", "-remove", "3").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "Insufficient permission") || !strings.Contains(string(out), "start the shell with --auth digest:super:PASSWORD") {
		t.Fatalf("shell reconfig without the super user must fail, naming --auth: %v\n%s", err, out)
	}
	before := run("list", "--server", server)
	// Flags after the ids, and the credentials from the environment.
	cmd := testproc.Command(procs.Binary(t), "members", "remove", "7", "--server", server, "--timeout", "5s")
	cmd.Env = append(cmd.Environ(), "ZKRAFT_AUTH=digest:super:secret")
	out, err = cmd.CombinedOutput()
	if err == nil || strings.TrimSpace(string(out)) != "zkraft: server 7 is not a member (members: 1, 2, 3)" {
		t.Fatalf("removing a non-member must fail, naming it: %v\n%s", err, out)
	}
	if after := run("list", "--server", server); after != before {
		t.Fatalf("a refused remove changed the configuration:\n%s\nvs\n%s", before, after)
	}
	out2 := run("remove", "--server", server, "--auth", "super:secret", "3")
	if strings.Contains(out2, "server.3=") || strings.Count(out2, "server.") != 2 {
		t.Fatalf("after remove:\n%s", out2)
	}
	if out := run("list", "--server", members[1].ClientAddr); out != out2 {
		t.Fatalf("members disagree:\n%s\nvs\n%s", out, out2)
	}
}
