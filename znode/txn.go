package znode

import (
	"fmt"

	"github.com/zkraft/zkraft/jute"
)

// txnFormat is the first byte of an encoded Txn; it changes whenever the
// layout does.
const txnFormat = 1

// Txn is one replicated write: a client request plus everything needed to
// apply it deterministically.
type Txn struct {
	// Type is OpCreate, OpCreate2, OpCreateContainer, OpCreateTTL, OpDelete,
	// OpSetData, OpSetACL, OpMulti, OpCreateSession, OpCloseSession or
	// OpDeleteContainer (the container/TTL reaper).
	Type jute.Op
	// Session is the caller's session (for createSession: the new id).
	Session int64
	// Time is the proposer's wall clock in ms since the epoch; ctime and
	// mtime come from it.
	Time int64
	// Ids are the caller's identities.
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

// Encode appends the transaction to w.
func (t *Txn) Encode(w *jute.Writer) {
	w.Buf = append(w.Buf, txnFormat)
	w.Int(int32(t.Type))
	w.Long(t.Session)
	w.Long(t.Time)
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
	n := 1 + 4 + 8 + 8 + 4 + 4 + 4 + len(t.Passwd) + 4 + len(t.Req)
	for i := range t.Ids {
		n += 8 + len(t.Ids[i].Scheme) + len(t.Ids[i].ID)
	}
	return n
}

// DecodeTxn decodes a transaction encoded by Encode. Every byte must be
// consumed; errors wrap jute.ErrMalformed.
func DecodeTxn(b []byte) (*Txn, error) {
	if len(b) == 0 || b[0] != txnFormat {
		return nil, fmt.Errorf("%w: unknown txn format", jute.ErrMalformed)
	}
	r := jute.NewReader(b[1:])
	t := &Txn{}
	t.Type = jute.Op(r.Int())
	t.Session = r.Long()
	t.Time = r.Long()
	n, null := r.Count(8)
	if n > 0 && !null {
		t.Ids = make([]jute.Id, n)
		for i := range t.Ids {
			if err := t.Ids[i].Decode(r); err != nil {
				break
			}
		}
	}
	t.Timeout = r.Int()
	t.Passwd = r.Buffer()
	t.Req = r.Buffer()
	if err := r.Err(); err != nil {
		return nil, fmt.Errorf("decode txn: %w", err)
	}
	if r.Remaining() != 0 {
		return nil, fmt.Errorf("decode txn: %w: %d trailing bytes", jute.ErrMalformed, r.Remaining())
	}
	return t, nil
}
