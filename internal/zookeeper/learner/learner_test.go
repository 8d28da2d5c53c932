package learner

import (
	"bytes"
	"context"
	"fmt"
	"path"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/zap/zaptest"

	"github.com/zkraft/zkraft/internal/testing/zktest"
	"github.com/zkraft/zkraft/internal/zookeeper/importer"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// superIds read every node of the followed tree.
var superIds = []jute.Id{{Scheme: "super", ID: "test"}}

// connect opens a go-zookeeper session on addr.
func connect(t *testing.T, addr string) *zk.Conn {
	t.Helper()
	c, _, err := zk.Connect([]string{addr}, 10*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	for i := 0; c.State() != zk.StateHasSession; i++ {
		if i > 200 {
			t.Fatalf("no session on %s", addr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return c
}

// workload makes changes of every kind under /w<round>: persistent,
// sequential, ephemeral and container creates, setData, setACL, deletes,
// and a multi.
func workload(t *testing.T, c *zk.Conn, round int) {
	t.Helper()
	open := zk.WorldACL(zk.PermAll)
	base := fmt.Sprintf("/w%d", round)
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(c.Create(base, []byte("base"), 0, open))
	for i := range 5 {
		must(c.Create(fmt.Sprintf("%s/n%d", base, i), []byte(fmt.Sprint(i)), 0, open))
		must(c.Create(base+"/seq-", nil, zk.FlagSequence, open))
	}
	must(c.Create(base+"/eph", []byte("e"), zk.FlagEphemeral, open))
	must(c.CreateContainer(base+"/box", []byte("c"), zk.FlagContainer, open))
	must(c.Create(base+"/box/in", nil, 0, open))
	must(c.Set(base+"/n1", []byte("changed"), -1))
	must(c.Set(base+"/n1", []byte("again"), 1))
	must(c.SetACL(base+"/n2", zk.WorldACL(zk.PermRead|zk.PermAdmin), -1))
	if err := c.Delete(base+"/n3", -1); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Multi(
		&zk.CreateRequest{Path: base + "/m", Data: []byte("m"), Acl: open},
		&zk.SetDataRequest{Path: base, Data: []byte("multi"), Version: -1},
		&zk.DeleteRequest{Path: base + "/n4", Version: -1},
	); err != nil {
		t.Fatal(err)
	}
	// A failed multi and a failed write log error transactions.
	if _, err := c.Multi(&zk.CreateRequest{Path: base + "/x", Acl: open}, &zk.DeleteRequest{Path: base + "/none", Version: -1}); err == nil {
		t.Fatal("the failing multi succeeded")
	}
}

// sameTree compares every node ZooKeeper serves on c (which must read
// from the leader, or after a sync) with the learner's tree: data, every
// Stat field, children and ACL. /zookeeper/config is left out: each
// server writes its own configuration there at its own time.
func sameTree(t *testing.T, c *zk.Conn, l *Learner) {
	t.Helper()
	var diffs []string
	var walk func(p string)
	count := 0
	walk = func(p string) {
		if p == "/zookeeper/config" {
			return
		}
		count++
		data, st, err := c.Get(p)
		if err != nil {
			t.Fatalf("ZooKeeper get %s: %v", p, err)
		}
		kids, _, err := c.Children(p)
		if err != nil {
			t.Fatalf("ZooKeeper children %s: %v", p, err)
		}
		acl, _, err := c.GetACL(p)
		if err != nil {
			t.Fatalf("ZooKeeper getACL %s: %v", p, err)
		}
		want := jute.Stat{Czxid: st.Czxid, Mzxid: st.Mzxid, Ctime: st.Ctime, Mtime: st.Mtime, Version: st.Version,
			Cversion: st.Cversion, Aversion: st.Aversion, EphemeralOwner: st.EphemeralOwner, DataLength: st.DataLength,
			NumChildren: st.NumChildren, Pzxid: st.Pzxid}
		l.Read(func(tree *znode.Tree) {
			gd, gst, err := tree.GetData(p, superIds)
			if err != nil {
				diffs = append(diffs, fmt.Sprintf("%s: %v", p, err))
				return
			}
			if !bytes.Equal(gd, data) {
				diffs = append(diffs, fmt.Sprintf("%s: data %q, ZooKeeper %q", p, gd, data))
			}
			if gst != want {
				diffs = append(diffs, fmt.Sprintf("%s: stat\n  %+v\n  ZooKeeper %+v", p, gst, want))
			}
			gk, _, _ := tree.GetChildren(p, superIds)
			if !slices.Equal(gk, slices.Sorted(slices.Values(kids))) {
				diffs = append(diffs, fmt.Sprintf("%s: children %v, ZooKeeper %v", p, gk, kids))
			}
			ga, _ := tree.NodeACL(p)
			var wa []jute.ACL
			for _, a := range acl {
				wa = append(wa, jute.ACL{Perms: a.Perms, ID: jute.Id{Scheme: a.Scheme, ID: a.ID}})
			}
			if !reflect.DeepEqual(ga, wa) {
				diffs = append(diffs, fmt.Sprintf("%s: acl %v, ZooKeeper %v", p, ga, wa))
			}
		})
		for _, k := range kids {
			walk(path.Join(p, k))
		}
	}
	walk("/")
	if len(diffs) > 0 {
		t.Fatalf("%d of %d nodes differ from ZooKeeper's:\n%v", len(diffs), count, diffs)
	}
	t.Logf("%d nodes equal ZooKeeper's", count)
}

// sameSessions compares the sessions the ZooKeeper leader tracks (its
// dump) with the learner's: the same ids, each with ZooKeeper's password.
func sameSessions(t *testing.T, e *zktest.Ensemble, lead *zktest.Server, l *Learner) {
	t.Helper()
	var want []int64
	for id := range e.Sessions(lead) {
		want = append(want, id)
	}
	var got []int64
	l.Read(func(tree *znode.Tree) {
		for _, s := range tree.Sessions() {
			got = append(got, s.ID)
			if !bytes.Equal(s.Passwd, importer.Passwd(s.ID)) {
				t.Errorf("session %#x: password differs from ZooKeeper's", s.ID)
			}
		}
	})
	slices.Sort(want)
	slices.Sort(got)
	if len(want) == 0 || !slices.Equal(got, want) {
		t.Fatalf("sessions %x, ZooKeeper's leader tracks %x", got, want)
	}
}

// caughtUp waits until l holds the leader's last zxid.
func caughtUp(t *testing.T, e *zktest.Ensemble, lead *zktest.Server, l *Learner) Status {
	t.Helper()
	want := e.LastZxid(lead)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := l.WaitFor(ctx, func(s Status) bool { return s.Synced && s.LastZxid >= want })
	if err != nil {
		t.Fatalf("learner at %+v, leader at %#x: %v", st, want, err)
	}
	if st.DigestMismatches > 0 {
		t.Errorf("%d of %d transactions' digests differ from the leader's", st.DigestMismatches, st.DigestsChecked)
	}
	return st
}

// runLearner runs l until t ends or stop is called.
func runLearner(t *testing.T, l *Learner) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = l.Run(ctx); close(done) }()
	stop = func() { cancel(); <-done }
	t.Cleanup(stop)
	return stop
}

// TestObserverFollowsZooKeeper: a learner joins a running three-server
// ZooKeeper 3.8 ensemble as its observer and holds the very tree
// ZooKeeper serves (data, every Stat field, children, ACLs) after a SNAP
// sync, while following live writes, after a DIFF sync on reconnecting
// with its state, and after the ZooKeeper leader is killed and another
// elected.
func TestObserverFollowsZooKeeper(t *testing.T) {
	// A new learner (zxid 0) gets a SNAP: the leader's logs begin at its
	// first epoch's first zxid, so it finds no DIFF from 0. Without a
	// txn log sync it does not even look.
	e := zktest.Start(t, "-Dzookeeper.snapshotSizeFactor=-1")
	lead := e.Leader()
	c := connect(t, lead.ClientAddr)
	workload(t, c, 1)

	l := New(Config{ID: int64(e.ObserverID), Servers: e.QuorumAddrs(), SyncTimeout: 5 * time.Second, Logger: zaptest.NewLogger(t),
		CheckDigests: true})
	stop := runLearner(t, l)
	parent := t
	st := caughtUp(t, e, lead, l)
	if st.LastSync != SyncSnap {
		t.Errorf("first sync %s, want SNAP", st.LastSync)
	}
	sameTree(t, c, l)
	sameSessions(t, e, lead, l)

	t.Run("live", func(t *testing.T) {
		workload(t, c, 2)
		st := caughtUp(t, e, lead, l)
		if st.DigestsChecked == 0 {
			t.Error("no streamed transaction carried a digest to check")
		}
		t.Logf("the tree's digest equalled the leader's after each of %d transactions", st.DigestsChecked)
		sameTree(t, c, l)
		sameSessions(t, e, lead, l)
	})

	t.Run("diff", func(t *testing.T) {
		stop()
		workload(t, c, 3)
		syncs := l.Status().Syncs
		stop = runLearner(parent, l)
		st := caughtUp(t, e, lead, l)
		if st.LastSync != SyncDiff || st.Syncs != syncs+1 {
			t.Errorf("sync after reconnecting %s (%d syncs), want DIFF", st.LastSync, st.Syncs)
		}
		sameTree(t, c, l)
		sameSessions(t, e, lead, l)
	})

	// A leader whose address the configured servers lack (a reconfig
	// added it) is found among the voters of the configuration the
	// followed tree holds, as a ZooKeeper observer looks for it.
	t.Run("leader only in the followed configuration", func(t *testing.T) {
		stop()
		configured := l.cfg.Servers
		l.cfg.Servers = nil
		for _, s := range e.Servers {
			if s != lead {
				l.cfg.Servers = append(l.cfg.Servers, s.QuorumAddr)
			}
		}
		workload(t, c, 6)
		stop = runLearner(parent, l)
		st := caughtUp(t, e, lead, l)
		if st.Leader != lead.QuorumAddr {
			t.Errorf("following %s, want the leader %s", st.Leader, lead.QuorumAddr)
		}
		stop()
		l.cfg.Servers = configured
		stop = runLearner(parent, l)
	})

	// A learner restarted from the state its predecessor saved syncs by
	// DIFF, as a ZooKeeper observer restarted on its data directory.
	t.Run("restart from saved state", func(t *testing.T) {
		stop()
		var saved bytes.Buffer
		if err := l.SaveState(&saved); err != nil {
			t.Fatal(err)
		}
		workload(t, c, 5)
		var err error
		l, err = Resume(l.cfg, &saved)
		if err != nil {
			t.Fatal(err)
		}
		stop = runLearner(parent, l)
		st := caughtUp(t, e, lead, l)
		if st.LastSync != SyncDiff || st.Syncs != 1 {
			t.Errorf("sync after a restart from saved state %s (%d syncs), want DIFF", st.LastSync, st.Syncs)
		}
		sameTree(t, c, l)
		sameSessions(t, e, lead, l)
	})

	t.Run("leader change", func(t *testing.T) {
		syncs := l.Status().Syncs
		c.Close()
		e.Kill(lead)
		lead = e.Leader()
		c = connect(parent, lead.ClientAddr)
		workload(t, c, 4)
		st := caughtUp(t, e, lead, l)
		if st.Syncs <= syncs || st.Leader != lead.QuorumAddr {
			t.Errorf("after the leader change: %+v, want a new sync with %s", st, lead.QuorumAddr)
		}
		t.Logf("resynced with the new leader by %s", st.LastSync)
		sameTree(t, c, l)
		sameSessions(t, e, lead, l)
	})

	// A second observer, whose id no server's configuration lists (the
	// leader logs it and serves it all the same), joins while a client
	// writes: its snapshot is taken as the leader applies writes, and the
	// writes queued after it may already be in it.
	t.Run("unlisted observer during writes", func(t *testing.T) {
		w := connect(t, lead.ClientAddr)
		if _, err := w.Create("/busy", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
		stopWriter, writerDone := make(chan struct{}), make(chan error, 1)
		go func() {
			for i := 0; ; i++ {
				select {
				case <-stopWriter:
					writerDone <- nil
					return
				default:
				}
				if _, err := w.Create("/busy/n-", []byte(fmt.Sprint(i)), zk.FlagSequence, zk.WorldACL(zk.PermAll)); err != nil {
					writerDone <- err
					return
				}
				if _, err := w.Set("/busy", []byte(fmt.Sprint(i)), -1); err != nil {
					writerDone <- err
					return
				}
				if i%3 == 0 {
					if err := w.Delete(fmt.Sprintf("/busy/n-%010d", i), -1); err != nil {
						writerDone <- err
						return
					}
				}
			}
		}()
		time.Sleep(200 * time.Millisecond)
		l2 := New(Config{ID: 9, Servers: e.QuorumAddrs(), SyncTimeout: 5 * time.Second, CheckDigests: true,
			Logger: zaptest.NewLogger(t)})
		runLearner(parent, l2)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := l2.WaitFor(ctx, func(s Status) bool { return s.Synced }); err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond)
		close(stopWriter)
		if err := <-writerDone; err != nil {
			t.Fatal(err)
		}
		st := caughtUp(t, e, lead, l2)
		t.Logf("synced by %s while the writer wrote", st.LastSync)
		sameTree(t, c, l2)
		sameSessions(t, e, lead, l2)
		caughtUp(t, e, lead, l)
		sameTree(t, c, l)
		sameSessions(t, e, lead, l)
	})
}
