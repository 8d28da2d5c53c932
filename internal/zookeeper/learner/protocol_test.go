package learner

import (
	"context"
	"testing"
	"time"

	"github.com/zkraft/zkraft/internal/testing/zkleader"
	"github.com/zkraft/zkraft/internal/zookeeper/datadir"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// createTxn is a PROPOSAL's or INFORM's data creating path.
func createTxn(zxid int64, path string) []byte {
	return zkleader.Txn{Session: 0x77, Cxid: 1, Zxid: zxid, Time: 1_700_000_000_000, Type: jute.OpCreate,
		Record: zkleader.CreateTxn(path, []byte("x"), false)}.Bytes()
}

// TestProtocolWithScriptedLeader drives a Learner through the handshake,
// a DIFF sync with a PROPOSAL/COMMIT pair and an INFORM, NEWLEADER,
// UPTODATE and a PING, checking each packet it sends; then through a
// reconnection whose TRUNC goes below the learner's last zxid, which
// drops its tree so the next handshake announces zxid 0.
func TestProtocolWithScriptedLeader(t *testing.T) {
	ldr := zkleader.Listen(t)
	var created []string // the paths OnApply saw created
	l := New(Config{ID: 7, Servers: []string{ldr.Addr()}, Retry: 10 * time.Millisecond,
		OnApply: func(_ datadir.Txn, results []*znode.Result, _ *znode.Tree) {
			for _, r := range results {
				for _, ev := range r.Events {
					if ev.Type == jute.EventNodeCreated {
						created = append(created, ev.Path)
					}
				}
			}
		}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = l.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	epoch1 := makeZxid(1, 0)

	f := ldr.Accept()
	hello := f.Handshake()
	if hello.ID != 7 || hello.AcceptedEpoch != 0 || hello.ConfigVersion != 0 {
		t.Fatalf("OBSERVERINFO %+v, want id 7, epoch 0, config version 0", hello)
	}
	if hello.LastZxid != 0 || hello.CurrentEpoch != 0 {
		t.Fatalf("ACKEPOCH %+v, want zxid 0 and current epoch 0", hello)
	}
	f.Send(zkleader.Packet{Type: zkleader.Diff, Zxid: 0})
	f.Send(zkleader.Packet{Type: zkleader.Proposal, Zxid: epoch1 + 1, Data: createTxn(epoch1+1, "/a")})
	f.Send(zkleader.Packet{Type: zkleader.Commit, Zxid: epoch1 + 1})
	f.Send(zkleader.Packet{Type: zkleader.Inform, Zxid: epoch1 + 2, Data: createTxn(epoch1+2, "/b")})
	f.Send(zkleader.Packet{Type: zkleader.NewLeader, Zxid: epoch1})
	if p := f.Expect(zkleader.Ack); p.Zxid != epoch1 {
		t.Fatalf("NEWLEADER's ACK zxid %#x", p.Zxid)
	}
	f.Send(zkleader.Packet{Type: zkleader.UpToDate, Zxid: -1})
	if p := f.Expect(zkleader.Ack); p.Zxid != epoch1 {
		t.Fatalf("UPTODATE's ACK zxid %#x", p.Zxid)
	}
	f.Send(zkleader.Packet{Type: zkleader.Inform, Zxid: epoch1 + 3, Data: createTxn(epoch1+3, "/c")})
	f.Send(zkleader.Packet{Type: zkleader.Ping, Zxid: epoch1 + 3})
	if p := f.Expect(zkleader.Ping); p.Zxid != epoch1+3 || p.Data == nil || len(p.Data) != 0 {
		t.Fatalf("PING reply %+v, want the zxid back and an empty session table", p)
	}
	st := l.Status()
	if !st.Synced || st.LastZxid != epoch1+3 || st.LastSync != SyncDiff || st.Epoch != 1 {
		t.Fatalf("status %+v", st)
	}
	l.Read(func(tree *znode.Tree) {
		if len(created) != 3 || created[0] != "/a" || created[2] != "/c" {
			t.Errorf("OnApply saw creations %v, want /a /b /c", created)
		}
		for _, path := range []string{"/a", "/b", "/c"} {
			if _, st, err := tree.GetData(path, nil); err != nil || st.Czxid == 0 || st.Ctime != 1_700_000_000_000 {
				t.Errorf("%s: %+v %v", path, st, err)
			}
		}
	})
	f.Close()

	// The same epoch again: ACKEPOCH says -1; TRUNC below our zxid.
	f = ldr.Accept()
	if hello = f.Handshake(); hello.AcceptedEpoch != 1 {
		t.Fatalf("OBSERVERINFO's epoch %d, want the accepted epoch 1", hello.AcceptedEpoch)
	}
	if hello.LastZxid != epoch1+3 || hello.CurrentEpoch != -1 {
		t.Fatalf("ACKEPOCH %+v, want zxid %#x and -1", hello, epoch1+3)
	}
	f.Send(zkleader.Packet{Type: zkleader.Trunc, Zxid: epoch1 + 1})
	f.Close()

	ldr.NewEpoch()
	f = ldr.Accept()
	if hello = f.Handshake(); hello.LastZxid != 0 {
		t.Fatalf("after TRUNC the learner announces %#x, want 0 (its tree dropped)", hello.LastZxid)
	}
	l.Read(func(tree *znode.Tree) {
		if _, _, err := tree.GetData("/a", nil); err == nil {
			t.Error("/a survived the TRUNC")
		}
	})
	f.Close()
}
