package learner

import (
	"bufio"
	"bytes"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/internal/zookeeper/datadir"
	"github.com/zkraft/zkraft/internal/zookeeper/importer"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// FuzzLeaderStream: no bytes from a leader make the packet reader, the
// transaction parser, the digest reader or the Follower's apply of what
// they read panic or hang.
func FuzzLeaderStream(f *testing.F) {
	var seed bytes.Buffer
	w := bufio.NewWriter(&seed)
	_ = writePacket(w, packet{typ: pktInform, zxid: makeZxid(1, 1), data: createTxn(makeZxid(1, 1), "/a")})
	_ = writePacket(w, packet{typ: pktPing, zxid: 7, data: []byte{}})
	_ = writePacket(w, packet{typ: pktInform, zxid: makeZxid(1, 2), data: createTxn(makeZxid(1, 2), "/a/b")})
	f.Add(seed.Bytes())
	f.Fuzz(func(t *testing.T, b []byte) {
		s := datadir.NewStreamReader(bufio.NewReader(bytes.NewReader(b)))
		fl := importer.NewFollower(znode.Options{})
		for range 64 {
			p, err := readPacket(s)
			if err != nil {
				return
			}
			tx, err := parseTxn(p.data)
			if err != nil {
				continue
			}
			_, _ = txnDigest(tx)
			_, _ = fl.ApplyResults(tx)
		}
		_ = TreeDigest(fl.Tree())
	})
}

// scriptConn is a connection whose peer sends a fixed script and takes
// whatever is written.
type scriptConn struct {
	net.Conn // nil: only the methods below are used
	r        *bytes.Reader
}

func (s scriptConn) Read(b []byte) (int, error)     { return s.r.Read(b) }
func (scriptConn) Write(b []byte) (int, error)      { return len(b), nil }
func (scriptConn) SetReadDeadline(time.Time) error  { return nil }
func (scriptConn) SetWriteDeadline(time.Time) error { return nil }
func (scriptConn) Close() error                     { return nil }

// FuzzQuorumAuth: no bytes from a leader during the quorum SASL exchange
// (DIGEST-MD5) make the learner panic or hang, and none authenticate it:
// the leader's rspauth depends on the learner's random cnonce.
func FuzzQuorumAuth(f *testing.F) {
	var seed jute.Writer
	seed.Long(quorumAuthMagic)
	seed.Int(authInProgress)
	seed.Buffer([]byte(`realm="zk-quorum-sasl-md5",nonce="N0nce",qop="auth",charset=utf-8,algorithm=md5-sess`))
	seed.Long(quorumAuthMagic)
	seed.Int(authSuccess)
	seed.Buffer([]byte("rspauth=" + strings.Repeat("0", 32)))
	f.Add(seed.Buf)
	f.Add([]byte{0x5f, 0x24, 0x35, 0x01, 0x35, 0x01, 0xed, 0xcc, 0xff, 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		l := New(Config{ID: 4, Servers: []string{"leader:2888"}})
		nc := scriptConn{r: bytes.NewReader(b)}
		c := &conn{l: l, addr: "leader:2888", nc: nc, in: datadir.NewStreamReader(bufio.NewReader(nc)), out: bufio.NewWriter(nc)}
		if err := c.authenticate(newDigestClient(DigestCredentials{User: "learner", Password: "s3cret"})); err == nil {
			t.Fatalf("authenticated by the script %x", b)
		}
	})
}
