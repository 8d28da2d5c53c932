package datadir

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/zkraft/zkraft/jute"
)

// maxStreamField bounds one length-prefixed field read from a stream, so
// garbage in a length cannot make the reader allocate gigabytes.
const maxStreamField = 256 << 20

// StreamReader decodes Jute's binary archive from a stream that carries
// no outer length, as ZooKeeper's quorum connections do (a leader writes
// records and a snapshot back to back). The first error sticks: later
// reads return zero values and Err reports it.
type StreamReader struct {
	r   *bufio.Reader
	err error
	buf [8]byte
}

// NewStreamReader reads from r.
func NewStreamReader(r *bufio.Reader) *StreamReader { return &StreamReader{r: r} }

// Err is the first error met, nil if none.
func (s *StreamReader) Err() error { return s.err }

func (s *StreamReader) fill(n int) []byte {
	if s.err != nil {
		return nil
	}
	if _, err := io.ReadFull(s.r, s.buf[:n]); err != nil {
		s.err = fmt.Errorf("datadir: stream: %w", err)
		return nil
	}
	return s.buf[:n]
}

// Int reads a 4-byte big-endian integer.
func (s *StreamReader) Int() int32 {
	b := s.fill(4)
	if b == nil {
		return 0
	}
	return int32(binary.BigEndian.Uint32(b))
}

// Long reads an 8-byte big-endian integer.
func (s *StreamReader) Long() int64 {
	b := s.fill(8)
	if b == nil {
		return 0
	}
	return int64(binary.BigEndian.Uint64(b))
}

// Buffer reads a length-prefixed byte string; length -1 is null (nil).
func (s *StreamReader) Buffer() []byte {
	n := s.Int()
	if s.err != nil || n == -1 {
		return nil
	}
	if n < -1 || n > maxStreamField {
		s.err = fmt.Errorf("%w: stream field of %d bytes", ErrCorrupt, n)
		return nil
	}
	if n <= streamChunk {
		b := make([]byte, n)
		if _, err := io.ReadFull(s.r, b); err != nil {
			s.err = fmt.Errorf("datadir: stream: %w", err)
			return nil
		}
		return b
	}
	// A large field grows as its bytes arrive: a length alone (four
	// bytes on the wire) must not cost its whole size in memory.
	var buf bytes.Buffer
	buf.Grow(streamChunk)
	if _, err := io.CopyN(&buf, s.r, int64(n)); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		s.err = fmt.Errorf("datadir: stream: %w", err)
		return nil
	}
	return buf.Bytes()
}

// streamChunk is the size up to which a field's buffer is allocated at
// once, before its bytes are read.
const streamChunk = 64 << 10

// String reads a length-prefixed UTF-8 string; null reads as "".
func (s *StreamReader) String() string { return string(s.Buffer()) }

// Ids reads a vector<Id> (QuorumPacket's authinfo); null reads as nil.
func (s *StreamReader) Ids() []jute.Id {
	n := s.Int()
	if s.err != nil || n == -1 {
		return nil
	}
	if n < 0 || n > maxStreamField/8 {
		s.err = fmt.Errorf("%w: stream vector of %d", ErrCorrupt, n)
		return nil
	}
	out := make([]jute.Id, 0, min(n, 64))
	for i := int32(0); i < n && s.err == nil; i++ {
		out = append(out, jute.Id{Scheme: s.String(), ID: s.String()})
	}
	return out
}

// acls reads a vector<ACL>.
func (s *StreamReader) acls() []jute.ACL {
	n := s.Int()
	if s.err != nil || n == -1 {
		return nil
	}
	if n < 0 || n > maxStreamField/12 {
		s.err = fmt.Errorf("%w: stream vector of %d", ErrCorrupt, n)
		return nil
	}
	out := make([]jute.ACL, 0, min(n, 64))
	for i := int32(0); i < n && s.err == nil; i++ {
		perms := s.Int()
		out = append(out, jute.ACL{Perms: perms, ID: jute.Id{Scheme: s.String(), ID: s.String()}})
	}
	return out
}

// ReadSnapshotBody reads a snapshot without its file header and seal, as
// a ZooKeeper leader sends it to a learner after SNAP
// (ZKDatabase.serializeSnapshot: the sessions, then the DataTree: the ACL
// cache and every node, parents first, ended by the path "/"). zxid is
// the SNAP packet's. The stream is left just after the tree.
func ReadSnapshotBody(s *StreamReader, zxid int64) (*Snapshot, error) {
	snap := &Snapshot{Zxid: zxid, ACLs: map[int64][]jute.ACL{}}
	n := s.Int()
	for i := int32(0); i < n && s.Err() == nil; i++ {
		snap.Sessions = append(snap.Sessions, Session{ID: s.Long(), Timeout: s.Int()})
	}
	n = s.Int()
	for i := int32(0); i < n && s.Err() == nil; i++ {
		id := s.Long()
		snap.ACLs[id] = s.acls()
	}
	for s.Err() == nil {
		path := s.String()
		if path == "/" {
			break
		}
		node := Node{Path: path, Data: s.Buffer(), ACL: s.Long()}
		st := &node.Stat
		st.Czxid, st.Mzxid, st.Ctime, st.Mtime = s.Long(), s.Long(), s.Long(), s.Long()
		st.Version, st.Cversion, st.Aversion = s.Int(), s.Int(), s.Int()
		st.EphemeralOwner, st.Pzxid = s.Long(), s.Long()
		if path == "" {
			node.Path = "/"
		}
		snap.Nodes = append(snap.Nodes, node)
	}
	if err := s.Err(); err != nil {
		return nil, fmt.Errorf("%w: snapshot stream: %w", ErrCorrupt, err)
	}
	if len(snap.Nodes) == 0 || snap.Nodes[0].Path != "/" {
		return nil, fmt.Errorf("%w: snapshot stream does not start with the root", ErrCorrupt)
	}
	return snap, nil
}
