package znode

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"slices"

	"github.com/zkraft/zkraft/jute"
)

// Snapshot layout (version 1). Everything after the 8-byte header is a
// sequence of frames: a 4-byte big-endian length and a jute-encoded body.
//
//	header  "ZKRS" + int version
//	frame   {lastZxid long, aclCount int, nodeCount long, sessionCount int, quotaCount int}
//	frame * aclCount       one ACL list each (vector of ACL)
//	frame * nodeCount      one node each, parents before children
//	frame * sessionCount   {id long, timeout int, passwd buffer}
//	frame * quotaCount     one quota'd path each (ustring), sorted
//	trailer "ZEND" + int CRC-32 (IEEE) of every byte before the trailer
//
// Ephemeral sets, child sets and counters are rebuilt from the nodes. The
// quota'd paths are stored rather than re-derived, because ZooKeeper's own
// bookkeeping can leave them differing from the limit nodes present.
const (
	snapMagic   = "ZKRS"
	snapEnd     = "ZEND"
	snapVersion = 1
	// maxFrame bounds one frame so garbage cannot make the reader allocate
	// without limit; a node frame holds at most one jute.maxbuffer of data.
	maxFrame = 64 << 20
)

// ErrBadSnapshot is wrapped by every ReadSnapshot failure caused by the input.
var ErrBadSnapshot = errors.New("znode: bad snapshot")

// WriteSnapshot streams the whole tree and session table to w.
func (t *Tree) WriteSnapshot(w io.Writer) error {
	crc := crc32.NewIEEE()
	bw := bufio.NewWriterSize(io.MultiWriter(w, crc), 64<<10)
	sw := &snapWriter{bw: bw}
	sw.raw([]byte(snapMagic))
	sw.raw(binary.BigEndian.AppendUint32(nil, snapVersion))

	// Every node's ACL is one of the interned lists: number them in key
	// order (deterministic) and find each node's by slice identity.
	keys := make([]string, 0, len(t.acls.lists))
	for k := range t.acls.lists {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	aclIndex := make(map[*jute.ACL]int32, len(keys))
	emptyIdx := int32(-1)
	for i, k := range keys {
		l := t.acls.lists[k].list
		if len(l) == 0 {
			emptyIdx = int32(i)
			continue
		}
		aclIndex[&l[0]] = int32(i)
	}
	sessions := t.Sessions()
	quotas := make([]string, 0, len(t.quotas))
	for p := range t.quotas {
		quotas = append(quotas, p)
	}
	slices.Sort(quotas)

	sw.frame(func(jw *jute.Writer) {
		jw.Long(t.lastZxid)
		jw.Int(int32(len(keys)))
		jw.Long(int64(len(t.nodes)))
		jw.Int(int32(len(sessions)))
		jw.Int(int32(len(quotas)))
	})
	for _, k := range keys {
		l := t.acls.lists[k].list
		sw.frame(func(jw *jute.Writer) { jute.WriteACLs(jw, l) })
	}
	var names []string
	t.walkSorted(RootPath, &names, func(p string, n *node) {
		idx := emptyIdx
		if len(n.acl) > 0 {
			idx = aclIndex[&n.acl[0]]
		}
		sw.frame(func(jw *jute.Writer) { encodeNode(jw, p, n, idx) })
	})
	for _, s := range sessions {
		sw.frame(func(jw *jute.Writer) {
			jw.Long(s.ID)
			jw.Int(s.Timeout)
			jw.Buffer(s.Passwd)
		})
	}
	for _, p := range quotas {
		sw.frame(func(jw *jute.Writer) { jw.String(p) })
	}
	if sw.err != nil {
		return fmt.Errorf("write snapshot: %w", sw.err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write snapshot: %w", err)
	}
	trailer := append([]byte(snapEnd), binary.BigEndian.AppendUint32(nil, crc.Sum32())...)
	if _, err := w.Write(trailer); err != nil {
		return fmt.Errorf("write snapshot: %w", err)
	}
	return nil
}

// walkSorted visits the subtree at path depth-first with children in
// sorted order, so parents precede children and the order is
// deterministic. names is scratch space shared across the recursion.
func (t *Tree) walkSorted(path string, names *[]string, f func(string, *node)) {
	n := t.nodes[path]
	f(path, n)
	if len(n.children) == 0 {
		return
	}
	start := len(*names)
	for c := range n.children {
		*names = append(*names, c)
	}
	slices.Sort((*names)[start:])
	prefix := path + "/"
	if path == RootPath {
		prefix = RootPath
	}
	for i := start; i < start+len(n.children); i++ {
		t.walkSorted(prefix+(*names)[i], names, f)
	}
	*names = (*names)[:start]
}

func encodeNode(jw *jute.Writer, path string, n *node, aclIdx int32) {
	jw.String(path)
	jw.Buffer(n.data)
	jw.Int(aclIdx)
	jw.Long(n.czxid)
	jw.Long(n.mzxid)
	jw.Long(n.pzxid)
	jw.Long(n.ctime)
	jw.Long(n.mtime)
	jw.Int(n.version)
	jw.Int(n.cversion)
	jw.Int(n.aversion)
	jw.Int(int32(n.kind))
	jw.Long(n.owner)
	jw.Long(n.ttl)
}

// snapWriter writes length-prefixed frames, remembering the first error.
type snapWriter struct {
	bw  *bufio.Writer
	jw  jute.Writer
	err error
}

func (s *snapWriter) raw(b []byte) {
	if s.err == nil {
		_, s.err = s.bw.Write(b)
	}
}

func (s *snapWriter) frame(fill func(*jute.Writer)) {
	s.jw.Reset()
	fill(&s.jw)
	if len(s.jw.Buf) > maxFrame && s.err == nil {
		s.err = fmt.Errorf("frame of %d bytes exceeds %d", len(s.jw.Buf), maxFrame)
	}
	s.raw(binary.BigEndian.AppendUint32(nil, uint32(len(s.jw.Buf))))
	s.raw(s.jw.Buf)
}
