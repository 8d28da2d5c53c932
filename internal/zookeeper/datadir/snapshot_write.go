package datadir

import (
	"bufio"
	"hash"
	"hash/adler32"
	"io"
	"maps"
	"slices"

	"github.com/zkraft/zkraft/jute"
)

// SnapshotWriter writes a snapshot in Apache ZooKeeper's format, which
// ZooKeeper 3.4 to 3.9 load from dataDir/version-2/snapshot.<zxid>: the
// sessions and the ACL cache first, then the znodes one by one (parents
// before children), then the seal.
type SnapshotWriter struct {
	bw  *bufio.Writer
	sum hash.Hash32
	w   jute.Writer
	err error
}

// NewSnapshotWriter writes the header, sessions and ACL cache to w. acls
// maps each index the nodes use to its list; OpenACL needs no entry.
func NewSnapshotWriter(w io.Writer, sessions []Session, acls map[int64][]jute.ACL) *SnapshotWriter {
	sum := adler32.New()
	sw := &SnapshotWriter{bw: bufio.NewWriterSize(io.MultiWriter(w, sum), 64<<10), sum: sum}
	sw.w.Int(snapMagic)
	sw.w.Int(fileFormat)
	sw.w.Long(-1) // dbid
	sw.w.Int(int32(len(sessions)))
	for _, s := range sessions {
		sw.w.Long(s.ID)
		sw.w.Int(s.Timeout)
	}
	sw.w.Int(int32(len(acls)))
	for _, id := range slices.Sorted(maps.Keys(acls)) {
		sw.w.Long(id)
		jute.WriteACLs(&sw.w, acls[id])
	}
	sw.flush()
	return sw
}

// Node writes one znode ("/" is written as ZooKeeper writes the root, "").
func (sw *SnapshotWriter) Node(n Node) {
	path := n.Path
	if path == "/" {
		path = ""
	}
	st := &n.Stat
	sw.w.String(path)
	sw.w.Buffer(n.Data)
	sw.w.Long(n.ACL)
	sw.w.Long(st.Czxid)
	sw.w.Long(st.Mzxid)
	sw.w.Long(st.Ctime)
	sw.w.Long(st.Mtime)
	sw.w.Int(st.Version)
	sw.w.Int(st.Cversion)
	sw.w.Int(st.Aversion)
	sw.w.Long(st.EphemeralOwner)
	sw.w.Long(st.Pzxid)
	if len(sw.w.Buf) >= 32<<10 {
		sw.flush()
	}
}

// Close ends the tree ("/") and writes the seal: the Adler-32 of every
// byte before it, then "/". It does not close the underlying writer.
func (sw *SnapshotWriter) Close() error {
	sw.w.String("/")
	sw.flush()
	if sw.err != nil {
		return sw.err
	}
	if err := sw.bw.Flush(); err != nil {
		return err
	}
	sw.w.Long(int64(sw.sum.Sum32()))
	sw.w.String("/")
	sw.flush()
	if sw.err != nil {
		return sw.err
	}
	return sw.bw.Flush()
}

// flush moves the encoded bytes to the buffered writer.
func (sw *SnapshotWriter) flush() {
	if sw.err == nil {
		_, sw.err = sw.bw.Write(sw.w.Buf)
	}
	sw.w.Reset()
}
