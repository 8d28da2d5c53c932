package znode

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"

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
	if v := binary.BigEndian.Uint32(hdr[4:]); v != snapVersion {
		return nil, badSnap("unsupported version %d", v)
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
	lists := make([]*aclEntry, 0, min(int(nACL), 1024))
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
		k := aclKey(l)
		if t.acls.lists[k] != nil {
			return nil, badSnap("duplicate acl list")
		}
		e := &aclEntry{list: l}
		t.acls.lists[k] = e
		lists = append(lists, e)
	}
	for i := int64(0); i < nNodes; i++ {
		if err := s.readNode(t, lists, i == 0); err != nil {
			return nil, err
		}
	}
	for i := int32(0); i < nSess; i++ {
		r, err := s.frame()
		if err != nil {
			return nil, err
		}
		info := SessionInfo{ID: r.Long(), Timeout: r.Int(), Passwd: r.Buffer()}
		if err := done(r, "session"); err != nil {
			return nil, err
		}
		if t.sessions[info.ID] != nil {
			return nil, badSnap("duplicate session %#x", info.ID)
		}
		t.sessions[info.ID] = &session{info: info}
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
		if ValidatePath(p) != nil || p == RootPath {
			return nil, badSnap("bad quota path %q", p)
		}
		t.quotas[p] = struct{}{}
	}
	for k, e := range t.acls.lists {
		if e.refs == 0 {
			delete(t.acls.lists, k)
		}
	}
	// Rebuild the ephemeral, reaper and quota indexes.
	t.nEphem = 0
	for p, n := range t.nodes {
		t.indexNode(p, n)
	}
	return t, nil
}

// readNode reads one node frame and links it under its parent.
func (s *snapReader) readNode(t *Tree, lists []*aclEntry, first bool) error {
	r, err := s.frame()
	if err != nil {
		return err
	}
	path := r.String()
	n := &node{data: r.Buffer()}
	idx := r.Int()
	n.czxid, n.mzxid, n.pzxid = r.Long(), r.Long(), r.Long()
	n.ctime, n.mtime = r.Long(), r.Long()
	n.version, n.cversion, n.aversion = r.Int(), r.Int(), r.Int()
	kind := r.Int()
	n.owner, n.ttl = r.Long(), r.Long()
	if err := done(r, "node"); err != nil {
		return err
	}
	if idx < 0 || int(idx) >= len(lists) {
		return badSnap("node %q: acl index %d", path, idx)
	}
	if kind < int32(kindPersistent) || kind > int32(kindTTL) {
		return badSnap("node %q: kind %d", path, kind)
	}
	n.kind = nodeKind(kind)
	if first != (path == RootPath) {
		return badSnap("root must come first, got %q", path)
	}
	if t.nodes[path] != nil {
		return badSnap("duplicate node %q", path)
	}
	if !first {
		if ValidatePath(path) != nil {
			return badSnap("invalid path %q", path)
		}
		parentPath, name, _ := splitPath(path)
		parent := t.lookup(parentPath)
		if parent == nil {
			return badSnap("node %q before its parent", path)
		}
		if parent.kind == kindEphemeral {
			return badSnap("node %q under an ephemeral", path)
		}
		parent.addChild(name)
	}
	n.acl = lists[idx].list
	lists[idx].refs++
	t.nodes[path] = n
	t.dataSize += int64(len(path) + len(n.data))
	return nil
}
