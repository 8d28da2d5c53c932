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
