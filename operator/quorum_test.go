package operator

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/internal/testing/rawclient"
	"github.com/zkraft/zkraft/internal/testing/testmember"
	"github.com/zkraft/zkraft/session"
)

// TestFourLetterWordsWithoutQuorum: a member cut off from its majority
// (read-only mode off) answers the words ZooKeeper's unstarted server does
// with "not currently serving requests", isro with "null", and ruok and
// envi as usual; with its quorum back it answers normally.
func TestFourLetterWordsWithoutQuorum(t *testing.T) {
	nodes := testmember.Ensemble(t, 3)
	if nodes == nil {
		return
	}
	survivor := nodes[0]
	srv := session.New(session.Config{FourLetter: FourLetter{}, TickTime: 200 * time.Millisecond, FourLetterWhitelist: []string{"*"}}, survivor)
	addr := testmember.Serve(t, srv)
	ask := func(cmd string) string { return rawclient.Word(t, addr, cmd) }
	for !survivor.HasQuorum() {
		time.Sleep(20 * time.Millisecond)
	}
	if out := ask("srvr"); !strings.Contains(out, "Mode: ") {
		t.Fatalf("srvr with a quorum: %q", out)
	}
	if out := ask("isro"); out != "rw" {
		t.Fatalf("isro with a quorum: %q", out)
	}
	testmember.LoseQuorum(t, survivor, nodes[1], nodes[2])
	for _, cmd := range []string{"srvr", "stat", "mntr", "conf", "cons", "crst", "srst", "dump", "dirs", "wchs", "wchc", "wchp"} {
		if out := ask(cmd); out != notServing {
			t.Errorf("%s without a quorum: %q", cmd, out)
		}
	}
	if out := ask("isro"); out != "null" {
		t.Errorf("isro without a quorum: %q, want null", out)
	}
	if out := ask("ruok"); out != "imok" {
		t.Errorf("ruok without a quorum: %q", out)
	}
	if out := ask("envi"); !strings.Contains(out, "Environment:") {
		t.Errorf("envi without a quorum: %q", out)
	}
	admin := NewAdmin(srv)
	// The AdminServer likewise, but for the commands ZooKeeper runs without
	// a server (monitor, environment, zabstate, ...).
	for _, name := range []string{"srvr", "stats", "conf", "is_read_only", "dump"} {
		want := "{\n  \"command\" : \"" + name + "\",\n  \"error\" : \"This ZooKeeper instance is not currently serving requests\"\n}"
		if got := admin.Response(name); got != want {
			t.Errorf("admin %s without a quorum:\n%s\nwant\n%s", name, got, want)
		}
	}
	for _, name := range []string{"monitor", "envi", "zabstate"} {
		if got := admin.Response(name); strings.Contains(got, "not currently serving") {
			t.Errorf("admin %s without a quorum: %s", name, got)
		}
	}
	if got, want := admin.Response("zabstate"), "{\n  \"voting\" : false,\n  \"zabstate\" : \"\",\n  \"command\" : \"zabstate\",\n  \"error\" : null\n}"; got != want {
		t.Errorf("admin zabstate without a quorum:\n%s\nwant\n%s", got, want)
	}
}

// TestFourLetterWordsReadOnly: a member serving read-only clients without
// its majority (readonlymode.enabled) says so: isro "ro", srvr's Mode
// read-only.
func TestFourLetterWordsReadOnly(t *testing.T) {
	nodes := testmember.Ensemble(t, 3)
	if nodes == nil {
		return
	}
	survivor := nodes[0]
	srv := session.New(session.Config{TickTime: 200 * time.Millisecond, ReadOnlyMode: true, FourLetter: FourLetter{}, FourLetterWhitelist: []string{"*"}}, survivor)
	addr := testmember.Serve(t, srv)
	ask := func(cmd string) string { return rawclient.Word(t, addr, cmd) }
	for !survivor.HasQuorum() {
		time.Sleep(20 * time.Millisecond)
	}
	testmember.LoseQuorum(t, survivor, nodes[1], nodes[2])
	if out := ask("isro"); out != "ro" {
		t.Fatalf("isro: %q", out)
	}
	if out := ask("srvr"); !strings.Contains(out, "Mode: read-only\n") {
		t.Fatalf("srvr: %q", out)
	}
}

// TestSrvrEndsWithLeaderAndTerm: an ensemble member's srvr ends with the
// leader it knows and its Raft term (zkraft's, after ZooKeeper's lines),
// which zkraft status reads; a standalone server's has neither.
func TestSrvrEndsWithLeaderAndTerm(t *testing.T) {
	nodes := testmember.Ensemble(t, 3)
	if nodes == nil {
		return
	}
	member := nodes[0]
	srv := session.New(session.Config{FourLetter: FourLetter{}, TickTime: 200 * time.Millisecond}, member)
	addr := testmember.Serve(t, srv)
	deadline := time.Now().Add(10 * time.Second)
	for {
		id, _, ok := member.Leader()
		want := fmt.Sprintf("\nLeader id: %d\nRaft term: %d\n", id, member.Term())
		out := rawclient.Word(t, addr, "srvr")
		if ok && strings.HasSuffix(out, want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("srvr:\n%s\nwant it to end with%s", out, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if out := rawclient.Word(t, startServer(t).addr, "srvr"); strings.Contains(out, "Leader id") || strings.Contains(out, "Raft term") {
		t.Fatalf("standalone srvr:\n%s", out)
	}
}
