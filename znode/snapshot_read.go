package znode

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"strings"

	"github.com/zkraft/zkraft/jute"
)

// ReadSnapshot rebuilds a tree written by WriteSnapshot. Any malformed,
// truncated or inconsistent input yields an error wrapping ErrBadSnapshot
// (and the reader's error, if reading failed); it never panics.
func ReadSnapshot(r io.Reader, opts Options) (*Tree, error) {
	crc := crc32.NewIEEE()
	sr := &snapReader{r: io.TeeReader(bufio.NewReaderSize(r, 64<<10), crc)}
	t, err := sr.read(opts)
	if err != nil {
		return nil, err
	}
	want := crc.Sum32()
	var trailer [8]byte
	if _, err := io.ReadFull(sr.r, trailer[:]); err != nil {
		return nil, badSnapIO("trailer", err)
	}
	if string(trailer[:4]) != snapEnd || binary.BigEndian.Uint32(trailer[4:]) != want {
		return nil, badSnap("bad trailer or checksum")
	}
	return t, nil
}

// badSnapIO wraps both ErrBadSnapshot and the reader's error (io.EOF and
// io.ErrUnexpectedEOF for truncated input).
func badSnapIO(what string, err error) error {
	return fmt.Errorf("%w: %s: %w", ErrBadSnapshot, what, err)
}

func badSnap(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrBadSnapshot, fmt.Sprintf(format, args...))
}

// snapReader reads length-prefixed frames.
type snapReader struct {
	r   io.Reader
	buf []byte
	jr  jute.Reader
}

// frame reads the next frame and returns a reader over it.
func (s *snapReader) frame() (*jute.Reader, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(s.r, hdr[:]); err != nil {
		return nil, badSnapIO("frame header", err)
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n > maxFrame {
		return nil, badSnap("frame of %d bytes", n)
	}
	// Grow the buffer only as bytes actually arrive, so a garbage length
	// cannot make us allocate maxFrame up front.
	s.buf = s.buf[:0]
	for len(s.buf) < int(n) {
		chunk := min(int(n)-len(s.buf), max(len(s.buf), 64<<10))
		if cap(s.buf)-len(s.buf) < chunk {
			s.buf = append(s.buf[:cap(s.buf)], make([]byte, chunk)...)[:len(s.buf)]
		}
		m, err := io.ReadFull(s.r, s.buf[len(s.buf):len(s.buf)+chunk])
		s.buf = s.buf[:len(s.buf)+m]
		if err != nil {
			return nil, badSnapIO("frame body", err)
		}
	}
	s.jr.Reset(s.buf)
	return &s.jr, nil
}

// done checks that a frame decoded cleanly and completely.
func done(r *jute.Reader, what string) error {
	if err := r.Err(); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrBadSnapshot, what, err)
	}
	if r.Remaining() != 0 {
		return badSnap("%s: %d trailing bytes", what, r.Remaining())
	}
	return nil
}

func (s *snapReader) read(opts Options) (*Tree, error) {
	var hdr [8]byte
	if _, err := io.ReadFull(s.r, hdr[:]); err != nil {
		return nil, badSnapIO("header", err)
	}
	if string(hdr[:4]) != snapMagic {
		return nil, badSnap("bad magic")
	}
	version := binary.BigEndian.Uint32(hdr[4:])
	if version != snapVersion && version != snapVersion1 {
		return nil, badSnap("unsupported version %d", version)
	}
	r, err := s.frame()
	if err != nil {
		return nil, err
	}
	t := newEmptyTree(opts)
	t.lastZxid = r.Long()
	nACL := r.Int()
	nNodes := r.Long()
	nSess := r.Int()
	nQuota := r.Int()
	if err := done(r, "summary"); err != nil {
		return nil, err
	}
	if nACL < 0 || nNodes < 1 || nSess < 0 || nQuota < 0 {
		return nil, badSnap("bad counts")
	}
	for i := int32(0); i < nACL; i++ {
		r, err := s.frame()
		if err != nil {
			return nil, err
		}
		l := jute.ReadACLs(r)
		if err := done(r, "acl"); err != nil {
			return nil, err
		}
		if l == nil {
			l = []jute.ACL{}
		}
		k := ACLKey(l)
		if _, dup := t.acls.slots[k]; dup {
			return nil, badSnap("duplicate acl list")
		}
		// Into slot i: the cache is fresh, so slots are handed out in order.
		if _, ok := t.acls.add(k, l); !ok {
			return nil, badSnap("too many acl lists")
		}
	}
	var indexed []pathNode // ephemeral, container and TTL nodes
	for i := int64(0); i < nNodes; i++ {
		if err := s.readNode(t, &indexed, i == 0); err != nil {
			return nil, err
		}
	}
	for i := int32(0); i < nSess; i++ {
		r, err := s.frame()
		if err != nil {
			return nil, err
		}
		info := SessionInfo{ID: r.Long(), Timeout: r.Int(), Passwd: r.Buffer()}
		var sets [][]jute.Id
		if version >= 2 {
			if sets, err = readIdentitySets(r); err != nil {
				return nil, err
			}
		}
		if err := done(r, "session"); err != nil {
			return nil, err
		}
		if t.sessions[info.ID] != nil {
			return nil, badSnap("duplicate session %#x", info.ID)
		}
		ss := &session{info: info}
		ss.setIdentitySets(sets)
		t.sessions[info.ID] = ss
	}
	for i := int32(0); i < nQuota; i++ {
		r, err := s.frame()
		if err != nil {
			return nil, err
		}
		p := r.String()
		if err := done(r, "quota"); err != nil {
			return nil, err
		}
		if p != "" && p[0] != '/' {
			// Written by builds that took /zookeeper/quotaX/zookeeper_limits
			// for a quota on "X": it never matched a path, and a log
			// replayed now makes none.
			continue
		}
		if ValidatePath(p) != nil || p == RootPath {
			return nil, badSnap("bad quota path %q", p)
		}
		t.quotas.add(p) // spellings of one key (older builds) merge
	}
	for i := range t.acls.lists {
		if t.acls.lists[i].refs == 0 {
			t.acls.drop(aclRef(i))
		}
	}
	// Rebuild the ephemeral and reaper indexes and the descendant counts.
	for _, pn := range indexed {
		t.indexNode(pn.path, pn.n)
	}
	countDescendants(t.root)
	if err := t.Verify(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadSnapshot, err)
	}
	return t, nil
}

// pathNode is a node and its path.
type pathNode struct {
	path string
	n    *node
}

// readNode reads one node frame and links it under its parent. Nodes the
// session or reaper index will need are appended to indexed.
func (s *snapReader) readNode(t *Tree, indexed *[]pathNode, first bool) error {
	r, err := s.frame()
	if err != nil {
		return err
	}
	path := r.String()
	n := &node{data: r.Buffer()}
	idx := r.Int()
	var pzxid int64
	var cversion, aversion int32
	n.czxid, n.mzxid, pzxid = r.Long(), r.Long(), r.Long()
	n.ctime, n.mtime = r.Long(), r.Long()
	n.version, cversion, aversion = r.Int(), r.Int(), r.Int()
	kind := r.Int()
	owner, ttl := r.Long(), r.Long()
	if err := done(r, "node"); err != nil {
		return err
	}
	if idx < 0 || int(idx) >= len(t.acls.lists) {
		return badSnap("node %q: acl index %d", path, idx)
	}
	if kind < int32(kindPersistent) || kind > int32(kindTTL) {
		return badSnap("node %q: kind %d", path, kind)
	}
	n.setKind(nodeKind(kind))
	if pzxid != n.czxid || cversion != 0 || aversion != 0 {
		e := n.extend()
		e.pzxid, e.cversion, e.aversion = pzxid, cversion, aversion
	}
	// One field holds the owner of an ephemeral or the TTL of a TTL node;
	// WriteSnapshot writes 0 for the other.
	switch k := nodeKind(kind); {
	case k == kindEphemeral && ttl == 0:
		n.owner = owner
	case k == kindTTL && owner == 0:
		n.owner = ttl
	case owner != 0 || ttl != 0:
		return badSnap("node %q: kind %d with owner %d and ttl %d", path, kind, owner, ttl)
	}
	if first != (path == RootPath) {
		return badSnap("root must come first, got %q", path)
	}
	n.setACL(aclRef(idx))
	t.acls.lists[idx].refs++
	t.count++
	t.dataSize += int64(len(path) + len(n.data))
	if first {
		t.root = n
		return nil
	}
	if ValidatePath(path) != nil {
		return badSnap("invalid path %q", path)
	}
	parentPath, name, _ := splitPath(path)
	parent := t.lookup(parentPath)
	if parent == nil {
		return badSnap("node %q before its parent", path)
	}
	if parent.child(name) != nil {
		return badSnap("duplicate node %q", path)
	}
	if parent.kind() == kindEphemeral {
		return badSnap("node %q under an ephemeral", path)
	}
	parent.addChild(strings.Clone(name), n)
	t.childAdded(parentPath, parent)
	if n.kind() != kindPersistent {
		*indexed = append(*indexed, pathNode{path, n})
	}
	return nil
}

// readIdentitySets reads a session's identity sets (snapshot version 2).
func readIdentitySets(r *jute.Reader) ([][]jute.Id, error) {
	n, null := r.Count(4)
	if r.Err() != nil || null || n > maxIdentitySets {
		return nil, badSnap("bad identity sets")
	}
	var sets [][]jute.Id
	for range n {
		m, null := r.Count(8)
		if r.Err() != nil || null || m > MaxIdentities {
			return nil, badSnap("bad identity set")
		}
		ids := make([]jute.Id, m)
		for i := range ids {
			if ids[i].Decode(r) != nil {
				return nil, badSnap("bad identity")
			}
		}
		if CheckIdentities(ids) != nil {
			return nil, badSnap("identity set over the bounds")
		}
		sets = append(sets, ids)
	}
	return sets, nil
}
