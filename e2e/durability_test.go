package e2e

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// snapshotStats reads the data and Stat of every path.
func snapshotStats(t *testing.T, c *client, paths []string) map[string]string {
	t.Helper()
	out := make(map[string]string, len(paths))
	for _, p := range paths {
		data, st, err := c.Get(p)
		if err != nil {
			t.Fatalf("get %s: %v", p, err)
		}
		out[p] = fmt.Sprintf("%q %+v", data, *st)
	}
	return out
}

// TestDurabilityKill9 writes, kills the server with SIGKILL, restarts it on
// the same data dir and checks that every acknowledged write survived with
// an identical Stat, that a session which reconnects in time is resumed
// with its ephemerals, and that a session which does not come back expires.
// It also runs against ZooKeeper, which validates the test itself.
func TestDurabilityKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: kill/restart test takes ~15 s")
	}
	t.Parallel()
	srv := StartServer(t, ServerOptions{})
	w := connect(t, srv, 6*time.Second)    // comes back after the restart
	gone := connect(t, srv, 4*time.Second) // never comes back
	tracker := connect(t, srv, sessionTimeout)
	_ = tracker

	// Phase 1: acknowledged writes, quiesced before the kill.
	var paths []string
	// /d's own Stat moves with the racing writers' and ephemerals' nodes, so
	// only the subtrees below it are compared exactly.
	mustCreate(t, w, "/d", []byte("root"), 0)
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			parent := fmt.Sprintf("/d/g%d", g)
			if _, err := w.Create(parent, nil, 0, openACL); err != nil {
				errs <- err
				return
			}
			local := []string{parent}
			for i := 0; i < 40; i++ {
				p, err := w.Create(parent+"/n-", []byte(strconv.Itoa(i)), zk.FlagSequence, openACL)
				if err != nil {
					errs <- err
					return
				}
				if i%3 == 0 {
					if _, err := w.Set(p, []byte("set "+p), -1); err != nil {
						errs <- err
						return
					}
				}
				if i%5 == 0 {
					if err := w.Delete(p, -1); err != nil {
						errs <- err
						return
					}
					continue
				}
				local = append(local, p)
			}
			if _, err := w.Multi(
				&zk.CreateRequest{Path: parent + "/m1", Acl: openACL},
				&zk.CreateRequest{Path: parent + "/m2", Data: []byte("m"), Acl: openACL},
				&zk.SetDataRequest{Path: parent, Data: []byte("multi"), Version: -1},
			); err != nil {
				errs <- err
				return
			}
			local = append(local, parent+"/m1", parent+"/m2")
			mu.Lock()
			paths = append(paths, local...)
			mu.Unlock()
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("phase 1 write: %v", err)
	}
	if _, err := w.SetACL("/d", zk.WorldACL(zk.PermAll&^zk.PermDelete), -1); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, w, "/d/eph-w", nil, zk.FlagEphemeral)
	mustCreate(t, gone, "/d/eph-gone", nil, zk.FlagEphemeral)
	wID := w.SessionID()
	before := snapshotStats(t, w, paths)

	// Phase 2: writers racing the kill; remember the last acknowledged value.
	const racers = 4
	acked := make([]int, racers)
	for k := 0; k < racers; k++ {
		mustCreate(t, w, fmt.Sprintf("/d/race%d", k), []byte("0"), 0)
	}
	stop := make(chan struct{})
	var rwg sync.WaitGroup
	for k := 0; k < racers; k++ {
		rwg.Add(1)
		go func(k int) {
			defer rwg.Done()
			for v := 1; ; v++ {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := w.Set(fmt.Sprintf("/d/race%d", k), []byte(strconv.Itoa(v)), int32(v-1)); err != nil {
					return
				}
				acked[k] = v
			}
		}(k)
	}
	time.Sleep(300 * time.Millisecond)
	gone.dialer.drop(true /* block */)
	// w may reconnect only once the server is ready again: ZooKeeper binds
	// its port before it can answer, and go-zookeeper then waits 10 read
	// timeouts for a handshake reply that never comes.
	w.dialer.block()
	srv.Kill()
	close(stop)
	rwg.Wait()
	killedAt := time.Now()
	t.Logf("acknowledged racing writes before the kill: %v", acked)

	if err := srv.Restart(); err != nil {
		t.Fatalf("restart after kill -9: %v", err)
	}
	t.Logf("restarted %v after the kill", time.Since(killedAt))
	w.dialer.unblock()
	w.waitState(t, zk.StateHasSession, 20*time.Second)
	if w.SessionID() != wID {
		t.Fatalf("session after restart = %#x, want %#x (resumed)", w.SessionID(), wID)
	}

	after := snapshotStats(t, w, paths)
	for _, p := range paths {
		if before[p] != after[p] {
			t.Errorf("%s changed across kill -9:\n before %s\n after  %s", p, before[p], after[p])
		}
	}
	for k := 0; k < racers; k++ {
		p := fmt.Sprintf("/d/race%d", k)
		data, st, err := w.Get(p)
		if err != nil {
			t.Fatal(err)
		}
		v, _ := strconv.Atoi(string(data))
		// The write in flight at the kill may or may not have committed.
		if v < acked[k] || v > acked[k]+1 || int(st.Version) != v {
			t.Errorf("%s = %q version %d; last acknowledged %d", p, data, st.Version, acked[k])
		}
	}
	if acl, _, err := w.GetACL("/d"); err != nil || fmt.Sprint(acl) != fmt.Sprint(zk.WorldACL(zk.PermAll&^zk.PermDelete)) {
		t.Errorf("ACL of /d after restart = %v, %v", acl, err)
	}
	if st := mustStat(t, w, "/d/eph-w"); st.EphemeralOwner != wID {
		t.Errorf("resumed session's ephemeral owner = %#x, want %#x", st.EphemeralOwner, wID)
	}
	// Zxids keep growing across the restart.
	var maxZxid int64
	for _, p := range paths {
		if st := mustStat(t, w, p); st.Mzxid > maxZxid {
			maxZxid = st.Mzxid
		}
	}
	if st, err := w.Set("/d/race0", []byte("after"), -1); err != nil || st.Mzxid <= maxZxid {
		t.Errorf("first write after restart: mzxid %#x, want > %#x (%v)", st.Mzxid, maxZxid, err)
	}
	// Sequence numbers continue where they were.
	if got := mustCreate(t, w, "/d/g0/n-", nil, zk.FlagSequence); got != "/d/g0/n-0000000042" {
		t.Errorf("sequential create after restart = %s, want /d/g0/n-0000000042", got)
	}

	// The session that did not come back expires after its timeout.
	took := time.Since(killedAt)
	for {
		ok, _, err := w.Exists("/d/eph-gone")
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		if time.Since(killedAt) > 4*time.Second+2*tickTimeMs*time.Millisecond+10*time.Second {
			t.Fatalf("ephemeral of the absent session still there %v after the kill", time.Since(killedAt))
		}
		time.Sleep(100 * time.Millisecond)
		took = time.Since(killedAt)
	}
	t.Logf("absent session's ephemeral gone %v after the kill", took)
	if took < 2500*time.Millisecond {
		t.Errorf("absent session expired %v after the kill, well before its 4s timeout", took)
	}
	mustStat(t, w, "/d/eph-w")

	// A clean stop and start changes nothing either.
	final := snapshotStats(t, w, append(paths, "/d/eph-w"))
	w.dialer.block()
	if err := srv.Stop(); err != nil {
		t.Fatalf("SIGTERM: %v", err)
	}
	if err := srv.Restart(); err != nil {
		t.Fatalf("restart after SIGTERM: %v", err)
	}
	w.dialer.unblock()
	w.waitState(t, zk.StateHasSession, 20*time.Second)
	if w.SessionID() != wID {
		t.Fatalf("session after clean restart = %#x, want %#x", w.SessionID(), wID)
	}
	again := snapshotStats(t, w, append(paths, "/d/eph-w"))
	for p, s := range final {
		if again[p] != s {
			t.Errorf("%s changed across a clean restart:\n before %s\n after  %s", p, s, again[p])
		}
	}
}

// dumpZkTree renders every node under p (data and full Stat), depth first.
func dumpZkTree(t *testing.T, c *client, p string, out *strings.Builder) {
	t.Helper()
	data, st, err := c.Get(p)
	if err != nil {
		t.Fatalf("get %s: %v", p, err)
	}
	fmt.Fprintf(out, "%s %q %+v\n", p, data, *st)
	children, _, err := c.Children(p)
	if err != nil {
		t.Fatalf("children %s: %v", p, err)
	}
	for _, ch := range sorted(children) {
		if p == "/" {
			dumpZkTree(t, c, "/"+ch, out)
		} else {
			dumpZkTree(t, c, p+"/"+ch, out)
		}
	}
}

// snapshotTaken reports whether the server has written a snapshot of its
// own (beyond ZooKeeper's initial snapshot.0).
func snapshotTaken(s *Server) bool {
	switch s.Kind {
	case targetZookeeper:
		m, _ := filepath.Glob(filepath.Join(s.dataDir, "version-2", "snapshot.*"))
		for _, f := range m {
			if !strings.HasSuffix(f, "snapshot.0") {
				return true
			}
		}
	default:
		m, _ := filepath.Glob(filepath.Join(s.dataDir, "snapshots", "*", "state.bin"))
		return len(m) > 0
	}
	return false
}

// TestDurabilitySnapshot writes until the server snapshots, writes more on
// top, kills it with SIGKILL and requires the whole tree back exactly, so
// snapshot restore plus log replay reproduce every Stat (the ZOOKEEPER-3125
// family of pzxid/cversion drift) and session.
func TestDurabilitySnapshot(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: waits up to 90 s for a snapshot")
	}
	t.Parallel()
	srv := StartServer(t, ServerOptions{ZooCfg: []string{"snapCount=200"}})
	w := connect(t, srv, 20*time.Second)
	mustCreate(t, w, "/s", nil, 0)

	round := func(r int) {
		for i := 0; i < 60; i++ {
			parent := fmt.Sprintf("/s/r%d-%d", r, i%6)
			if i < 6 {
				mustCreate(t, w, parent, []byte("p"), 0)
			}
			p := mustCreate(t, w, parent+"/n-", []byte(strconv.Itoa(i)), zk.FlagSequence)
			switch i % 4 {
			case 0:
				if _, err := w.Set(p, []byte("set"), -1); err != nil {
					t.Fatal(err)
				}
			case 1:
				if err := w.Delete(p, -1); err != nil {
					t.Fatal(err)
				}
			case 2:
				if _, err := w.SetACL(p, zk.WorldACL(zk.PermRead|zk.PermWrite|zk.PermAdmin), -1); err != nil {
					t.Fatal(err)
				}
			}
		}
		mustCreate(t, w, fmt.Sprintf("/s/eph%d", r), nil, zk.FlagEphemeralSequential)
	}
	deadline := time.Now().Add(90 * time.Second)
	r := 0
	for !snapshotTaken(srv) {
		if time.Now().After(deadline) {
			t.Fatalf("no snapshot after %d rounds and 90 s", r)
		}
		if r < 8 {
			round(r)
			r++
		} else {
			time.Sleep(500 * time.Millisecond)
		}
	}
	t.Logf("snapshot taken after %d rounds", r)
	// Changes on top of the snapshot: new nodes, and changes to old ones.
	round(r)
	if err := w.Delete("/s/r0-0/n-0000000000", -1); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Set("/s/r0-1", []byte("after snapshot"), -1); err != nil {
		t.Fatal(err)
	}
	var before strings.Builder
	dumpZkTree(t, w, "/", &before)
	id := w.SessionID()

	w.dialer.block()
	srv.Kill()
	if err := srv.Restart(); err != nil {
		t.Fatalf("restart after kill -9: %v", err)
	}
	w.dialer.unblock()
	w.waitState(t, zk.StateHasSession, 20*time.Second)
	if w.SessionID() != id {
		t.Fatalf("session after restart = %#x, want %#x", w.SessionID(), id)
	}
	var after strings.Builder
	dumpZkTree(t, w, "/", &after)
	if before.String() != after.String() {
		b, a := strings.Split(before.String(), "\n"), strings.Split(after.String(), "\n")
		for i := 0; i < len(b) && i < len(a); i++ {
			if b[i] != a[i] {
				t.Fatalf("tree differs after restart, first at line %d:\n before %s\n after  %s", i, b[i], a[i])
			}
		}
		t.Fatalf("tree differs after restart: %d lines before, %d after", len(b), len(a))
	}
	got := mustCreate(t, w, "/s/r0-2/n-", nil, zk.FlagSequence)
	if want := "/s/r0-2/n-0000000010"; got != want {
		t.Errorf("sequential create after restart = %s, want %s", got, want)
	}
}
