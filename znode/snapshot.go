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

	// Number the distinct ACL lists in first-use order of a sorted walk.
	paths := t.sortedPaths()
	aclIndex := make(map[string]int32)
	var lists [][]jute.ACL
	for _, p := range paths {
		k := aclKey(t.nodes[p].acl)
		if _, ok := aclIndex[k]; !ok {
			aclIndex[k] = int32(len(lists))
			lists = append(lists, t.nodes[p].acl)
		}
	}
	sessions := t.Sessions()
	quotas := make([]string, 0, len(t.quotas))
	for p := range t.quotas {
		quotas = append(quotas, p)
	}
	slices.Sort(quotas)

	sw.frame(func(jw *jute.Writer) {
		jw.Long(t.lastZxid)
		jw.Int(int32(len(lists)))
		jw.Long(int64(len(paths)))
		jw.Int(int32(len(sessions)))
		jw.Int(int32(len(quotas)))
	})
	for _, l := range lists {
		sw.frame(func(jw *jute.Writer) { jute.WriteACLs(jw, l) })
	}
	for _, p := range paths {
		n := t.nodes[p]
		idx := aclIndex[aclKey(n.acl)]
		sw.frame(func(jw *jute.Writer) { encodeNode(jw, p, n, idx) })
	}
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

// sortedPaths lists every node depth-first with children sorted, so parents
// precede children and the output is deterministic.
func (t *Tree) sortedPaths() []string {
	out := make([]string, 0, len(t.nodes))
	var walk func(p string)
	walk = func(p string) {
		out = append(out, p)
		n := t.nodes[p]
		names := make([]string, 0, len(n.children))
		for c := range n.children {
			names = append(names, c)
		}
		slices.Sort(names)
		prefix := p + "/"
		if p == RootPath {
			prefix = RootPath
		}
		for _, c := range names {
			walk(prefix + c)
		}
	}
	walk(RootPath)
	return out
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
