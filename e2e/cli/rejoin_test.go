package cli

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkraft/zkraft/internal/testing/procs"
	"github.com/zkraft/zkraft/internal/testing/testproc"
)

// currentJournalRecord returns the offset of the first record of the
// journal's newest generation (the header slot with the valid version 2
// magic and the highest generation; ensemble/storage/journal_header.go).
func currentJournalRecord(t *testing.T, path string) int64 {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var gen, start uint64
	found := false
	for slot := 0; slot < 2; slot++ {
		h := raw[slot*512 : slot*512+36]
		if string(h[:8]) != "zkrjrnl2" {
			continue
		}
		if g := binary.BigEndian.Uint64(h[8:16]); !found || g > gen {
			gen, start, found = g, binary.BigEndian.Uint64(h[16:24]), true
		}
	}
	if !found {
		t.Fatalf("%s has no header", path)
	}
	return int64(start)
}

// createAll creates n znodes /load/<prefix>N through c, each its own write,
// and returns their paths.
func createAll(t *testing.T, c *zk.Conn, prefix string, n int) []string {
	t.Helper()
	var paths []string
	for i := 0; i < n; i++ {
		p := fmt.Sprintf("/load/%s%03d", prefix, i)
		if _, err := c.Create(p, []byte("v"), 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatalf("create %s: %v", p, err)
		}
		paths = append(paths, p)
	}
	return paths
}

// TestRejoinRecoversADamagedMember: a follower's raft.journal damaged in
// the middle (a flipped byte in a record with acknowledged records after
// it) makes it refuse to start, naming the file and the offset; `zkraft
// rejoin` moves its log aside, and started again it catches up from the
// others (the leader, whose log was compacted meanwhile, sends it a
// snapshot) and holds every acknowledged write, those from before the
// damage and those made while it was down.
func TestRejoinRecoversADamagedMember(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts three server processes")
	}
	members := procs.StartEnsemble(t, 3, "snapCount=1000")
	leader := procs.LeaderOf(t, members, nil)
	var victim *procs.Member
	var others []string
	for _, m := range members {
		if m != leader && victim == nil {
			victim = m
		} else {
			others = append(others, m.ClientAddr)
		}
	}
	admin := procs.ConnectAdmin(t, others)
	defer admin.Close()
	if _, err := admin.Create("/load", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	acked := createAll(t, admin, "before", 60)
	if _, err := admin.Sync("/load"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // the victim has logged the last ones too (a majority needs only one follower)
	victim.Kill()
	time.Sleep(300 * time.Millisecond)

	dataDir := filepath.Dir(victim.CfgPath)
	journal := filepath.Join(dataDir, "raft.journal")
	rec := currentJournalRecord(t, journal)
	f, err := os.OpenFile(journal, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 1)
	_, _ = f.ReadAt(b, rec+16+2)
	b[0] ^= 0xff
	if _, err := f.WriteAt(b, rec+16+2); err != nil {
		t.Fatal(err)
	}
	f.Close()

	acked = append(acked, createAll(t, admin, "while-down", 40)...)
	// Past the trailing log the others keep behind a snapshot (10240
	// entries), so the rejoined member is sent a snapshot rather than the
	// log from its first entry. The snapshot comes once the load stops: an
	// idle member snapshots after snapCount (1000) entries.
	var load []string
	for deadline := time.Now().Add(90 * time.Second); len(load) < 12000; { // the machine's speed varies
		if time.Now().After(deadline) {
			t.Fatalf("only %d creates in 90 s", len(load))
		}
		_, stopLoad := procs.CreateLoad(t, others, 8)
		time.Sleep(3 * time.Second)
		load = append(load, stopLoad()...)
	}
	acked = append(acked, load...)
	for deadline := time.Now().Add(30 * time.Second); !compactedPast(members, victim, 1); time.Sleep(500 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("after %d creates the others' logs still start at entry 1: the test would not send a snapshot", len(load))
		}
	}
	t.Logf("%d creates while the member was down", len(load))

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := testproc.CommandContext(ctx, procs.Binary(t), "server", "--config", victim.CfgPath, "--log-level", "warn").CombinedOutput()
	if err == nil {
		t.Fatalf("a member with a damaged journal started (or ran until the timeout):\n%s", procs.Tail(string(out), 20))
	}
	if !strings.Contains(string(out), journal) || !strings.Contains(string(out), fmt.Sprintf("byte offset %d", rec)) {
		t.Fatalf("the refusal does not name %s and offset %d:\n%s", journal, rec, procs.Tail(string(out), 20))
	}

	out, err = testproc.Command(procs.Binary(t), "rejoin", "--config", victim.CfgPath).CombinedOutput()
	if err != nil {
		t.Fatalf("zkraft rejoin: %v\n%s", err, out)
	}
	t.Logf("zkraft rejoin:\n%s", out)
	aside, _ := filepath.Glob(filepath.Join(dataDir, "damaged-*", "raft.journal"))
	if len(aside) != 1 {
		t.Fatalf("the damaged journal was not kept aside: %v", aside)
	}

	victim.Start(t)
	deadline := time.Now().Add(60 * time.Second)
	for victim.Mode() != "follower" {
		if time.Now().After(deadline) {
			t.Fatal("the rejoined member does not serve as a follower")
		}
		time.Sleep(100 * time.Millisecond)
	}
	direct, _, err := zk.Connect([]string{victim.ClientAddr}, 6*time.Second, zk.WithLogger(procs.QuietLogger{}))
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	procs.RequirePresent(t, direct, acked)
	t.Logf("the rejoined member holds all %d acknowledged creates", len(acked))
}

// compactedPast reports whether every member but except has a snapshot
// far enough along that its log, which keeps 10240 entries behind the
// snapshot (ensemble's trailing log at snapCount=1000), no longer holds
// entry index.
func compactedPast(members []*procs.Member, except *procs.Member, index uint64) bool {
	for _, m := range members {
		if m == except {
			continue
		}
		entries, _ := os.ReadDir(filepath.Join(filepath.Dir(m.CfgPath), "snapshots"))
		var newest uint64
		for _, e := range entries {
			var term, idx, ms uint64
			if _, err := fmt.Sscanf(e.Name(), "%d-%d-%d", &term, &idx, &ms); err == nil && !strings.HasSuffix(e.Name(), ".tmp") {
				newest = max(newest, idx)
			}
		}
		if newest <= index+10240+100 {
			return false
		}
	}
	return true
}

// TestRejoinRefusesAStandaloneServer: `zkraft rejoin --data-dir` on a
// standalone server's directory (no zoo.cfg to say so) refuses, since
// the server has no peers to catch up from, and moves nothing aside: the
// server starts again with its data.
func TestRejoinRefusesAStandaloneServer(t *testing.T) {
	t.Parallel()
	addr, dir := procs.FreeAddr(t), filepath.Join(t.TempDir(), "data")
	cmd := procs.StartServer(t, addr, "--client-addr", addr, "--data-dir", dir)
	c := procs.ConnectTo(t, addr)
	if _, err := c.Create("/kept", []byte("v"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	c.Close()
	testproc.Kill(cmd)
	// The directory is free once the killed process is gone.
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, errs, code := runBinary(t, "", nil, "rejoin", "--data-dir", dir)
		if code == 1 && strings.Contains(errs, "no peers to catch up from") {
			break
		}
		if time.Now().After(deadline) || !strings.Contains(errs, "in use") && !strings.Contains(errs, "locked") {
			t.Fatalf("rejoin of a standalone server: exit %d:\n%s", code, errs)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "damaged-*")); len(m) != 0 {
		t.Fatalf("moved aside: %v", m)
	}
	procs.StartServer(t, addr, "--client-addr", addr, "--data-dir", dir)
	c = procs.ConnectTo(t, addr)
	defer c.Close()
	if _, _, err := c.Get("/kept"); err != nil {
		t.Fatalf("after the refused rejoin: %v", err)
	}
}
