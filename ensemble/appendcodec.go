package ensemble

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/hashicorp/raft"
)

// The append stream carries Raft's AppendEntries, the one RPC sent for
// every client write, in a hand-written encoding: hashicorp's
// NetworkTransport encodes it with reflection-driven msgpack, which was
// 10-14% of each member's CPU under a write load. Fields are uvarints,
// length-prefixed bytes and single bytes:
//
//	request:  version byte, header (protocol version, ID, Addr), Term,
//	          Leader, PrevLogEntry, PrevLogTerm, LeaderCommitIndex, entry
//	          count, then per entry Index, Term, Type byte, Data,
//	          Extensions, AppendedAt (varint Unix nanoseconds, 0 if unset)
//	response: error text (empty for none), header, Term, LastLog, flags
//	          byte (1 Success, 2 NoRetryBackoff)
const appendCodecVersion = 1

const (
	// maxAppendBatch bounds the entry count a request may announce.
	maxAppendBatch = 1 << 16
	// maxAppendField bounds one length-prefixed field.
	maxAppendField = 1 << 30
	// eagerAlloc is the largest field allocated before its bytes arrive;
	// longer ones grow as they are read, so a bogus length costs nothing.
	eagerAlloc = 64 << 10
)

var errAppendCodec = errors.New("ensemble: malformed append stream")

// appendEncoder writes append-stream fields to a buffered writer, whose
// error is sticky and reported by Flush.
type appendEncoder struct {
	w       *bufio.Writer
	scratch [binary.MaxVarintLen64]byte

	// commitLimit, if set, caps the commit index a request carries (the
	// leader's durable index, asynclog.go); commitSent is what the last
	// request carried.
	commitLimit func() uint64
	commitSent  uint64
}

func (e *appendEncoder) uvarint(v uint64) {
	n := binary.PutUvarint(e.scratch[:], v)
	_, _ = e.w.Write(e.scratch[:n])
}

func (e *appendEncoder) varint(v int64) {
	n := binary.PutVarint(e.scratch[:], v)
	_, _ = e.w.Write(e.scratch[:n])
}

func (e *appendEncoder) bytes(b []byte) {
	e.uvarint(uint64(len(b)))
	_, _ = e.w.Write(b)
}

func (e *appendEncoder) header(h *raft.RPCHeader) {
	e.uvarint(uint64(h.ProtocolVersion))
	e.bytes(h.ID)
	e.bytes(h.Addr)
}

// request writes an AppendEntries request and flushes it. committed, if
// above the request's own commit index, is sent instead: an index the
// leader knows to be committed since Raft built the request.
func (e *appendEncoder) request(req *raft.AppendEntriesRequest, committed uint64) error {
	_ = e.w.WriteByte(appendCodecVersion)
	e.header(&req.RPCHeader)
	e.uvarint(req.Term)
	e.bytes(req.Leader)
	e.uvarint(req.PrevLogEntry)
	e.uvarint(req.PrevLogTerm)
	commit := max(req.LeaderCommitIndex, committed)
	if e.commitLimit != nil {
		commit = min(commit, e.commitLimit())
	}
	e.commitSent = commit
	e.uvarint(commit)
	e.uvarint(uint64(len(req.Entries)))
	for _, l := range req.Entries {
		e.uvarint(l.Index)
		e.uvarint(l.Term)
		_ = e.w.WriteByte(byte(l.Type))
		e.bytes(l.Data)
		e.bytes(l.Extensions)
		var at int64
		if !l.AppendedAt.IsZero() {
			at = l.AppendedAt.UnixNano()
		}
		e.varint(at)
	}
	return e.w.Flush()
}

// response writes an AppendEntries response (or the error answering the
// request) without flushing.
func (e *appendEncoder) response(resp *raft.AppendEntriesResponse, rpcErr error) {
	if rpcErr != nil {
		e.bytes([]byte(rpcErr.Error()))
	} else {
		e.bytes(nil)
	}
	if resp == nil {
		resp = &raft.AppendEntriesResponse{}
	}
	e.header(&resp.RPCHeader)
	e.uvarint(resp.Term)
	e.uvarint(resp.LastLog)
	var flags byte
	if resp.Success {
		flags |= 1
	}
	if resp.NoRetryBackoff {
		flags |= 2
	}
	_ = e.w.WriteByte(flags)
}

// appendDecoder reads append-stream fields, remembering the first error.
type appendDecoder struct {
	r   *bufio.Reader
	err error
	// slab is where small entries' data are read into, one after the
	// other, instead of one allocation each; an entry keeps its slab alive
	// (up to slabSize), as the batch's raft.Log array does.
	slab []byte
}

const (
	// slabSize is the size of a slab of entry data.
	slabSize = 64 << 10
	// slabMax is the largest entry read into a slab.
	slabMax = 4 << 10
)

func (d *appendDecoder) fail(err error) {
	if d.err == nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			d.err = err
		} else {
			d.err = fmt.Errorf("%w: %w", errAppendCodec, err)
		}
	}
}

func (d *appendDecoder) byte() byte {
	if d.err != nil {
		return 0
	}
	b, err := d.r.ReadByte()
	if err != nil {
		d.fail(err)
	}
	return b
}

func (d *appendDecoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, err := binary.ReadUvarint(d.r)
	if err != nil {
		d.fail(err)
	}
	return v
}

func (d *appendDecoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, err := binary.ReadVarint(d.r)
	if err != nil {
		d.fail(err)
	}
	return v
}

// bytes reads a length-prefixed field; empty reads as nil.
func (d *appendDecoder) bytes() []byte {
	n := d.uvarint()
	if d.err != nil || n == 0 {
		return nil
	}
	return d.field(n)
}

// field reads a field of n bytes (n > 0) into memory of its own.
func (d *appendDecoder) field(n uint64) []byte {
	if n > maxAppendField {
		d.fail(fmt.Errorf("field of %d bytes", n))
		return nil
	}
	b, err := readSized(d.r, n)
	if err != nil {
		d.fail(err)
		return nil
	}
	return b
}

// entryData reads an entry's data like bytes, the small ones into the slab.
func (d *appendDecoder) entryData() []byte {
	n := d.uvarint()
	if d.err != nil || n == 0 {
		return nil
	}
	if n > slabMax {
		return d.field(n)
	}
	if uint64(cap(d.slab)-len(d.slab)) < n {
		d.slab = make([]byte, 0, slabSize)
	}
	at := len(d.slab)
	d.slab = d.slab[:at+int(n)]
	b := d.slab[at : at+int(n) : at+int(n)]
	if _, err := io.ReadFull(d.r, b); err != nil {
		d.fail(err)
		return nil
	}
	return b
}

func (d *appendDecoder) header(h *raft.RPCHeader) {
	h.ProtocolVersion = raft.ProtocolVersion(d.uvarint())
	h.ID = d.bytes()
	h.Addr = d.bytes()
}

// request reads an AppendEntries request.
func (d *appendDecoder) request(req *raft.AppendEntriesRequest) error {
	if v := d.byte(); d.err == nil && v != appendCodecVersion {
		d.fail(fmt.Errorf("version %d", v))
	}
	d.header(&req.RPCHeader)
	req.Term = d.uvarint()
	req.Leader = d.bytes()
	req.PrevLogEntry = d.uvarint()
	req.PrevLogTerm = d.uvarint()
	req.LeaderCommitIndex = d.uvarint()
	n := d.uvarint()
	if d.err == nil && n > maxAppendBatch {
		d.fail(fmt.Errorf("%d entries", n))
	}
	if d.err != nil {
		return d.err
	}
	if n > 0 {
		logs := make([]raft.Log, n)
		req.Entries = make([]*raft.Log, n)
		for i := range logs {
			l := &logs[i]
			l.Index = d.uvarint()
			l.Term = d.uvarint()
			l.Type = raft.LogType(d.byte())
			l.Data = d.entryData()
			l.Extensions = d.bytes()
			if at := d.varint(); at != 0 {
				l.AppendedAt = time.Unix(0, at)
			}
			req.Entries[i] = l
		}
	}
	return d.err
}

// response reads an AppendEntries response. A non-nil remote error is
// what the peer answered; the stream itself is still in step.
func (d *appendDecoder) response(resp *raft.AppendEntriesResponse) (remote error, err error) {
	text := d.bytes()
	d.header(&resp.RPCHeader)
	resp.Term = d.uvarint()
	resp.LastLog = d.uvarint()
	flags := d.byte()
	if d.err != nil {
		return nil, d.err
	}
	resp.Success = flags&1 != 0
	resp.NoRetryBackoff = flags&2 != 0
	if len(text) > 0 {
		return errors.New(string(text)), nil
	}
	return nil, nil
}
