package console

import (
	"net/http"

	"github.com/zkraft/zkraft/internal/cli/zkjson"
)

// Bounds on the sessions page.
const (
	maxSessionsShown   = 500
	maxEphemeralsShown = 2000
)

// sessionJSON is one session on the page: its ephemerals the login may
// read, how many others it holds that the login may not read, and how
// many were not looked at (the page's bounds).
type sessionJSON struct {
	ID         string   `json:"id"`
	TimeoutMs  int32    `json:"timeoutMs"`
	Yours      bool     `json:"yours,omitempty"`    // the login's own session
	LiveView   bool     `json:"liveView,omitempty"` // the session of one of the login's live streams
	Ephemerals []string `json:"ephemerals"`
	Hidden     int      `json:"hidden,omitempty"`   // ephemerals the login may not read
	Unlisted   int      `json:"unlisted,omitempty"` // ephemerals beyond the page's bounds
}

// sessionsJSON answers api/sessions.
type sessionsJSON struct {
	Sessions  []sessionJSON `json:"sessions"`
	Total     int           `json:"total"`
	Truncated bool          `json:"truncated"`
}

// handleSessions lists the open sessions with their ephemerals, up to
// maxSessionsShown sessions and maxEphemeralsShown paths (the source
// lists no more, so a member with many sessions is not asked for all of
// them every time the page polls). A path is shown only if the login's
// own exists on it succeeds: exists needs READ, so an ephemeral's path is
// told only to whoever may read the node, as the tree would.
func (c *Console) handleSessions(w http.ResponseWriter, r *http.Request) {
	out := sessionsJSON{Sessions: []sessionJSON{}}
	if c.cfg.Ensemble == nil {
		writeJSON(w, http.StatusOK, out)
		return
	}
	l := current(r)
	all, total := c.cfg.Ensemble.Sessions(maxSessionsShown, maxEphemeralsShown)
	out.Total = max(total, len(all))
	if len(all) > maxSessionsShown {
		all = all[:maxSessionsShown]
	}
	out.Truncated = out.Total > len(all)
	type check struct{ session, index int }
	var checks []check
	listed := make([]int, len(all))
	out.Sessions = make([]sessionJSON, len(all))
	for i, s := range all {
		_, live := l.liveIDs.Load(s.ID)
		out.Sessions[i] = sessionJSON{ID: zkjson.Hex(s.ID), TimeoutMs: s.TimeoutMs, Yours: s.ID == l.conn.SessionID(),
			LiveView: live, Ephemerals: make([]string, len(s.Ephemerals))}
		for j := range s.Ephemerals {
			if len(checks) == maxEphemeralsShown {
				break
			}
			checks = append(checks, check{i, j})
			listed[i]++
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
		out.Sessions[i].Ephemerals = shown
		out.Sessions[i].Hidden = listed[i] - len(shown)
		out.Sessions[i].Unlisted = max(all[i].NumEphemerals, len(all[i].Ephemerals)) - listed[i]
		if out.Sessions[i].Unlisted > 0 {
			out.Truncated = true
		}
	}
	writeJSON(w, http.StatusOK, out)
}
