package znode

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/zkraft/zkraft/jute"
)

// A session's identities (ip, digest, super, sasl, x509) decide its
// writes' permissions, so every member must know them when it applies a
// write. Carrying them in every write made a session with large
// identities cost the log that much per write, failed writes included (10
// addauths of 1 MB, then 40 failing setData, wrote 440 MB). Instead a
// connection records its set once through the log (OpSetIdentities) and
// its writes name the set by its IdentityKey (Txn.IdsKey). The session
// table keeps a session's last few sets, so a write still in flight from
// a connection the session has left applies with that connection's own
// identities, as ZooKeeper applies it with its connection's authInfo.

// OpSetIdentities records a set of identities (Txn.Ids) for Txn.Session,
// for its writes to name by IdentityKey. zkraft's own transaction type,
// never on the wire.
const OpSetIdentities jute.Op = -1001

// Bounds on one connection's identities, enforced where they are gathered
// (addauth, SASL, TLS) and again when a set is recorded. ZooKeeper has
// none; real identities (user names, principals, certificate names) are
// far below them.
const (
	// MaxIdentities is the most identities one connection may hold.
	MaxIdentities = 32
	// MaxIdentityBytes bounds the sum of the identities' scheme and id
	// lengths.
	MaxIdentityBytes = 8 << 10
	// maxIdentitySets is how many sets the session table keeps per
	// session, the newest recorded last.
	maxIdentitySets = 4
)

// CheckIdentities reports a set of identities over the bounds as
// jute.ErrBadArguments.
func CheckIdentities(ids []jute.Id) error {
	if len(ids) > MaxIdentities {
		return fmt.Errorf("%w: %d identities (at most %d)", jute.ErrBadArguments, len(ids), MaxIdentities)
	}
	if n := IdentityBytes(ids); n > MaxIdentityBytes {
		return fmt.Errorf("%w: %d bytes of identities (at most %d)", jute.ErrBadArguments, n, MaxIdentityBytes)
	}
	return nil
}

// IdentityBytes is the size CheckIdentities bounds.
func IdentityBytes(ids []jute.Id) int {
	n := 0
	for _, id := range ids {
		n += len(id.Scheme) + len(id.ID)
	}
	return n
}

// IdentityKey names a set of identities: the first 8 bytes of the SHA-256
// of their length-prefixed encoding, in order; never zero. Only sets a
// session recorded itself are looked up under it, so a collision could
// only mix up sets the session holds anyway.
func IdentityKey(ids []jute.Id) uint64 {
	h := sha256.New()
	var n [4]byte
	for _, id := range ids {
		for _, s := range [2]string{id.Scheme, id.ID} {
			binary.BigEndian.PutUint32(n[:], uint32(len(s)))
			h.Write(n[:])
			h.Write([]byte(s))
		}
	}
	var sum [sha256.Size]byte
	k := binary.BigEndian.Uint64(h.Sum(sum[:0]))
	if k == 0 {
		k = 1
	}
	return k
}

// identities returns the set recorded under key, newest first.
func (s *session) identities(key uint64) ([]jute.Id, bool) {
	for i := len(s.idKeys) - 1; i >= 0; i-- {
		if s.idKeys[i] == key {
			return s.info.Identities[i], true
		}
	}
	return nil, false
}

// setIdentitySets makes sets the session's recorded identities (oldest
// first) and computes their keys.
func (s *session) setIdentitySets(sets [][]jute.Id) {
	if len(sets) == 0 {
		s.info.Identities, s.idKeys = nil, nil
		return
	}
	s.info.Identities = sets
	s.idKeys = make([]uint64, len(sets))
	for i, ids := range sets {
		s.idKeys[i] = IdentityKey(ids)
	}
}

// setIdentities applies OpSetIdentities: the set becomes the session's
// newest (moving there if it was already recorded), and only the newest
// maxIdentitySets are kept. The table's slices are never changed in
// place: SessionInfo copies share them.
func (a *applier) setIdentities() error {
	if err := a.checkSession(); err != nil {
		return err
	}
	if err := CheckIdentities(a.txn.Ids); err != nil {
		return jute.ErrBadArguments
	}
	s := a.t.sessions[a.txn.Session]
	key := IdentityKey(a.txn.Ids)
	sets := make([][]jute.Id, 0, min(len(s.info.Identities)+1, maxIdentitySets+1))
	for i, old := range s.info.Identities {
		if s.idKeys[i] != key {
			sets = append(sets, old)
		}
	}
	sets = append(sets, slices.Clone(a.txn.Ids))
	if len(sets) > maxIdentitySets {
		sets = sets[len(sets)-maxIdentitySets:]
	}
	s.setIdentitySets(sets)
	return nil
}

// callerIds returns the identities a write applies with: txn.Ids, or the
// session's set txn.IdsKey names. A key the session does not hold (more
// sets recorded since, or none) answers SessionMoved: the write comes from
// a connection the session has long left. A missing session yields none:
// the op's own session check answers.
func (a *applier) callerIds() ([]jute.Id, error) {
	if a.txn.IdsKey == 0 {
		return a.txn.Ids, nil
	}
	s := a.t.sessions[a.txn.Session]
	if s == nil {
		return nil, nil
	}
	ids, ok := s.identities(a.txn.IdsKey)
	if !ok {
		return nil, jute.ErrSessionMoved
	}
	return ids, nil
}
