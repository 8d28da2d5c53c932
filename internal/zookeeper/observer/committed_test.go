package observer

import (
	"testing"

	"github.com/zkraft/zkraft/internal/testing/zkleader"
	"github.com/zkraft/zkraft/internal/zookeeper/learner"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// The tests here check that what ZooKeeper's leader commits applies on an
// observer whatever the observer's own settings, which decide only its
// reads and, after the cutover, what its clients may ask for.

// otherServer is a session of a ZooKeeper server's client.
const otherServer = int64(1)<<56 | 7

// storedOwner is path's EphemeralOwner as ZooKeeper stores it (a TTL
// node's 0xFF top byte and TTL), from the followed tree.
func (fx *fixture) storedOwner(path string) (owner int64, found bool) {
	fx.read(func(t *znode.Tree) {
		t.Export(func(n znode.StoredNode) {
			if n.Path == path {
				owner, found = n.Stat.EphemeralOwner, true
			}
		})
	})
	return owner, found
}

// wantChildren checks path's child count, client cversion and pzxid.
func (fx *fixture) wantChildren(path string, num, cversion int32, pzxid int64) {
	fx.t.Helper()
	_, st, err := fx.data(path)
	if err != nil || st.NumChildren != num || st.Cversion != cversion || st.Pzxid != pzxid {
		fx.t.Errorf("%s: %+v %v; want numChildren %d, cversion %d, pzxid %#x", path, st, err, num, cversion, pzxid)
	}
}

// TestCommittedTTLCreateAppliedWithoutExtendedTypes: an observer started
// without extendedTypesEnabled applies the TTL create ZooKeeper's leader
// committed (issue #38): the node is there, a TTL node (stored owner
// 0xFF<<56|ttl, 0 as clients see it, as ZooKeeper shows it), its parent's
// numChildren, cversion and pzxid count it, and the leader's later
// deleteContainer of it once expired applies too. Before, the create
// failed here as Unimplemented: the tree lacked the node at the same zxid.
func TestCommittedTTLCreateAppliedWithoutExtendedTypes(t *testing.T) {
	fx := start(t) // Options zero: no extended types
	const ttl = 60_000
	created := fx.c.Commit(zkleader.Txn{Session: otherServer, Cxid: 1, Type: jute.OpCreateTTL,
		Record: zkleader.CreateTTLTxn("/app/ttl", []byte("t"), 2, ttl)})
	fx.applied(created.Zxid)
	data, st, err := fx.data("/app/ttl")
	if err != nil || string(data) != "t" || st.Czxid != created.Zxid || st.EphemeralOwner != 0 {
		t.Fatalf("/app/ttl: %q %+v %v; want the TTL node created at %#x", data, st, err, created.Zxid)
	}
	if owner, _ := fx.storedOwner("/app/ttl"); owner != int64(-1)<<56|ttl {
		t.Errorf("/app/ttl stored owner %#x, want a TTL node's %#x", owner, int64(-1)<<56|ttl)
	}
	fx.wantChildren("/app", 2, 2, created.Zxid)
	if st := fx.b.Learner().Status(); st.NotApplied != 0 {
		t.Errorf("status: %d changes not applied", st.NotApplied)
	}

	// ZooKeeper's reaper deletes it once expired.
	reaped := fx.c.Commit(zkleader.Txn{Type: jute.OpDeleteContainer, Time: created.Time + 2*ttl,
		Record: zkleader.DeleteTxn("/app/ttl")})
	fx.applied(reaped.Zxid)
	if _, _, err := fx.data("/app/ttl"); err != jute.ErrNoNode {
		t.Errorf("/app/ttl after ZooKeeper reaped it: %v, want NoNode", err)
	}
	fx.wantChildren("/app", 1, 3, reaped.Zxid)
}

// TestOwnClientTTLCreateGetsZooKeepersAnswer: a TTL create from the
// observer's own client goes to ZooKeeper's leader whatever the
// observer's extendedTypesEnabled, as ZooKeeper's ObserverRequestProcessor
// forwards it unchecked (the leader's PrepRequestProcessor decides): the
// client gets the leader's answer, the created node's path and Stat when
// the leader committed it (before: Unimplemented, though ZooKeeper had
// committed it), Unimplemented when the leader refused it.
func TestOwnClientTTLCreateGetsZooKeepersAnswer(t *testing.T) {
	fx := start(t)
	const ttl = 5_000
	w := newWaiter(sessionA)
	fx.b.Propose(write(sessionA, jute.OpCreateTTL, &jute.CreateRequest{Path: "/app/t", Data: []byte("x"), ACL: openACL,
		Flags: jute.FlagPersistentTTL, HasTTL: true, TTL: ttl}), w)
	f := fx.c.ExpectRequest()
	if f.Type != jute.OpCreateTTL {
		t.Fatalf("forwarded a %v, want the createTTL", f.Type)
	}
	created := fx.c.Answer(f, jute.OpCreateTTL, zkleader.CreateTTLTxn("/app/t", []byte("x"), 2, ttl))
	o := w.outcome(t)
	if o.err != nil || o.res.Err != jute.OK {
		t.Fatalf("createTTL the leader committed: %+v %v, want OK", o.res, o.err)
	}
	resp, ok := o.res.Resp.(*jute.Create2Response)
	if !ok || resp.Path != "/app/t" || resp.Stat.Czxid != created.Zxid {
		t.Errorf("createTTL's reply %#v, want /app/t created at %#x", o.res.Resp, created.Zxid)
	}
	fx.wantChildren("/app", 2, 2, created.Zxid)

	// A leader without extended types refuses it.
	w = newWaiter(sessionA)
	fx.b.Propose(write(sessionA, jute.OpCreateTTL, &jute.CreateRequest{Path: "/app/u", ACL: openACL,
		Flags: jute.FlagPersistentTTL, HasTTL: true, TTL: ttl}), w)
	f = fx.c.ExpectRequest()
	fx.c.Answer(f, jute.OpError, zkleader.ErrorTxn(jute.ErrUnimplemented))
	if o := w.outcome(t); o.err != nil || o.res.Err != jute.ErrUnimplemented {
		t.Errorf("createTTL the leader refused: %+v %v, want Unimplemented", o.res, o.err)
	}
}

// TestCommittedWritesIgnoreOwnQuota: an observer started with
// enforceQuota applies a create and a setData ZooKeeper's leader
// committed past a hard quota (ZooKeeper's leader enforces quotas, or
// does not, when it prepares a request; a committed transaction is never
// re-checked), and a container create; its parent's counters count them.
func TestCommittedWritesIgnoreOwnQuota(t *testing.T) {
	fx := start(t, func(c *learner.Config) { c.Options.EnforceQuota = true })
	quota := []zkleader.Txn{
		{Type: jute.OpCreate, Record: zkleader.CreateTxn("/zookeeper/quota/app", nil, false)},
		{Type: jute.OpCreate, Record: zkleader.CreateTxn("/zookeeper/quota/app/zookeeper_limits", []byte("count=-1,bytes=-1,countHardLimit=2,byteHardLimit=3"), false)},
		{Type: jute.OpCreate, Record: zkleader.CreateTxn("/zookeeper/quota/app/zookeeper_stats", []byte("count=2,bytes=3"), false)},
	}
	for _, q := range quota {
		q.Session = otherServer
		fx.c.Commit(q)
	}
	created := fx.c.Commit(zkleader.Txn{Session: otherServer, Type: jute.OpCreate, Record: zkleader.CreateTxn("/app/b", []byte("b"), false)})
	set := fx.c.Commit(zkleader.Txn{Session: otherServer, Type: jute.OpSetData, Record: zkleader.SetDataTxn("/app/a", []byte("longer"), 1)})
	box := fx.c.Commit(zkleader.Txn{Session: otherServer, Type: jute.OpCreateContainer, Record: zkleader.CreateContainerTxn("/app/box", nil, 3)})
	fx.applied(box.Zxid)
	if data, st, err := fx.data("/app/a"); err != nil || string(data) != "longer" || st.Mzxid != set.Zxid {
		t.Errorf("/app/a: %q %+v %v; want the setData past the byte limit applied", data, st, err)
	}
	if _, st, err := fx.data("/app/b"); err != nil || st.Czxid != created.Zxid {
		t.Errorf("/app/b: %+v %v; want the create past the count limit applied", st, err)
	}
	if _, st, err := fx.data("/app/box"); err != nil || st.Czxid != box.Zxid {
		t.Errorf("/app/box: %+v %v; want the container", st, err)
	}
	fx.wantChildren("/app", 3, 3, box.Zxid)
	if st := fx.b.Learner().Status(); st.NotApplied != 0 {
		t.Errorf("status: %d changes not applied", st.NotApplied)
	}
}
