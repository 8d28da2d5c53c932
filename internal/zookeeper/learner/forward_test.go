package learner

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/internal/testing/zktest"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// TestObserverForwardsRequests drives the learner's side of serving
// clients against a real ZooKeeper 3.8 ensemble: a session opened through
// the learner (an id with its server id on top, ZooKeeper's password for
// it) is one ZooKeeper knows; its writes, forwarded as REQUESTs, come back
// as the transactions applied here, failures as error transactions; the
// PING replies' touch table keeps it alive past its timeout, and without
// touches ZooKeeper expires it and its ephemeral; REVALIDATE answers
// whether a session a client brings from a ZooKeeper server is valid; a
// forwarded sync returns.
func TestObserverForwardsRequests(t *testing.T) {
	e := zktest.Start(t)
	lead := e.Leader()
	l := New(Config{ID: int64(e.ObserverID), Servers: e.QuorumAddrs(), SyncTimeout: 5 * time.Second})
	runLearner(t, l)
	caughtUp(t, e, lead, l)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	const timeout = 2000 // ms; ZooKeeper's minimum here is 2 ticks (1s)
	id, passwd, err := l.CreateSession(ctx, timeout)
	if err != nil {
		t.Fatal(err)
	}
	if id>>56 != int64(e.ObserverID) || len(passwd) != 16 {
		t.Fatalf("session %#x, password %x", id, passwd)
	}
	l.Read(func(tree *znode.Tree) {
		if s, ok := tree.Session(id); !ok || s.Timeout != timeout {
			t.Errorf("session %#x in the tree: %+v %v", id, s, ok)
		}
	})
	sameSessions(t, e, lead, l)

	create := func(cxid int32, path string, flags int32) Outcome {
		t.Helper()
		req := jute.Marshal(&jute.CreateRequest{Path: path, Data: []byte("fwd"), Flags: flags,
			ACL: []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "world", ID: "anyone"}}}})
		out, err := l.Submit(ctx, id, cxid, jute.OpCreate, req, nil)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	out := create(1, "/fwd", 0)
	if out.Err != jute.OK || len(out.Results) != 1 || out.Results[0].Err != jute.OK || out.Txn.Zxid != l.Status().LastZxid {
		t.Fatalf("forwarded create: %+v", out)
	}
	if out = create(2, "/fwd", 0); out.Err != jute.ErrNodeExists {
		t.Fatalf("forwarded create of an existing node: %v, want NodeExists", out.Err)
	}
	if out = create(3, "/fwd/eph", jute.FlagEphemeral); out.Err != jute.OK {
		t.Fatalf("forwarded ephemeral create: %v", out.Err)
	}
	c := connect(t, lead.ClientAddr)
	if _, st, err := c.Get("/fwd/eph"); err != nil || st.EphemeralOwner != id {
		t.Fatalf("ZooKeeper's /fwd/eph: %+v %v, want owner %#x", st, err, id)
	}
	if err := l.Sync(ctx, id, 4, "/fwd"); err != nil {
		t.Fatal(err)
	}

	// Touched on every PING reply, the session outlives its timeout.
	stopTouching := make(chan struct{})
	go func() {
		for {
			select {
			case <-stopTouching:
				return
			case <-time.After(200 * time.Millisecond):
				l.Touch(id, timeout)
			}
		}
	}()
	time.Sleep(3 * timeout * time.Millisecond)
	if _, _, err := c.Get("/fwd/eph"); err != nil {
		t.Fatalf("a touched session lost its ephemeral: %v", err)
	}
	if ok, err := l.Revalidate(ctx, id, timeout); err != nil || !ok {
		t.Fatalf("revalidate the learner's session: %v %v", ok, err)
	}
	if ok, err := l.Revalidate(ctx, c.SessionID(), 10000); err != nil || !ok {
		t.Fatalf("revalidate a ZooKeeper client's session: %v %v", ok, err)
	}
	if ok, err := l.Revalidate(ctx, 0x7eadbeef, 10000); err != nil || ok {
		t.Fatalf("revalidate an unknown session: %v %v, want invalid", ok, err)
	}
	// Untouched, ZooKeeper expires it, and the learner applies that.
	close(stopTouching)
	if _, err := l.WaitFor(ctx, func(Status) bool {
		gone := false
		l.Read(func(tree *znode.Tree) {
			_, ok := tree.Session(id)
			_, _, err := tree.GetData("/fwd/eph", superIds)
			gone = !ok && errors.Is(err, jute.ErrNoNode)
		})
		return gone
	}); err != nil {
		t.Fatalf("the untouched session did not expire: %v", err)
	}
	// c's server may be a follower a commit behind the observer.
	if _, err := c.Sync("/fwd"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Get("/fwd/eph"); !errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("ZooKeeper's /fwd/eph after expiry: %v", err)
	}
	caughtUp(t, e, lead, l)
	sameTree(t, c, l)
}

// TestObserverFollowsReconfig: with reconfigEnabled, a reconfig that adds
// a server reaches observers as INFORMANDACTIVATE (the suggested leader's
// id before the transaction); the learner applies it: /zookeeper/config
// holds ZooKeeper's new configuration with ZooKeeper's Stat, and the
// tree's digest still matches the leader's after it and after the writes
// that follow.
func TestObserverFollowsReconfig(t *testing.T) {
	e := zktest.StartWith(t, []string{"reconfigEnabled=true", "skipACL=yes"})
	lead := e.Leader()
	l := New(Config{ID: int64(e.ObserverID), Servers: e.QuorumAddrs(), SyncTimeout: 5 * time.Second, CheckDigests: true})
	runLearner(t, l)
	caughtUp(t, e, lead, l)
	c := connect(t, lead.ClientAddr)
	skipped := l.Status()
	if _, err := c.IncrementalReconfig([]string{"server.7=127.0.0.1:21001:21002:observer;127.0.0.1:21003"}, nil, -1); err != nil {
		t.Fatal(err)
	}
	workload(t, c, 1)
	st := caughtUp(t, e, lead, l)
	if st.Syncs != skipped.Syncs || st.Applied <= skipped.Applied {
		t.Errorf("after the reconfig: %+v (before: %+v), want the same connection, applying", st, skipped)
	}
	sameTree(t, c, l)
	sameConfig(t, c, l)
}

// sameConfig compares /zookeeper/config (data and Stat) on ZooKeeper,
// read through c, with the learner's.
func sameConfig(t *testing.T, c *zk.Conn, l *Learner) {
	t.Helper()
	want, st, err := c.Get(znode.ConfigPath)
	if err != nil {
		t.Fatal(err)
	}
	wst := jute.Stat{Czxid: st.Czxid, Mzxid: st.Mzxid, Ctime: st.Ctime, Mtime: st.Mtime, Version: st.Version,
		Cversion: st.Cversion, Aversion: st.Aversion, EphemeralOwner: st.EphemeralOwner, DataLength: st.DataLength,
		NumChildren: st.NumChildren, Pzxid: st.Pzxid}
	var got []byte
	var gst jute.Stat
	l.Read(func(tree *znode.Tree) { got, gst, err = tree.GetData(znode.ConfigPath, superIds) })
	if err != nil || string(got) != string(want) || gst != wst {
		t.Errorf("/zookeeper/config here %q %+v %v,\nZooKeeper's %q %+v", got, gst, err, want, wst)
	}
}
