package learner

import (
	"encoding/binary"
	"hash/crc32"
	"strings"

	"github.com/zkraft/zkraft/internal/zookeeper/datadir"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// digestVersion is the TxnDigest version ZooKeeper 3.6 to 3.9 write
// (DigestCalculator.DIGEST_VERSION).
const digestVersion = 2

// TreeDigest is ZooKeeper's digest of a tree (DataTree.getTreeDigest):
// the sum of every node's CRC-32 over its path ("" for the root), data
// and stored Stat (czxid, mzxid, pzxid, ctime, mtime, version, stored
// cversion, aversion, ephemeralOwner), nodes under /zookeeper/ left out.
// A leader stamps each transaction with the digest its tree will have
// once the transaction is applied. It walks the whole tree.
func TreeDigest(tree *znode.Tree) int64 {
	var sum int64
	var b [60]byte
	tree.Export(func(n znode.StoredNode) {
		if strings.HasPrefix(n.Path, "/zookeeper/") {
			return
		}
		path := n.Path
		if path == "/" {
			path = ""
		}
		st := &n.Stat
		binary.BigEndian.PutUint64(b[0:], uint64(st.Czxid))
		binary.BigEndian.PutUint64(b[8:], uint64(st.Mzxid))
		binary.BigEndian.PutUint64(b[16:], uint64(st.Pzxid))
		binary.BigEndian.PutUint64(b[24:], uint64(st.Ctime))
		binary.BigEndian.PutUint64(b[32:], uint64(st.Mtime))
		binary.BigEndian.PutUint32(b[40:], uint32(st.Version))
		binary.BigEndian.PutUint32(b[44:], uint32(st.Cversion))
		binary.BigEndian.PutUint32(b[48:], uint32(st.Aversion))
		binary.BigEndian.PutUint64(b[52:], uint64(st.EphemeralOwner))
		crc := crc32.NewIEEE()
		crc.Write([]byte(path))
		crc.Write(n.Data)
		crc.Write(b[:])
		sum += int64(crc.Sum32())
	})
	return sum
}

// txnDigest returns the TxnDigest {int version, long treeDigest} after a
// transaction's record, and false when there is none (digests disabled)
// or the record is of a type not known here.
func txnDigest(t datadir.Txn) (int64, bool) {
	r := jute.NewReader(t.Body)
	if !skipRecord(r, t.Type) {
		if t.Type != jute.OpCloseSession {
			return 0, false
		}
		// A closeSession logged without its CloseSessionTxn.
		r = jute.NewReader(t.Body)
	}
	if r.Remaining() != 12 {
		return 0, false
	}
	v, d := r.Int(), r.Long()
	return d, r.Err() == nil && v == digestVersion
}

// skipRecord reads past the record of a transaction of type op and
// reports whether it could (zookeeper.jute's txn records).
func skipRecord(r *jute.Reader, op jute.Op) bool {
	switch op {
	case jute.OpCreateSession:
		r.Int() // timeOut
	case jute.OpCloseSession:
		r.Strings() // paths2Delete
	case jute.OpCreate, jute.OpCreate2:
		_ = r.String()
		r.Buffer()
		jute.ReadACLs(r)
		r.Bool()
		r.Int()
	case jute.OpCreateContainer, jute.OpCreateTTL:
		_ = r.String()
		r.Buffer()
		jute.ReadACLs(r)
		r.Int()
		if op == jute.OpCreateTTL {
			r.Long()
		}
	case jute.OpDelete, jute.OpDeleteContainer:
		_ = r.String()
	case jute.OpSetData, jute.OpReconfig:
		_ = r.String()
		r.Buffer()
		r.Int()
	case jute.OpSetACL:
		_ = r.String()
		jute.ReadACLs(r)
		r.Int()
	case jute.OpCheck:
		_ = r.String()
		r.Int()
	case jute.OpError:
		r.Int()
	case jute.OpMulti:
		n, _ := r.Count(8)
		for i := 0; i < n && r.Err() == nil; i++ {
			r.Int()
			r.Buffer()
		}
	default:
		return false
	}
	return r.Err() == nil
}
