package znode

import (
	"bytes"
	"fmt"
	"math/rand"
	"reflect"
	"testing"

	"github.com/zkraft/zkraft/jute"
)

// bigParentTxn creates or deletes a child of /big, so a view also meets
// child sets held as tables and sets sorted outside the lock.
func bigParentTxn(rng *rand.Rand, now int64) *Txn {
	path := fmt.Sprintf("/big/n%04d", rng.Intn(1500))
	if rng.Intn(3) == 0 {
		return &Txn{Type: jute.OpDelete, Session: 1, Time: now, Req: jute.Marshal(&jute.PathVersionRequest{Path: path, Version: -1})}
	}
	return &Txn{Type: jute.OpCreate, Session: 1, Time: now, Req: jute.Marshal(&jute.CreateRequest{Path: path, Data: []byte("v"), ACL: openACL})}
}

// TestSnapshotViewUnderWrites opens a view at random points of a random
// write history, writes it in chunks of a few nodes while more random
// writes (every kind: multis that roll back, deletes, ACL changes, session
// closes, quotas, a parent of over a thousand children) are applied
// between the chunks, and requires the bytes of WriteSnapshot at the
// moment the view began. A twin tree that never had a view must stay
// identical, results included: keeping pre-images changes nothing else.
func TestSnapshotViewUnderWrites(t *testing.T) {
	for seed := int64(1); seed <= 12; seed++ {
		rng := rand.New(rand.NewSource(seed))
		opts := Options{ExtendedTypes: true, EnforceQuota: seed%3 == 0}
		a, b := NewTree(opts), NewTree(opts)
		zxid := int64(0)
		step := func() {
			zxid++
			var txn *Txn
			if rng.Intn(3) == 0 {
				txn = bigParentTxn(rng, zxid*10)
			} else {
				txn = randomTxn(rng, zxid*10)
			}
			if ra, rb := a.Apply(txn, zxid), b.Apply(txn, zxid); !reflect.DeepEqual(ra, rb) {
				t.Fatalf("seed %d zxid %d: results differ with a view open: %+v %+v", seed, zxid, ra, rb)
			}
		}
		for _, tr := range []*Tree{a, b} {
			tr.Apply(&Txn{Type: jute.OpCreateSession, Session: 1, Timeout: 30000, Passwd: make([]byte, 16)}, 0)
			tr.Apply(&Txn{Type: jute.OpCreate, Session: 1, Req: jute.Marshal(&jute.CreateRequest{Path: "/big", ACL: openACL})}, 0)
		}
		for round := 0; round < 6; round++ {
			for range 300 + rng.Intn(600) {
				step()
			}
			var want bytes.Buffer
			if err := a.WriteSnapshot(&want); err != nil {
				t.Fatal(err)
			}
			v, err := a.BeginSnapshot()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := a.BeginSnapshot(); err != ErrViewOpen {
				t.Fatalf("second view: %v", err)
			}
			v.chunk = 1 + rng.Intn(5)
			locks := 0
			var got bytes.Buffer
			err = v.WriteSnapshot(&got, func() {
				locks++
				for range rng.Intn(4) {
					step()
				}
			}, func() {})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Fatalf("seed %d round %d: the view (%d chunks, %d pre-images) differs from the tree when it began", seed, round, locks, len(v.pre))
			}
			v.Close()
			if a.view != nil {
				t.Fatal("view still open after Close")
			}
		}
		checkInvariants(t, a)
		if !reflect.DeepEqual(treeDump(t, a), treeDump(t, b)) {
			t.Fatalf("seed %d: the tree that had views differs from its twin", seed)
		}
	}
}
