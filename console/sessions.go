package console

import "net/http"

// Bounds on the sessions page.
const (
	maxSessionsShown   = 500
	maxEphemeralsShown = 2000
)

// sessionJSON is one session on the page: its ephemerals the login may
// read, and how many others it holds.
type sessionJSON struct {
	ID         string   `json:"id"`
	TimeoutMs  int32    `json:"timeoutMs"`
	Yours      bool     `json:"yours,omitempty"`    // the login's own session
	LiveView   bool     `json:"liveView,omitempty"` // the session of one of the login's live streams
	Ephemerals []string `json:"ephemerals"`
	Hidden     int      `json:"hidden,omitempty"` // ephemerals the login may not read
}

// sessionsJSON answers api/sessions.
type sessionsJSON struct {
	Sessions  []sessionJSON `json:"sessions"`
	Total     int           `json:"total"`
	Truncated bool          `json:"truncated"`
}

// handleSessions lists the open sessions with their ephemerals. A path is
// shown only if the login's own exists on it succeeds: exists needs READ,
// so an ephemeral's path is told only to whoever may read the node, as
// the tree would.
func (c *Console) handleSessions(w http.ResponseWriter, r *http.Request) {
	out := sessionsJSON{Sessions: []sessionJSON{}}
	if c.cfg.Ensemble == nil {
		writeJSON(w, http.StatusOK, out)
		return
	}
	l := current(r)
	all := c.cfg.Ensemble.Sessions()
	out.Total = len(all)
	if len(all) > maxSessionsShown {
		all, out.Truncated = all[:maxSessionsShown], true
	}
	type check struct{ session, index int }
	var checks []check
	out.Sessions = make([]sessionJSON, len(all))
	for i, s := range all {
		_, live := l.liveIDs.Load(s.ID)
		out.Sessions[i] = sessionJSON{ID: hex(s.ID), TimeoutMs: s.TimeoutMs, Yours: s.ID == l.conn.SessionID(),
			LiveView: live, Ephemerals: make([]string, len(s.Ephemerals))}
		for j := range s.Ephemerals {
			if len(checks) == maxEphemeralsShown {
				out.Truncated = true
				break
			}
			checks = append(checks, check{i, j})
		}
	}
	readable := make([]bool, len(checks))
	forEach(len(checks), func(k int) {
		p := all[checks[k].session].Ephemerals[checks[k].index]
		ok, _, err := l.zk.Exists(p)
		readable[k] = ok && err == nil
	})
	for k, ch := range checks {
		p := all[ch.session].Ephemerals[ch.index]
		if readable[k] {
			out.Sessions[ch.session].Ephemerals[ch.index] = p
		}
	}
	for i := range out.Sessions {
		shown := out.Sessions[i].Ephemerals[:0]
		for _, p := range out.Sessions[i].Ephemerals {
			if p != "" {
				shown = append(shown, p)
			}
		}
		out.Sessions[i].Hidden = len(all[i].Ephemerals) - len(shown)
		out.Sessions[i].Ephemerals = shown
	}
	writeJSON(w, http.StatusOK, out)
}
