package ensemble

import (
	"fmt"

	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// entryKind is the first byte of every log entry, so the format can evolve
// and members can carry control entries beside znode transactions.
type entryKind byte

const (
	// kindTxn carries a znode transaction.
	kindTxn entryKind = 1
	// kindBarrier changes nothing; applying it proves that everything
	// before it is applied (sync). It can carry an error code, which is
	// how a refused request (a reconfig the leader rejected) is answered in
	// order with the session's other replies.
	kindBarrier entryKind = 2
	// kindSessionOwner records which member now holds a session's
	// connection; the others drop theirs (ZooKeeper's session move).
	kindSessionOwner entryKind = 3
)

// entry is a Raft log entry. Origin lets the proposing member find the
// request waiting for it; origins are unique per process run, so entries
// replayed after a restart match no waiter.
type entry struct {
	Kind    entryKind
	Origin  uint64
	Txn     *znode.Txn   // kindTxn
	Session int64        // kindSessionOwner
	Member  uint8        // kindSessionOwner
	Code    jute.ErrCode // kindBarrier
}

// encodedSize bounds what encode writes (one allocation per entry).
func (e *entry) encodedSize() int {
	n := 1 + 8 + 8 + 1
	if e.Kind == kindTxn && e.Txn != nil {
		n += e.Txn.EncodedSize()
	}
	return n
}

func (e *entry) encode(w *jute.Writer) {
	w.Raw([]byte{byte(e.Kind)})
	w.Long(int64(e.Origin))
	switch e.Kind {
	case kindTxn:
		e.Txn.Encode(w)
	case kindBarrier:
		w.Int(int32(e.Code))
	case kindSessionOwner:
		w.Long(e.Session)
		w.Raw([]byte{e.Member})
	}
}

// decodeEntry decodes a log entry; a transaction in it is decoded by dec
// and aliases b (znode.TxnDecoder).
func decodeEntry(b []byte, dec *znode.TxnDecoder) (entry, error) {
	if len(b) < 9 {
		return entry{}, fmt.Errorf("ensemble: log entry of %d bytes", len(b))
	}
	e := entry{Kind: entryKind(b[0])}
	var r jute.Reader
	r.Reset(b[1:])
	e.Origin = uint64(r.Long())
	switch e.Kind {
	case kindTxn:
		txn, err := dec.Decode(b[9:])
		if err != nil {
			return entry{}, fmt.Errorf("ensemble: decode log entry: %w", err)
		}
		e.Txn = txn
	case kindBarrier:
		e.Code = jute.ErrCode(r.Int())
		if r.Err() != nil {
			return entry{}, fmt.Errorf("ensemble: barrier entry: %w", r.Err())
		}
	case kindSessionOwner:
		e.Session = r.Long()
		if r.Err() != nil || r.Remaining() != 1 {
			return entry{}, fmt.Errorf("ensemble: session owner entry: %w", jute.ErrMalformed)
		}
		e.Member = b[len(b)-1]
	default:
		return entry{}, fmt.Errorf("ensemble: unknown log entry kind %d", e.Kind)
	}
	return e, nil
}
