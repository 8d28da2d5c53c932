package znode

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"slices"
	"strings"

	"github.com/zkraft/zkraft/jute"
)

// Snapshot layout (version 2). Everything after the 8-byte header is a
// sequence of frames: a 4-byte big-endian length and a jute-encoded body.
//
//	header  "ZKRS" + int version
//	frame   {lastZxid long, aclCount int, nodeCount long, sessionCount int, quotaCount int}
//	frame * aclCount       one ACL list each (vector of ACL)
//	frame * nodeCount      one node each, parents before children
//	frame * sessionCount   {id long, timeout int, passwd buffer,
//	                        setCount int, setCount * vector of Id}
//	                       (version 1: without the identity sets)
//	frame * quotaCount     one quota'd path each (ustring), sorted
//	trailer "ZEND" + int CRC-32 (IEEE) of every byte before the trailer
//
// Ephemeral sets, child sets and counters are rebuilt from the nodes. The
// quota'd paths are stored rather than re-derived, because ZooKeeper's own
// bookkeeping can leave them differing from the limit nodes present.
const (
	snapMagic   = "ZKRS"
	snapEnd     = "ZEND"
	snapVersion = 2
	// snapVersion1 is still read: sessions without identity sets.
	snapVersion1 = 1
	// maxFrame bounds one frame so garbage cannot make the reader allocate
	// without limit; a node frame holds at most one jute.maxbuffer of data.
	maxFrame = 64 << 20
)

// ErrBadSnapshot is wrapped by every ReadSnapshot failure caused by the input.
var ErrBadSnapshot = errors.New("znode: bad snapshot")

// WriteSnapshot streams the whole tree and session table to w.
func (t *Tree) WriteSnapshot(w io.Writer) error {
	return writeSnapshot(w, t.state(), func(sw *snapWriter, put func(string, *node)) {
		var scratch []childEntry
		walkSorted(RootPath, t.root, &scratch, put)
	})
}

// snapState is what a snapshot holds besides the nodes.
type snapState struct {
	zxid     int64
	count    int
	acls     *aclCache
	sessions []SessionInfo
	quotas   []string // sorted
}

// state returns the tree's snapState; acls is the tree's own cache.
func (t *Tree) state() snapState {
	return snapState{zxid: t.lastZxid, count: t.count, acls: t.acls, sessions: t.Sessions(), quotas: t.quotas.paths()}
}

// writeSnapshot writes the snapshot of st whose nodes walk passes to put,
// parents before children, in sorted order.
func writeSnapshot(w io.Writer, st snapState, walk func(sw *snapWriter, put func(string, *node))) error {
	crc := crc32.NewIEEE()
	bw := bufio.NewWriterSize(io.MultiWriter(w, crc), 64<<10)
	sw := &snapWriter{bw: bw}
	sw.raw([]byte(snapMagic))
	sw.raw(binary.BigEndian.AppendUint32(nil, snapVersion))

	// Every node's ACL is one of the interned lists: number them in key
	// order (deterministic, whatever the slots) and map slots to numbers.
	refs := make([]aclRef, 0, st.acls.len())
	for _, r := range st.acls.slots {
		refs = append(refs, r)
	}
	slices.SortFunc(refs, func(a, b aclRef) int { return strings.Compare(st.acls.lists[a].key, st.acls.lists[b].key) })
	number := make([]int32, len(st.acls.lists))
	for i, r := range refs {
		number[r] = int32(i)
	}

	sw.frame(func(jw *jute.Writer) {
		jw.Long(st.zxid)
		jw.Int(int32(len(refs)))
		jw.Long(int64(st.count))
		jw.Int(int32(len(st.sessions)))
		jw.Int(int32(len(st.quotas)))
	})
	for _, r := range refs {
		l := st.acls.list(r)
		sw.frame(func(jw *jute.Writer) { jute.WriteACLs(jw, l) })
	}
	walk(sw, func(p string, n *node) {
		sw.frame(func(jw *jute.Writer) { encodeNode(jw, p, n, number[n.acl()]) })
	})
	for _, s := range st.sessions {
		sw.frame(func(jw *jute.Writer) { encodeSession(jw, s) })
	}
	for _, p := range st.quotas {
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

// encodeSession writes a session's snapshot frame body.
func encodeSession(jw *jute.Writer, s SessionInfo) {
	jw.Long(s.ID)
	jw.Int(s.Timeout)
	jw.Buffer(s.Passwd)
	jw.Int(int32(len(s.Identities)))
	for _, ids := range s.Identities {
		jw.Int(int32(len(ids)))
		for i := range ids {
			ids[i].Encode(jw)
		}
	}
}

// walkSorted visits n, at path, and its subtree depth-first with children
// in sorted order, so parents precede children and the order is
// deterministic. scratch is space shared across the recursion.
func walkSorted(path string, n *node, scratch *[]childEntry, f func(string, *node)) {
	f(path, n)
	kids := n.children()
	if kids == nil {
		return
	}
	start := len(*scratch)
	*scratch = kids.sorted(*scratch)
	end := len(*scratch)
	prefix := path + "/"
	if path == RootPath {
		prefix = RootPath
	}
	for i := start; i < end; i++ {
		e := (*scratch)[i]
		walkSorted(prefix+e.name, e.n, scratch, f)
	}
	clear((*scratch)[start:end])
	*scratch = (*scratch)[:start]
}

func encodeNode(jw *jute.Writer, path string, n *node, aclIdx int32) {
	jw.String(path)
	jw.Buffer(n.data)
	jw.Int(aclIdx)
	jw.Long(n.czxid)
	jw.Long(n.mzxid)
	jw.Long(n.pzxid())
	jw.Long(n.ctime)
	jw.Long(n.mtime)
	jw.Int(n.version)
	jw.Int(n.cversion())
	jw.Int(n.aversion())
	var owner, ttl int64
	switch n.kind() {
	case kindEphemeral:
		owner = n.owner
	case kindTTL:
		ttl = n.owner
	}
	jw.Int(int32(n.kind()))
	jw.Long(owner)
	jw.Long(ttl)
}

// snapWriter writes length-prefixed frames, remembering the first error.
type snapWriter struct {
	bw  *bufio.Writer
	jw  jute.Writer
	err error
	// staging collects frames in stage instead of writing them (a
	// SnapshotView's walk holds the tree's lock meanwhile: no I/O then).
	staging bool
	stage   []byte
}

func (s *snapWriter) raw(b []byte) {
	if s.staging {
		s.stage = append(s.stage, b...)
		return
	}
	if s.err == nil {
		_, s.err = s.bw.Write(b)
	}
}

// startStage makes frames collect in memory until flushStage.
func (s *snapWriter) startStage() { s.staging = true }

// flushStage writes what was staged and goes back to writing directly.
func (s *snapWriter) flushStage() {
	s.staging = false
	s.raw(s.stage)
	s.stage = s.stage[:0]
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
