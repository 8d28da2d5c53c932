package zklearner

import (
	"bufio"
	"bytes"
	"testing"

	"github.com/zkraft/zkraft/internal/zkdata"
	"github.com/zkraft/zkraft/internal/zkimport"
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
		s := zkdata.NewStreamReader(bufio.NewReader(bytes.NewReader(b)))
		fl := zkimport.NewFollower(znode.Options{})
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
