package znode

import (
	"bytes"
	"math/rand"
	"reflect"
	"strconv"
	"testing"

	"github.com/zkraft/zkraft/jute"
)

// randomTxn builds a random write over a small path space so that
// successes and every kind of failure are frequent.
func randomTxn(rng *rand.Rand, now int64) *Txn {
	paths := []string{"/a", "/a/b", "/a/b/c", "/b", "/c", "/a/e", "/zookeeper/quota/a", "/zookeeper/quota/a/" + QuotaLimitNode, "/zookeeper/quota/a/" + QuotaStatNode}
	path := paths[rng.Intn(len(paths))]
	sess := int64(1 + rng.Intn(3))
	ids := []jute.Id{{Scheme: "ip", ID: "10.0.0." + strconv.Itoa(rng.Intn(2))}}
	acls := [][]jute.ACL{openACL, world(jute.PermRead | jute.PermCreate), {{Perms: 31, ID: jute.Id{Scheme: "ip", ID: "10.0.0.1"}}}}
	data := []byte(nil)
	if rng.Intn(2) == 0 {
		data = make([]byte, rng.Intn(5))
	}
	create := func() *jute.CreateRequest {
		return &jute.CreateRequest{Path: path, Data: data, ACL: acls[rng.Intn(len(acls))], Flags: int32(rng.Intn(7)), TTL: int64(rng.Intn(3) * 50), HasTTL: true}
	}
	op := func() jute.MultiOp {
		switch rng.Intn(4) {
		case 0:
			return jute.MultiOp{Type: jute.OpCreateTTL, Req: create()}
		case 1:
			return jute.MultiOp{Type: jute.OpDelete, Req: &jute.PathVersionRequest{Path: path, Version: int32(rng.Intn(3) - 1)}}
		case 2:
			return jute.MultiOp{Type: jute.OpSetData, Req: &jute.SetDataRequest{Path: path, Data: data, Version: -1}}
		}
		c := create()
		c.HasTTL = false
		return jute.MultiOp{Type: jute.OpCreate, Req: c}
	}
	txn := &Txn{Session: sess, Time: now, Ids: ids}
	switch rng.Intn(10) {
	case 0:
		txn.Type, txn.Timeout = jute.OpCreateSession, 1000
	case 1:
		txn.Type = jute.OpCloseSession
	case 2:
		txn.Type, txn.Session = jute.OpDeleteContainer, 0
		txn.Req = jute.Marshal(&jute.PathRequest{Path: path})
	case 3:
		txn.Type = jute.OpSetACL
		txn.Req = jute.Marshal(&jute.SetACLRequest{Path: path, ACL: acls[rng.Intn(len(acls))], Version: -1})
	case 4, 5:
		var m jute.MultiRequest
		for i := rng.Intn(4); i >= 0; i-- {
			m.Ops = append(m.Ops, op())
		}
		txn.Type, txn.Req = jute.OpMulti, jute.Marshal(&m)
	default:
		o := op()
		txn.Type, txn.Req = o.Type, jute.Marshal(o.Req)
	}
	return txn
}

// TestRandomDeterminismAndSnapshots applies random writes to a tree and, in
// parallel, to a tree restored from snapshots taken along the way: both must
// stay identical, results included, and internal counters must match a
// recomputation.
func TestRandomDeterminismAndSnapshots(t *testing.T) {
	for seed := int64(1); seed <= 20; seed++ {
		rng := rand.New(rand.NewSource(seed))
		opts := Options{ExtendedTypes: seed%2 == 0, EnforceQuota: seed%3 == 0}
		a, b := NewTree(opts), NewTree(opts)
		for i := 1; i <= 400; i++ {
			txn := randomTxn(rng, int64(i*10))
			ra, rb := a.Apply(txn, int64(i)), b.Apply(txn, int64(i))
			if !reflect.DeepEqual(ra, rb) {
				t.Fatalf("seed %d step %d: results differ %+v %+v", seed, i, ra, rb)
			}
			if i%37 == 0 {
				var buf bytes.Buffer
				if err := b.WriteSnapshot(&buf); err != nil {
					t.Fatal(err)
				}
				nb, err := ReadSnapshot(&buf, opts)
				if err != nil {
					t.Fatalf("seed %d step %d: %v", seed, i, err)
				}
				b = nb
				if i%74 == 0 {
					b = b.Clone()
				}
			}
			if i%50 == 0 {
				checkInvariants(t, a)
				if !reflect.DeepEqual(treeDump(t, a), treeDump(t, b)) {
					t.Fatalf("seed %d step %d: trees differ", seed, i)
				}
			}
		}
	}
}

// checkInvariants recomputes the derived state of a tree.
func checkInvariants(t *testing.T, tr *Tree) {
	t.Helper()
	var size int64
	eph := 0
	refs := map[string]int{}
	all := allNodes(tr)
	for p, n := range all {
		size += int64(len(p) + len(n.data))
		refs[ACLKey(tr.aclOf(n))]++
		if n.kind() == kindEphemeral {
			eph++
			if s := tr.sessions[n.owner]; s == nil {
				t.Fatalf("ephemeral %s of dead session", p)
			} else if s.ephemerals == nil || !s.ephemerals.has(p) {
				t.Fatalf("ephemeral %s not indexed", p)
			}
		}
		_, indexed := tr.reapable[p]
		if indexed != (n.kind() == kindContainer || n.kind() == kindTTL) {
			t.Fatalf("reaper index wrong for %s", p)
		}
		if p != RootPath {
			parent, name, _ := splitPath(p)
			if tr.lookup(parent).child(name) != n {
				t.Fatalf("%s missing from its parent", p)
			}
		}
		if kids := n.children(); kids != nil {
			checkChildSet(t, kids)
		}
	}
	if size != tr.dataSize || eph != tr.nEphem || len(all) != tr.count {
		t.Fatalf("counters: size %d/%d ephemerals %d/%d nodes %d/%d", size, tr.dataSize, eph, tr.nEphem, len(all), tr.count)
	}
	for k, r := range tr.acls.slots {
		if e := tr.acls.lists[r]; refs[k] != e.refs || e.key != k {
			t.Fatalf("acl refs %d want %d", e.refs, refs[k])
		}
	}
	for p, e := range tr.parents {
		if n := all[p]; n == nil || n.ext != e || tr.walk(p) != n || n.numChildren() <= smallChildren/2 {
			t.Fatalf("parents index: %s", p)
		}
	}
	for p, n := range all {
		if _, ok := tr.parents[p]; !ok && n.numChildren() > smallChildren && p != RootPath {
			t.Fatalf("%s with %d children not in the parents index", p, n.numChildren())
		}
	}
	if len(refs) != tr.acls.len() {
		t.Fatalf("acl cache has %d lists, nodes use %d", tr.acls.len(), len(refs))
	}
}
