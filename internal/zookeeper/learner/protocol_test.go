package learner

import (
	"bufio"
	"context"
	"encoding/binary"
	"net"
	"testing"
	"time"

	"github.com/zkraft/zkraft/internal/zookeeper/datadir"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// fakeLeader is the leader's side of one quorum connection, for tests
// that script the protocol.
type fakeLeader struct {
	t   *testing.T
	nc  net.Conn
	in  *datadir.StreamReader
	out *bufio.Writer
}

func (f *fakeLeader) send(p packet) {
	f.t.Helper()
	if err := writePacket(f.out, p); err != nil {
		f.t.Error(err)
	}
}

func (f *fakeLeader) expect(typ int32) packet {
	f.t.Helper()
	_ = f.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	p, err := readPacket(f.in)
	if err != nil {
		f.t.Fatalf("waiting for packet type %d: %v", typ, err)
	}
	if p.typ != typ {
		f.t.Fatalf("packet type %d, want %d", p.typ, typ)
	}
	return p
}

// createTxn is a PROPOSAL's or INFORM's data creating path.
func createTxn(zxid int64, path string) []byte {
	var w jute.Writer
	w.Long(0x77)                // clientId
	w.Int(1)                    // cxid
	w.Long(zxid)                // zxid
	w.Long(1_700_000_000_000)   // time
	w.Int(int32(jute.OpCreate)) // type
	w.String(path)              // CreateTxn.path
	w.Buffer([]byte("x"))       // data
	jute.WriteACLs(&w, []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "world", ID: "anyone"}}})
	w.Bool(false) // ephemeral
	w.Int(-1)     // parentCVersion
	return w.Buf
}

// TestProtocolWithScriptedLeader drives a Learner through the handshake,
// a DIFF sync with a PROPOSAL/COMMIT pair and an INFORM, NEWLEADER,
// UPTODATE and a PING, checking each packet it sends; then through a
// reconnection whose TRUNC goes below the learner's last zxid, which
// drops its tree so the next handshake announces zxid 0.
func TestProtocolWithScriptedLeader(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var created []string // the paths OnApply saw created
	l := New(Config{ID: 7, Servers: []string{ln.Addr().String()}, Retry: 10 * time.Millisecond,
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
	accept := func() *fakeLeader {
		nc, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		return &fakeLeader{t: t, nc: nc, in: datadir.NewStreamReader(bufio.NewReader(nc)), out: bufio.NewWriter(nc)}
	}
	version := binary.BigEndian.AppendUint32(nil, protocolVersion)
	epoch1 := makeZxid(1, 0)

	f := accept()
	p := f.expect(pktObserverInfo)
	if p.zxid != 0 || len(p.data) != 20 || int64(binary.BigEndian.Uint64(p.data)) != 7 || binary.BigEndian.Uint32(p.data[8:]) != protocolVersion {
		t.Fatalf("OBSERVERINFO %+v", p)
	}
	f.send(packet{typ: pktLeaderInfo, zxid: epoch1, data: version})
	p = f.expect(pktAckEpoch)
	if p.zxid != 0 || int32(binary.BigEndian.Uint32(p.data)) != 0 {
		t.Fatalf("ACKEPOCH %+v, want zxid 0 and current epoch 0", p)
	}
	f.send(packet{typ: pktDiff, zxid: 0})
	f.send(packet{typ: pktProposal, zxid: epoch1 + 1, data: createTxn(epoch1+1, "/a")})
	f.send(packet{typ: pktCommit, zxid: epoch1 + 1})
	f.send(packet{typ: pktInform, zxid: epoch1 + 2, data: createTxn(epoch1+2, "/b")})
	f.send(packet{typ: pktNewLeader, zxid: epoch1})
	if p = f.expect(pktAck); p.zxid != epoch1 {
		t.Fatalf("NEWLEADER's ACK zxid %#x", p.zxid)
	}
	f.send(packet{typ: pktUpToDate, zxid: -1})
	if p = f.expect(pktAck); p.zxid != epoch1 {
		t.Fatalf("UPTODATE's ACK zxid %#x", p.zxid)
	}
	f.send(packet{typ: pktInform, zxid: epoch1 + 3, data: createTxn(epoch1+3, "/c")})
	f.send(packet{typ: pktPing, zxid: epoch1 + 3})
	if p = f.expect(pktPing); p.zxid != epoch1+3 || p.data == nil || len(p.data) != 0 {
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
	f.nc.Close()

	// The same epoch again: ACKEPOCH says -1; TRUNC below our zxid.
	f = accept()
	if p = f.expect(pktObserverInfo); p.zxid != epoch1 {
		t.Fatalf("OBSERVERINFO zxid %#x, want the accepted epoch's %#x", p.zxid, epoch1)
	}
	f.send(packet{typ: pktLeaderInfo, zxid: epoch1, data: version})
	p = f.expect(pktAckEpoch)
	if p.zxid != epoch1+3 || int32(binary.BigEndian.Uint32(p.data)) != -1 {
		t.Fatalf("ACKEPOCH %+v, want zxid %#x and -1", p, epoch1+3)
	}
	f.send(packet{typ: pktTrunc, zxid: epoch1 + 1})
	f.nc.Close()

	f = accept()
	f.expect(pktObserverInfo)
	f.send(packet{typ: pktLeaderInfo, zxid: makeZxid(2, 0), data: version})
	if p = f.expect(pktAckEpoch); p.zxid != 0 {
		t.Fatalf("after TRUNC the learner announces %#x, want 0 (its tree dropped)", p.zxid)
	}
	l.Read(func(tree *znode.Tree) {
		if _, _, err := tree.GetData("/a", nil); err == nil {
			t.Error("/a survived the TRUNC")
		}
	})
	f.nc.Close()
}
