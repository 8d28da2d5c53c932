package znode

import (
	"bytes"
	"fmt"

	"github.com/zkraft/zkraft/jute"
)

// Transaction formats: the first byte of an encoded Txn. Format 1 (logged
// before v2 existed) is still read: its writes carry their identities and
// apply with the member's own Options.
const (
	txnFormat1 = 1
	// txnFormat is what Encode writes: format 1 plus the option bits
	// (byte 1, so the leader can stamp them in place, StampOptions) and
	// the identity key after the time.
	txnFormat = 2
)

// Txn is one replicated write: a client request plus everything needed to
// apply it deterministically.
type Txn struct {
	// Type is OpCreate, OpCreate2, OpCreateContainer, OpCreateTTL, OpDelete,
	// OpSetData, OpSetACL, OpMulti, OpCreateSession, OpCloseSession,
	// OpDeleteContainer (the container/TTL reaper) or OpSetIdentities.
	Type jute.Op
	// Options are the options the write applies with, as the leader that
	// appended it had them (ensemble stamps them, StampOptions): every
	// member applies the write alike whatever its own configuration says,
	// as ZooKeeper's leader alone decides writes. Zero (a format 1 entry)
	// means the tree's own Options.
	Options OptionBits
	// Session is the caller's session (for createSession: the new id).
	Session int64
	// Time is the proposer's wall clock in ms since the epoch; ctime and
	// mtime come from it.
	Time int64
	// IdsKey names the caller's identities when they are not in Ids: the
	// IdentityKey of a set an earlier OpSetIdentities of the session
	// recorded, so a write does not carry them again (a session's
	// identities can be kilobytes). Zero means Ids.
	IdsKey uint64
	// Ids are the caller's identities; for OpSetIdentities, the set to
	// record.
	Ids []jute.Id
	// Timeout is the negotiated session timeout (createSession only).
	Timeout int32
	// Passwd is the session password (createSession only).
	Passwd []byte
	// Req is the raw jute request body as the client sent it
	// (CreateRequest, PathVersionRequest, SetDataRequest, SetACLRequest,
	// MultiRequest). For OpDeleteContainer it is a jute PathRequest.
	Req []byte
}

// NewDeleteContainerTxn returns the reaper's transaction deleting path
// (a container or TTL node) at time now (ms).
func NewDeleteContainerTxn(path string, now int64) *Txn {
	return &Txn{Type: jute.OpDeleteContainer, Time: now, Req: jute.Marshal(&jute.PathRequest{Path: path})}
}

// Encode appends the transaction to w (format 2):
//
//	byte format (2), byte Options, int Type, long Session, long Time,
//	long IdsKey, vector<Id> Ids, int Timeout, buffer Passwd, buffer Req
func (t *Txn) Encode(w *jute.Writer) {
	w.Buf = append(w.Buf, txnFormat, byte(t.Options))
	w.Int(int32(t.Type))
	w.Long(t.Session)
	w.Long(t.Time)
	w.Long(int64(t.IdsKey))
	w.Int(int32(len(t.Ids)))
	for i := range t.Ids {
		t.Ids[i].Encode(w)
	}
	w.Int(t.Timeout)
	w.Buffer(t.Passwd)
	w.Buffer(t.Req)
}

// EncodedSize is the number of bytes Encode writes, so a caller can size
// its buffer once.
func (t *Txn) EncodedSize() int {
	n := 2 + 4 + 8 + 8 + 8 + 4 + 4 + 4 + len(t.Passwd) + 4 + len(t.Req)
	for i := range t.Ids {
		n += 8 + len(t.Ids[i].Scheme) + len(t.Ids[i].ID)
	}
	return n
}

// DecodeTxn decodes a transaction encoded by Encode. Every byte must be
// consumed; errors wrap jute.ErrMalformed. The Txn shares nothing with b.
func DecodeTxn(b []byte) (*Txn, error) {
	var d TxnDecoder
	t, err := d.Decode(b)
	if err != nil {
		return nil, err
	}
	t.Passwd = bytes.Clone(t.Passwd)
	t.Req = bytes.Clone(t.Req)
	return t, nil
}

// TxnDecoder decodes a member's stream of transactions with fewer
// allocations than DecodeTxn: Passwd and Req alias the input, and the
// identities are decoded once for a run of transactions that carry the
// same ones (a session's writes all do), the decoded slice being shared by
// them. A decoded Txn is valid while its input is unchanged, and its Ids
// must not be modified. The zero TxnDecoder is ready; it is not safe for
// concurrent use.
type TxnDecoder struct {
	r      jute.Reader
	idsRaw []byte    // the encoding of ids
	ids    []jute.Id // the last identities decoded
}

// Decode decodes a transaction encoded by Encode, like DecodeTxn.
func (d *TxnDecoder) Decode(b []byte) (*Txn, error) {
	if len(b) == 0 || b[0] != txnFormat && b[0] != txnFormat1 {
		return nil, fmt.Errorf("%w: unknown txn format", jute.ErrMalformed)
	}
	t := &Txn{}
	format2 := b[0] == txnFormat
	if format2 {
		if len(b) < 2 {
			return nil, fmt.Errorf("decode txn: %w", jute.ErrMalformed)
		}
		t.Options = OptionBits(b[1])
		if !t.Options.valid() {
			return nil, fmt.Errorf("decode txn: %w: option bits %#x", jute.ErrMalformed, b[1])
		}
		b = b[2:]
	} else {
		b = b[1:]
	}
	r := &d.r
	r.Reset(b)
	t.Type = jute.Op(r.Int())
	t.Session = r.Long()
	t.Time = r.Long()
	if format2 {
		t.IdsKey = uint64(r.Long())
	}
	from := r.Offset()
	n, null := r.Count(8)
	if n > 0 && !null {
		for range n { // find the identities' extent without decoding them
			r.BufferView()
			r.BufferView()
		}
		if r.Err() == nil {
			t.Ids = d.identities(b[from:r.Offset()], n)
		}
	}
	t.Timeout = r.Int()
	t.Passwd = r.BufferView()
	t.Req = r.BufferView()
	if err := r.Err(); err != nil {
		return nil, fmt.Errorf("decode txn: %w", err)
	}
	if r.Remaining() != 0 {
		return nil, fmt.Errorf("decode txn: %w: %d trailing bytes", jute.ErrMalformed, r.Remaining())
	}
	return t, nil
}

// identities returns the n identities encoded in raw (their count first),
// reusing the previous ones when raw repeats their encoding.
func (d *TxnDecoder) identities(raw []byte, n int) []jute.Id {
	if d.ids != nil && bytes.Equal(raw, d.idsRaw) {
		return d.ids
	}
	ids := make([]jute.Id, n)
	var r jute.Reader
	r.Reset(raw)
	r.Int() // the count, already read
	for i := range ids {
		if ids[i].Decode(&r) != nil {
			return nil // cannot happen: raw was scanned with the same rules
		}
	}
	d.ids, d.idsRaw = ids, append(d.idsRaw[:0], raw...)
	return ids
}
