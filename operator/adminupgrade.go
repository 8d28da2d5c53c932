package operator

import (
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/zkraft/zkraft/backend"
)

// The AdminServer's upgrade commands (zkraft upgrade; ensemble/level.go):
//
//	GET  upgrade          the ensemble's id and level, this member's build
//	                      level, and each other member's, asked just now
//	POST upgrade_finish   on the leader, raise the ensemble to this build's
//	                      level once every member runs a build that can;
//	                      the credentials must hold every permission on "/"
//	                      (Authorize), as for snapshot
//
// A follower answers upgrade_finish with 409 and the leader's id.
const upgradeAsk = 3 * time.Second

// serveUpgrade answers upgrade and upgrade_finish.
func (a *Admin) serveUpgrade(w http.ResponseWriter, r *http.Request, finish bool) {
	s := newView(a.srv)
	name := "upgrade"
	if finish {
		name = "upgrade_finish"
	}
	reply := func(status int, obj jsonObj) {
		var b strings.Builder
		writeJackson(&b, obj.add("command", name))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, b.String())
	}
	lv, ok := s.node.(backend.Leveled)
	if !ok {
		reply(http.StatusNotImplemented, jsonObj{}.add("error", "this server is not a zkraft ensemble member"))
		return
	}
	if !finish {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			reply(http.StatusMethodNotAllowed, jsonObj{}.add("error", "use GET"))
			return
		}
		reply(http.StatusOK, levelJSON(lv.UpgradeStatus(upgradeAsk)).add("error", nil))
		return
	}
	if r.Method != http.MethodPost {
		reply(http.StatusMethodNotAllowed, jsonObj{}.add("error", "use POST"))
		return
	}
	if status, msg := a.Authorize(r); status != 0 {
		reply(status, jsonObj{}.add("error", msg))
		return
	}
	st, err := lv.RaiseLevel(upgradeAsk)
	out := levelJSON(st)
	if err != nil {
		// Not the leader, or a member that cannot run the level: nothing
		// was written.
		if id, _, ok := s.node.Leader(); ok && !st.Leader {
			out = out.add("leader_id", id)
		}
		reply(http.StatusConflict, out.add("error", err.Error()))
		return
	}
	reply(http.StatusOK, out.add("error", nil))
}

// levelJSON renders a level status as the upgrade commands answer it.
func levelJSON(st backend.LevelStatus) jsonObj {
	members := make([]any, 0, len(st.Members))
	for _, m := range st.Members {
		o := jsonObj{}.add("server_id", m.ServerID).add("addr", m.Addr).add("build_level", m.BuildLevel)
		if m.Err != "" {
			o = o.add("unreachable", m.Err)
		}
		members = append(members, o)
	}
	return jsonObj{}.add("ensemble_id", st.EnsembleID).add("level", st.Level).add("build_level", st.BuildLevel).
		add("leader", st.Leader).add("members", members)
}
