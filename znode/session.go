package znode

import (
	"slices"
	"strings"

	"github.com/zkraft/zkraft/jute"
)

// SessionInfo is a session as the replicated table records it.
type SessionInfo struct {
	ID      int64
	Timeout int32  // negotiated timeout, ms
	Passwd  []byte // 16-byte password; do not modify
	// Identities are the identity sets the session's connections recorded
	// (OpSetIdentities), oldest first, at most a few; do not modify.
	Identities [][]jute.Id
}

// session is a live session and the paths of its ephemeral nodes.
type session struct {
	info   SessionInfo
	idKeys []uint64 // IdentityKey of each of info.Identities
	// ephemerals are the paths of its ephemeral nodes, sorted; nil when
	// it has none.
	ephemerals *nameIndex
}

// addEphemeral records path as one of the session's ephemerals.
func (s *session) addEphemeral(path string) {
	if s.ephemerals == nil {
		s.ephemerals = newNameIndex(nil)
	}
	s.ephemerals.add(path)
}

// removeEphemeral forgets one of the session's ephemerals.
func (s *session) removeEphemeral(path string) {
	if s.ephemerals == nil {
		return
	}
	s.ephemerals.remove(path)
	if s.ephemerals.n == 0 {
		s.ephemerals = nil
	}
}

// numEphemerals is how many ephemerals the session owns.
func (s *session) numEphemerals() int {
	if s.ephemerals == nil {
		return 0
	}
	return s.ephemerals.n
}

// Session returns a live session by id.
func (t *Tree) Session(id int64) (SessionInfo, bool) {
	s := t.sessions[id]
	if s == nil {
		return SessionInfo{}, false
	}
	return s.info, true
}

// Sessions returns every live session, ordered by id.
func (t *Tree) Sessions() []SessionInfo {
	out := make([]SessionInfo, 0, len(t.sessions))
	for _, s := range t.sessions {
		out = append(out, s.info)
	}
	slices.SortFunc(out, func(a, b SessionInfo) int {
		switch {
		case a.ID < b.ID:
			return -1
		case a.ID > b.ID:
			return 1
		}
		return 0
	})
	return out
}

// SessionEntry is one live session as EachSession hands it out: its
// record and its ephemeral paths, sorted (immutable, as EphemeralNames
// gives them, so they may be read after the tree's lock is let go).
type SessionEntry struct {
	Info       SessionInfo
	Ephemerals ChildNames
}

// sessionChunk is how many sessions EachSession copies per hold of the
// tree's lock.
const sessionChunk = 1024

// EachSession calls fn with every live session, in no order, a chunk at a
// time: it holds the tree's read lock (lock and unlock take and release
// it) only while it copies up to sessionChunk sessions, and calls fn once
// it has let the lock go, with a slice valid until fn returns. It returns
// how many sessions it handed out. Walking a table of hundreds of
// thousands of sessions under one hold kept the FSM, and every read
// behind it, waiting that long.
//
// Go's map iteration is defined under changes made between its steps,
// and every change to the table is made under the write lock, between
// two holds: a session created or closed during the walk may or may not
// be handed out, none twice. A tree replaced between two holds (a
// snapshot installed) is no longer changed; the walk goes on over the
// table it began with.
func EachSession(lock func() *Tree, unlock func(), fn func([]SessionEntry)) int {
	buf := make([]SessionEntry, 0, sessionChunk) // allocated before the lock
	n := 0
	t := lock()
	for _, s := range t.sessions {
		var eph ChildNames
		if s.ephemerals != nil {
			eph = s.ephemerals.view()
		}
		buf = append(buf, SessionEntry{Info: s.info, Ephemerals: eph})
		if len(buf) == cap(buf) {
			unlock()
			fn(buf)
			n += len(buf)
			buf = buf[:0]
			lock()
		}
	}
	unlock()
	fn(buf)
	return n + len(buf)
}

// GetEphemerals returns the session's ephemeral paths that start with prefix
// (a plain string prefix, as ZooKeeper's getEphemerals), sorted. A prefix that
// is empty, blank or "/" after trimming (Java trim: chars <= space) selects all of them.
func (t *Tree) GetEphemerals(sessionID int64, prefix string) []string {
	return FilterEphemerals(t.EphemeralNames(sessionID), prefix)
}

// EphemeralNames returns the session's ephemeral paths, sorted, as an
// immutable ChildNames, in constant time: a caller may filter them
// (FilterEphemerals) after releasing the tree's lock.
func (t *Tree) EphemeralNames(sessionID int64) ChildNames {
	s := t.sessions[sessionID]
	if s == nil || s.ephemerals == nil {
		return ChildNames{}
	}
	return s.ephemerals.view()
}

// FilterEphemerals returns the paths of all that start with prefix, as
// GetEphemerals selects them.
func FilterEphemerals(all ChildNames, prefix string) []string {
	out := []string{}
	trimmed := strings.TrimFunc(prefix, func(r rune) bool { return r <= ' ' }) // Java String.trim
	all.Each(func(p string) {
		if trimmed == "" || trimmed == "/" || strings.HasPrefix(p, prefix) {
			out = append(out, p)
		}
	})
	return out
}

// NumEphemerals is the number of ephemeral nodes the session owns (0 for
// a session that is not live), without listing them.
func (t *Tree) NumEphemerals(sessionID int64) int {
	if s := t.sessions[sessionID]; s != nil {
		return s.numEphemerals()
	}
	return 0
}

// sessionPaths returns a session's ephemeral paths in deletion order:
// sorted, so every member deletes (and notifies) in the same order.
func (s *session) sessionPaths() []string {
	if s.ephemerals == nil {
		return nil
	}
	return s.ephemerals.view().AppendTo(nil)
}
