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
	// connection; the others drop theirs (ZooKeeper's session move). It
	// carries the member's id in one byte, so it is written only for ids
	// 0 to 255: every release reads it.
	kindSessionOwner entryKind = 3
	// kindSessionOwnerWide is kindSessionOwner for a member whose id does
	// not fit a byte (below 0 or above 255, which ZooKeeper takes): the
	// id as 8 bytes. Releases before it do not know this kind, so it is
	// written only when Node.wideIDsAllowed says every member reads it
	// (level 2).
	kindSessionOwnerWide entryKind = 6
	// kindEnsemble raises the ensemble's level and, the first time, sets
	// its id (level.go). Level 2: only a leader writes it, once every
	// member can read it. (Kind 5 is unused.)
	kindEnsemble entryKind = 4
)

// narrowID reports whether a server id fits kindSessionOwner's one byte,
// as every id of releases before wide ids did.
func narrowID(id int64) bool { return id >= 0 && id <= 255 }

// sessionOwnerEntry is the entry recording that member now holds
// session's connection: kindSessionOwner for an id that fits a byte (the
// bytes older releases wrote and read), kindSessionOwnerWide otherwise.
func sessionOwnerEntry(session, member int64) entry {
	kind := kindSessionOwner
	if !narrowID(member) {
		kind = kindSessionOwnerWide
	}
	return entry{Kind: kind, Session: session, Member: member}
}

// entry is a Raft log entry. Origin lets the proposing member find the
// request waiting for it; origins are unique per process run, so entries
// replayed after a restart match no waiter.
type entry struct {
	Kind    entryKind
	Origin  uint64
	Txn     *znode.Txn   // kindTxn
	Session int64        // kindSessionOwner, kindSessionOwnerWide
	Member  int64        // kindSessionOwner (0 to 255), kindSessionOwnerWide
	Code    jute.ErrCode // kindBarrier
	Level   uint8        // kindEnsemble
	ID      EnsembleID   // kindEnsemble
	Minted  int64        // kindEnsemble: unix ns, the proposer's clock
}

// encodedSize bounds what encode writes (one allocation per entry).
func (e *entry) encodedSize() int {
	n := 1 + 8 + 8 + 1 + 16 + 8
	switch {
	case e.Kind == kindTxn && e.Txn != nil:
		n += e.Txn.EncodedSize()
	case e.Kind == kindSessionOwnerWide:
		n += 7
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
		w.Raw([]byte{byte(e.Member)})
	case kindSessionOwnerWide:
		w.Long(e.Session)
		w.Long(e.Member)
	case kindEnsemble:
		w.Raw([]byte{e.Level})
		w.Raw(e.ID[:])
		w.Long(e.Minted)
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
		e.Member = int64(b[len(b)-1])
	case kindSessionOwnerWide:
		e.Session = r.Long()
		e.Member = r.Long()
		if r.Err() != nil || r.Remaining() != 0 {
			return entry{}, fmt.Errorf("ensemble: wide session owner entry: %w", jute.ErrMalformed)
		}
	case kindEnsemble:
		if len(b) != 9+1+16+8 {
			return entry{}, fmt.Errorf("ensemble: ensemble entry of %d bytes: %w", len(b), jute.ErrMalformed)
		}
		e.Level = b[9]
		copy(e.ID[:], b[10:26])
		r.Reset(b[26:])
		e.Minted = r.Long()
	default:
		return entry{}, fmt.Errorf("ensemble: unknown log entry kind %d", e.Kind)
	}
	return e, nil
}
