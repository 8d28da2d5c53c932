// Package zkleader is a scripted Apache ZooKeeper leader for tests: the
// leader's side of the quorum protocol as a learner of
// internal/zookeeper/learner speaks it (docs/DESIGN.md, "Following a
// ZooKeeper ensemble"), on a loopback listener, every packet decided by
// the test. It lets the learner and the observer built on it be tested
// without a JVM, as the FSM is tested without Raft.
//
// A Leader holds what a leader holds between connections: its epoch and
// its committed transactions, so a learner that reconnects is synced by
// DIFF with what it missed. A Conn is one learner's connection:
//
//	c := ldr.Accept()
//	hello := c.Handshake()        // OBSERVERINFO, LEADERINFO, ACKEPOCH
//	c.Sync(hello)                 // DIFF, PROPOSAL/COMMIT pairs, NEWLEADER/ACK, UPTODATE/ACK
//	f := c.ExpectRequest()        // a client's write the learner forwarded
//	c.Answer(f, jute.OpCreate, zkleader.CreateTxn("/a", nil, false)) // INFORM of its transaction
//	touched := c.Ping()           // PING, and the learner's session table
//
// The codec is the package's own, written from ZooKeeper's
// QuorumPacket, not the learner's: a mistake in the learner's encoding
// is not mirrored here. Only tests import it.
package zkleader

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/zkraft/zkraft/internal/zookeeper/datadir"
	"github.com/zkraft/zkraft/jute"
)

// Type is a quorum packet's type (Leader.java's constants).
type Type int32

// The packet types of ZooKeeper's quorum protocol.
const (
	Request           Type = 1
	Proposal          Type = 2
	Ack               Type = 3
	Commit            Type = 4
	Ping              Type = 5
	Revalidate        Type = 6
	Sync              Type = 7
	Inform            Type = 8
	CommitAndActivate Type = 9
	NewLeader         Type = 10
	FollowerInfo      Type = 11
	UpToDate          Type = 12
	Diff              Type = 13
	Trunc             Type = 14
	Snap              Type = 15
	ObserverInfo      Type = 16
	LeaderInfo        Type = 17
	AckEpoch          Type = 18
	InformAndActivate Type = 19
)

// ProtocolVersion is Zab 1.0's, which LearnerInfo and LEADERINFO carry.
const ProtocolVersion = 0x10000

// Wait bounds every wait of a Conn for the learner (a packet, a
// connection): a test that goes wrong fails instead of hanging.
const Wait = 10 * time.Second

// Packet is a QuorumPacket {int type, long zxid, buffer data,
// vector<Id> authinfo}. Packets follow each other on a quorum connection
// with no length before them.
type Packet struct {
	Type Type
	Zxid int64
	Data []byte // nil is written as a null buffer
	Auth []jute.Id
}

// Encode is p's bytes on the wire; a nil Auth is a null vector.
func (p Packet) Encode() []byte {
	var w jute.Writer
	w.Int(int32(p.Type))
	w.Long(p.Zxid)
	w.Buffer(p.Data)
	if p.Auth == nil {
		w.Int(-1)
	} else {
		w.Int(int32(len(p.Auth)))
		for i := range p.Auth {
			p.Auth[i].Encode(&w)
		}
	}
	return w.Buf
}

// Zxid joins an epoch (the high 32 bits) and a counter.
func Zxid(epoch, counter int64) int64 { return epoch<<32 | counter&0xffffffff }

// Leader is a scripted ZooKeeper leader listening on a loopback port, the
// quorum port a learner dials.
type Leader struct {
	t  testing.TB
	ln net.Listener

	mu sync.Mutex
	// epoch is the leader's (LEADERINFO); zxids are counted in it.
	epoch int64
	// log holds the transactions committed, in zxid order: a sync
	// sends a learner those after its last zxid.
	log []Txn
}

// Listen starts a Leader of epoch 1 with nothing committed; its listener
// closes when the test ends.
func Listen(t testing.TB) *Leader {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return &Leader{t: t, ln: ln, epoch: 1}
}

// Addr is the quorum address to follow (learner.Config.Servers).
func (l *Leader) Addr() string { return l.ln.Addr().String() }

// Listener is the Leader's listener, for a test that accepts a
// connection itself (to run TLS on it first, then Conn).
func (l *Leader) Listener() net.Listener { return l.ln }

// Accept waits for a learner's next connection.
func (l *Leader) Accept() *Conn {
	l.t.Helper()
	if d, ok := l.ln.(interface{ SetDeadline(time.Time) error }); ok {
		_ = d.SetDeadline(time.Now().Add(Wait))
		defer d.SetDeadline(time.Time{})
	}
	nc, err := l.ln.Accept()
	if err != nil {
		l.t.Fatalf("zkleader: waiting for the learner to connect: %v", err)
	}
	return l.Conn(nc)
}

// Conn makes nc, a connection from a learner, one of the Leader's. It is
// closed when the test ends.
func (l *Leader) Conn(nc net.Conn) *Conn {
	l.t.Cleanup(func() { nc.Close() })
	return &Conn{t: l.t, l: l, nc: nc, in: datadir.NewStreamReader(bufio.NewReader(nc)), out: bufio.NewWriter(nc)}
}

// Epoch is the leader's epoch.
func (l *Leader) Epoch() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.epoch
}

// NewEpoch makes the Leader a newly elected one: its epoch goes up, and
// the next zxid is the new epoch's first.
func (l *Leader) NewEpoch() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.epoch++
	return l.epoch
}

// LastZxid is the zxid of the last transaction committed, 0 if none.
func (l *Leader) LastZxid() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lastZxidLocked()
}

func (l *Leader) lastZxidLocked() int64 {
	if len(l.log) == 0 {
		return 0
	}
	return l.log[len(l.log)-1].Zxid
}

// Log commits t without sending it to anyone (no learner is connected,
// say): the next sync sends it. A zero Zxid is the next one, a zero Time
// a fixed clock's (TimeOf). It returns t as committed.
func (l *Leader) Log(t Txn) Txn {
	l.mu.Lock()
	defer l.mu.Unlock()
	if t.Zxid == 0 {
		t.Zxid = max(l.lastZxidLocked()+1, Zxid(l.epoch, 1))
	}
	if t.Time == 0 {
		t.Time = TimeOf(t.Zxid)
	}
	l.log = append(l.log, t)
	return t
}

// since returns the transactions committed after zxid.
func (l *Leader) since(zxid int64) []Txn {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []Txn
	for _, t := range l.log {
		if t.Zxid > zxid {
			out = append(out, t)
		}
	}
	return out
}

// TimeOf is the time the Leader stamps on the transaction of zxid when
// the test gives none: a fixed clock, so Stats are the same every run.
func TimeOf(zxid int64) int64 { return 1_700_000_000_000 + zxid&0xffffffff }

// Conn is the leader's side of one learner's connection. Its Expect
// methods call t.Fatal, so only the test's goroutine may call them;
// Send and Commit only report errors, and may run anywhere.
type Conn struct {
	t  testing.TB
	l  *Leader
	nc net.Conn
	in *datadir.StreamReader
	// wmu serializes writes.
	wmu sync.Mutex
	out *bufio.Writer
}

// NetConn is the connection, for a test's own reads and writes (quorum
// SASL).
func (c *Conn) NetConn() net.Conn { return c.nc }

// Reader reads the learner's bytes (quorum SASL's packets have their own
// shape).
func (c *Conn) Reader() *datadir.StreamReader { return c.in }

// WriteRaw sends b as it is.
func (c *Conn) WriteRaw(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_ = c.nc.SetWriteDeadline(time.Now().Add(Wait))
	if _, err := c.out.Write(b); err != nil {
		return err
	}
	return c.out.Flush()
}

// Send sends p; a failure is the test's error.
func (c *Conn) Send(p Packet) {
	c.t.Helper()
	if err := c.WriteRaw(p.Encode()); err != nil {
		c.t.Errorf("zkleader: sending packet type %d: %v", p.Type, err)
	}
}

// Close ends the connection, as a leader that died or lost its quorum.
func (c *Conn) Close() { c.nc.Close() }

// Read reads the learner's next packet, waiting at most Wait.
func (c *Conn) Read() (Packet, error) {
	_ = c.nc.SetReadDeadline(time.Now().Add(Wait))
	p := Packet{Type: Type(c.in.Int()), Zxid: c.in.Long(), Data: c.in.Buffer(), Auth: c.in.Ids()}
	if err := c.in.Err(); err != nil {
		return Packet{}, err
	}
	return p, nil
}

// Expect reads the learner's next packet, which must be of type typ.
func (c *Conn) Expect(typ Type) Packet {
	c.t.Helper()
	p, err := c.Read()
	if err != nil {
		c.t.Fatalf("zkleader: waiting for packet type %d: %v", typ, err)
	}
	if p.Type != typ {
		c.t.Fatalf("zkleader: the learner sent packet type %d, want %d", p.Type, typ)
	}
	return p
}

// ExpectClosed waits for the learner to close the connection (it stopped
// following) with nothing sent before.
func (c *Conn) ExpectClosed() {
	c.t.Helper()
	p, err := c.Read()
	var ne net.Error
	switch {
	case err == nil:
		c.t.Fatalf("zkleader: the learner sent packet type %d, want the connection closed", p.Type)
	case errors.As(err, &ne) && ne.Timeout():
		c.t.Fatal("zkleader: the learner keeps the connection open")
	case !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF):
		c.t.Logf("zkleader: connection ended: %v", err)
	}
}

// Hello is what a learner says of itself in the handshake.
type Hello struct {
	// ID is its server id (LearnerInfo), ConfigVersion the configuration
	// version it holds.
	ID, ConfigVersion int64
	// AcceptedEpoch is the epoch of OBSERVERINFO's zxid.
	AcceptedEpoch int64
	// LastZxid is ACKEPOCH's zxid, CurrentEpoch its epoch (-1: it had
	// accepted this epoch already).
	LastZxid     int64
	CurrentEpoch int32
}

// Handshake takes the learner's OBSERVERINFO, answers LEADERINFO of the
// Leader's epoch and takes its ACKEPOCH.
func (c *Conn) Handshake() Hello {
	c.t.Helper()
	p := c.Expect(ObserverInfo)
	if len(p.Data) != 20 {
		c.t.Fatalf("zkleader: OBSERVERINFO's LearnerInfo is %d bytes, want 20", len(p.Data))
	}
	h := Hello{
		ID:            int64(binary.BigEndian.Uint64(p.Data)),
		ConfigVersion: int64(binary.BigEndian.Uint64(p.Data[12:])),
		AcceptedEpoch: p.Zxid >> 32,
	}
	if v := binary.BigEndian.Uint32(p.Data[8:]); v != ProtocolVersion {
		c.t.Fatalf("zkleader: LearnerInfo's protocol version %#x, want %#x", v, ProtocolVersion)
	}
	c.Send(Packet{Type: LeaderInfo, Zxid: Zxid(c.l.Epoch(), 0), Data: binary.BigEndian.AppendUint32(nil, ProtocolVersion)})
	p = c.Expect(AckEpoch)
	if len(p.Data) != 4 {
		c.t.Fatalf("zkleader: ACKEPOCH's data is %d bytes, want 4", len(p.Data))
	}
	h.LastZxid, h.CurrentEpoch = p.Zxid, int32(binary.BigEndian.Uint32(p.Data))
	return h
}

// Sync brings the learner of hello up to date by DIFF: a PROPOSAL and
// COMMIT of each transaction committed after its last zxid, then
// NEWLEADER and UPTODATE, each acknowledged. A learner past the Leader's
// last zxid is sent a TRUNC instead, and the connection closed (it
// drops its tree and starts over).
func (c *Conn) Sync(hello Hello) {
	c.t.Helper()
	last := c.l.LastZxid()
	if hello.LastZxid > last {
		c.Send(Packet{Type: Trunc, Zxid: last})
		c.Close()
		return
	}
	c.Send(Packet{Type: Diff, Zxid: last})
	for _, t := range c.l.since(hello.LastZxid) {
		c.Send(Packet{Type: Proposal, Zxid: t.Zxid, Data: t.Bytes()})
		c.Send(Packet{Type: Commit, Zxid: t.Zxid})
	}
	c.finishSync()
}

// SyncSnap brings the learner up to date by SNAP, as ZooKeeper's leader
// does when its committed log no longer reaches back to the learner's
// last zxid: the snapshot of nodes (parents first; "/" first) at the
// Leader's last zxid, with no sessions, every node with the open ACL
// (ACL index -1), then NEWLEADER and UPTODATE, each acknowledged.
func (c *Conn) SyncSnap(nodes []datadir.Node) {
	c.t.Helper()
	c.Send(Packet{Type: Snap, Zxid: c.l.LastZxid()})
	var w jute.Writer
	w.Int(0) // sessions
	w.Int(0) // the ACL cache
	for _, n := range nodes {
		path := n.Path
		if path == "/" {
			path = ""
		}
		st := &n.Stat
		w.String(path)
		w.Buffer(n.Data)
		w.Long(-1)
		w.Long(st.Czxid)
		w.Long(st.Mzxid)
		w.Long(st.Ctime)
		w.Long(st.Mtime)
		w.Int(st.Version)
		w.Int(st.Cversion)
		w.Int(st.Aversion)
		w.Long(st.EphemeralOwner)
		w.Long(st.Pzxid)
	}
	w.String("/")
	w.String("BenWasHere")
	if err := c.WriteRaw(w.Buf); err != nil {
		c.t.Errorf("zkleader: sending a snapshot: %v", err)
	}
	c.finishSync()
}

// finishSync sends NEWLEADER and UPTODATE and takes their ACKs.
func (c *Conn) finishSync() {
	c.t.Helper()
	epoch := Zxid(c.l.Epoch(), 0)
	c.Send(Packet{Type: NewLeader, Zxid: epoch})
	if p := c.Expect(Ack); p.Zxid != epoch {
		c.t.Fatalf("zkleader: NEWLEADER acknowledged with zxid %#x, want %#x", p.Zxid, epoch)
	}
	c.Send(Packet{Type: UpToDate, Zxid: -1})
	if p := c.Expect(Ack); p.Zxid != epoch {
		c.t.Fatalf("zkleader: UPTODATE acknowledged with zxid %#x, want %#x", p.Zxid, epoch)
	}
}

// AcceptSynced accepts the learner's next connection, and handshakes
// and syncs it.
func (l *Leader) AcceptSynced() (*Conn, Hello) {
	l.t.Helper()
	c := l.Accept()
	h := c.Handshake()
	c.Sync(h)
	return c, h
}

// Commit commits t (Leader.Log) and sends it to the learner as an
// INFORM. It returns t as committed.
func (c *Conn) Commit(t Txn) Txn {
	t = c.l.Log(t)
	c.Send(Packet{Type: Inform, Zxid: t.Zxid, Data: t.Bytes()})
	return t
}

// Forwarded is a client's request a learner forwarded to the leader
// (REQUEST {long session, int cxid, int type, request}, the session's
// identities as authinfo).
type Forwarded struct {
	Session int64
	Cxid    int32
	Type    jute.Op
	Body    []byte // the request's record
	Auth    []jute.Id
}

// ExpectRequest reads the learner's next packet, which must be a
// REQUEST.
func (c *Conn) ExpectRequest() Forwarded {
	c.t.Helper()
	p := c.Expect(Request)
	if len(p.Data) < 16 {
		c.t.Fatalf("zkleader: a REQUEST of %d bytes", len(p.Data))
	}
	return Forwarded{
		Session: int64(binary.BigEndian.Uint64(p.Data)),
		Cxid:    int32(binary.BigEndian.Uint32(p.Data[8:])),
		Type:    jute.Op(int32(binary.BigEndian.Uint32(p.Data[12:]))),
		Body:    p.Data[16:],
		Auth:    p.Auth,
	}
}

// Answer commits the transaction the leader made of f: of type typ with
// record (an OpError and ErrorTxn for a request that failed), sent as an
// INFORM. It returns the transaction.
func (c *Conn) Answer(f Forwarded, typ jute.Op, record []byte) Txn {
	return c.Commit(Txn{Session: f.Session, Cxid: f.Cxid, Type: typ, Record: record})
}

// AnswerReconfig commits f, a reconfig, as the leader does once it
// checked it: a reconfig transaction setting /zookeeper/config to
// members (server.N lines, each ending in a newline) and the version
// line of its zxid, sent as INFORMANDACTIVATE with the suggested leader's
// id. It returns the transaction.
func (c *Conn) AnswerReconfig(f Forwarded, members string, leaderID int64) Txn {
	c.l.mu.Lock()
	zxid := max(c.l.lastZxidLocked()+1, Zxid(c.l.epoch, 1))
	c.l.mu.Unlock()
	t := c.l.Log(Txn{Session: f.Session, Cxid: f.Cxid, Zxid: zxid, Type: jute.OpReconfig,
		Record: SetDataTxn("/zookeeper/config", []byte(fmt.Sprintf("%sversion=%x", members, zxid)), -1)})
	data := binary.BigEndian.AppendUint64(nil, uint64(leaderID))
	c.Send(Packet{Type: InformAndActivate, Zxid: t.Zxid, Data: append(data, t.Bytes()...)})
	return t
}

// Ping sends a PING and returns the session table of the learner's reply
// (the sessions its clients used since the last one, with their
// timeouts). Whatever the learner sent before the reply fails the test.
func (c *Conn) Ping() map[int64]int32 {
	c.t.Helper()
	zxid := c.l.LastZxid()
	c.Send(Packet{Type: Ping, Zxid: zxid})
	p := c.Expect(Ping)
	if p.Zxid != zxid || p.Data == nil || len(p.Data)%12 != 0 {
		c.t.Fatalf("zkleader: PING reply zxid %#x (want %#x), %d bytes of sessions", p.Zxid, zxid, len(p.Data))
	}
	touched := make(map[int64]int32)
	for b := p.Data; len(b) > 0; b = b[12:] {
		touched[int64(binary.BigEndian.Uint64(b))] = int32(binary.BigEndian.Uint32(b[8:]))
	}
	return touched
}

// ExpectRevalidate reads the learner's next packet, which must be a
// REVALIDATE {long id, int timeout}, and returns the session it asks
// about.
func (c *Conn) ExpectRevalidate() (id int64, timeout int32) {
	c.t.Helper()
	p := c.Expect(Revalidate)
	if len(p.Data) != 12 {
		c.t.Fatalf("zkleader: a REVALIDATE of %d bytes, want 12", len(p.Data))
	}
	return int64(binary.BigEndian.Uint64(p.Data)), int32(binary.BigEndian.Uint32(p.Data[8:]))
}

// Revalidated answers a REVALIDATE of session id: {long id, bool valid}.
func (c *Conn) Revalidated(id int64, valid bool) {
	var w jute.Writer
	w.Long(id)
	w.Bool(valid)
	c.Send(Packet{Type: Revalidate, Zxid: -1, Data: w.Buf})
}

// Synced answers the oldest sync the learner forwarded: the leader's
// SYNC, sent once everything committed before the sync was sent.
func (c *Conn) Synced() {
	c.Send(Packet{Type: Sync, Zxid: c.l.LastZxid()})
}
