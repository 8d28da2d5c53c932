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
