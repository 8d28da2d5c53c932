package console

import (
	"context"
	"net/http"
	"sync"
	"time"
)

// EnsembleSource tells the ensemble page about the members. The server
// implements it from its own Raft state and the members' four-letter
// words, as zkraft status does.
type EnsembleSource interface {
	// Leadership is the leader this member knows (-1: none, an id no
	// member can have) and its term.
	// It is asked once a second, so it must be cheap.
	Leadership() (leaderID int64, term uint64)
	// Members reports every member's state now.
	Members(ctx context.Context) []MemberStatus
	// Sessions lists the ensemble's open sessions, lowest id first, and
	// tells how many are open: at most maxSessions of them, with at most
	// maxEphemerals ephemeral paths listed in all (every path: the
	// console hides those the login may not read), so that a page polling
	// it costs a member holding many sessions little.
	Sessions(maxSessions, maxEphemerals int) (list []SessionStatus, total int)
}

// SessionStatus is one open session and its ephemeral nodes. It never
// carries the session's password.
type SessionStatus struct {
	ID        int64
	TimeoutMs int32
	// Ephemerals are the session's ephemeral paths listed, sorted;
	// NumEphemerals counts all it owns, listed or not.
	Ephemerals    []string
	NumEphemerals int
}

// MemberStatus is one member's row on the ensemble page.
type MemberStatus struct {
	ID          int64   `json:"id"`
	Address     string  `json:"address"` // its client address
	Self        bool    `json:"self"`    // the member serving this console
	Role        string  `json:"role"`    // leader, follower, observer, standalone, read-only, RoleUnknown; "" if it did not answer
	Zxid        string  `json:"zxid,omitempty"`
	Lag         *int64  `json:"lag,omitempty"` // zxids behind the leader
	Connections int64   `json:"connections"`
	Sessions    int64   `json:"sessions"`
	Znodes      int64   `json:"znodes"`
	LatencyMin  int64   `json:"latencyMin"`
	LatencyAvg  float64 `json:"latencyAvg"`
	LatencyMax  int64   `json:"latencyMax"`
	Error       string  `json:"error,omitempty"`
}

// RoleUnknown is the role of a member that could not be asked (its
// client address is not known): not a member that did not answer.
const RoleUnknown = "unknown"

// leaderChange is one change of leader or term the console saw.
type leaderChange struct {
	At     time.Time `json:"at"`
	Leader int64     `json:"leader"`
	Term   uint64    `json:"term"`
}

// leaderLog keeps the last leadership changes.
type leaderLog struct {
	mu      sync.Mutex
	changes []leaderChange
}

// maxLeaderChanges is how many changes the page lists.
const maxLeaderChanges = 20

// note records (id, term) if it differs from the last change.
func (g *leaderLog) note(id int64, term uint64, at time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if n := len(g.changes); n > 0 && g.changes[n-1].Leader == id && g.changes[n-1].Term == term {
		return
	}
	g.changes = append(g.changes, leaderChange{At: at, Leader: id, Term: term})
	if len(g.changes) > maxLeaderChanges {
		g.changes = g.changes[len(g.changes)-maxLeaderChanges:]
	}
}

func (g *leaderLog) list() []leaderChange {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]leaderChange(nil), g.changes...)
}

// ensembleJSON is the ensemble page's data.
type ensembleJSON struct {
	Leader  int64          `json:"leader"`
	Term    uint64         `json:"term"`
	Members []MemberStatus `json:"members"`
	Changes []leaderChange `json:"changes"`
	Ops     []opJSON       `json:"ops"`
}

// handleEnsemble answers the members' states and the leadership changes
// seen since the console started.
func (c *Console) handleEnsemble(w http.ResponseWriter, r *http.Request) {
	out := ensembleJSON{Leader: -1, Members: []MemberStatus{}, Ops: c.ops.list()}
	if src := c.cfg.Ensemble; src != nil {
		out.Leader, out.Term = src.Leadership()
		// The leader shown is in the changes too, though housekeep has
		// not noted it yet (it looks once a second).
		c.lead.note(out.Leader, out.Term, time.Now())
		ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
		defer cancel()
		out.Members = src.Members(ctx)
	}
	out.Changes = c.lead.list()
	writeJSON(w, http.StatusOK, out)
}
