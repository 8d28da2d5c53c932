package znode

import (
	"bytes"
	"strconv"
	"testing"

	"github.com/zkraft/zkraft/jute"
)

func BenchmarkCreate(b *testing.B) {
	tr := NewTree(Options{})
	tr.Apply(&Txn{Type: jute.OpCreateSession, Session: 1}, 1)
	tr.Apply(&Txn{Type: jute.OpCreate, Session: 1, Req: jute.Marshal(&jute.CreateRequest{Path: "/b", ACL: openACL})}, 2)
	txns := make([]*Txn, b.N)
	for i := range txns {
		txns[i] = &Txn{Type: jute.OpCreate, Session: 1, Ids: ipIDs, Time: 5,
			Req: jute.Marshal(&jute.CreateRequest{Path: "/b/n" + strconv.Itoa(i), Data: make([]byte, 100), ACL: openACL})}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range txns {
		if r := tr.Apply(txns[i], int64(i+3)); r.Err != jute.OK {
			b.Fatal(r.Err)
		}
	}
}

func BenchmarkSnapshot(b *testing.B) {
	tr := NewTree(Options{})
	tr.Apply(&Txn{Type: jute.OpCreateSession, Session: 1}, 1)
	for i := 0; i < 100000; i++ {
		p := "/n" + strconv.Itoa(i%100)
		if i >= 100 {
			p += "/c" + strconv.Itoa(i)
		}
		tr.Apply(&Txn{Type: jute.OpCreate, Session: 1, Req: jute.Marshal(&jute.CreateRequest{Path: p, Data: make([]byte, 50), ACL: openACL})}, int64(i+2))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var buf bytes.Buffer
		if err := tr.WriteSnapshot(&buf); err != nil {
			b.Fatal(err)
		}
		if _, err := ReadSnapshot(&buf, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

func setDataTree() (*Tree, *Txn) {
	tr := NewTree(Options{})
	tr.Apply(&Txn{Type: jute.OpCreateSession, Session: 1}, 1)
	tr.Apply(&Txn{Type: jute.OpCreate, Session: 1, Req: jute.Marshal(&jute.CreateRequest{Path: "/b", ACL: openACL})}, 2)
	return tr, &Txn{Type: jute.OpSetData, Session: 1, Ids: ipIDs, Time: 5,
		Req: jute.Marshal(&jute.SetDataRequest{Path: "/b", Data: make([]byte, 100), Version: -1})}
}

// BenchmarkSetData is the FSM's share of every setData, on every member.
func BenchmarkSetData(b *testing.B) {
	tr, txn := setDataTree()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if r := tr.Apply(txn, int64(i+3)); r.Err != jute.OK {
			b.Fatal(r.Err)
		}
	}
}

// TestWriteAllocations pins the allocations of the commonest write on
// every member: decoding a setData from the log (the identities repeat)
// allocates the Txn alone; applying it, the Result, the path and the new
// value. The applier, its reader, the request, the events and the Stat
// reply are reused or live in the Result.
func TestWriteAllocations(t *testing.T) {
	tr, txn := setDataTree()
	var w jute.Writer
	txn.Encode(&w)
	var d TxnDecoder
	if _, err := d.Decode(w.Buf); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(200, func() { _, _ = d.Decode(w.Buf) }); n > 1 {
		t.Errorf("decoding a setData: %.0f allocations, want 1", n)
	}
	zxid := int64(3)
	if n := testing.AllocsPerRun(200, func() { tr.Apply(txn, zxid); zxid++ }); n > 3 {
		t.Errorf("applying a setData: %.0f allocations, want 3", n)
	}
	// A create with world:anyone (its Id decoded to constants, the ACL
	// interned without a key, the reply in the Result): the Result, the
	// request's path, ACL slice and data, the node, and its share of the
	// parent's child set and the name index growing.
	creates := make([]*Txn, 201)
	for i := range creates {
		creates[i] = &Txn{Type: jute.OpCreate, Session: 1, Ids: ipIDs, Time: 5,
			Req: jute.Marshal(&jute.CreateRequest{Path: "/b/n" + strconv.Itoa(i), Data: make([]byte, 100), ACL: openACL})}
	}
	i := 0
	if n := testing.AllocsPerRun(200, func() { tr.Apply(creates[i], zxid); i++; zxid++ }); n > 6 {
		t.Errorf("applying a create: %.0f allocations, want at most 6", n)
	}
}
