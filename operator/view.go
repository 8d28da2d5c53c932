package operator

import (
	"github.com/zkraft/zkraft/backend"
	"github.com/zkraft/zkraft/internal/base/buildinfo"
	"github.com/zkraft/zkraft/session"
)

// Version is reported by srvr, stat, mntr and envi in ZooKeeper's format,
// so tools parsing "Zookeeper version: X.Y.Z" keep working; after the
// release come zkraft's module version and revision (internal/base/buildinfo):
// "3.9.3-zkraft-v1.2.0-0123456789ab, built on 2026-11-21 00:00 UTC".
var Version = buildinfo.Read().ZooKeeperVersion()

// view is a session.Server as the operator surfaces read it: its member
// and its configuration, taken once per command.
type view struct {
	srv  *session.Server
	node backend.Member
	cfg  session.Config
}

func newView(srv *session.Server) view {
	return view{srv: srv, node: memberOf(srv), cfg: srv.Config()}
}

// absent reports whether the server has no member (memberOf): then it is
// not asked its mode, which it would take from the member.
func (s view) absent() bool {
	_, ok := s.node.(absentMember)
	return ok
}

// mode is the member's role for srvr and mntr (session.Server.Mode), ""
// without a member.
func (s view) mode() string {
	if s.absent() {
		return ""
	}
	return s.srv.Mode()
}

// serving reports whether this member serves clients
// (session.Server.Serving); never without a member.
func (s view) serving() bool { return !s.absent() && s.srv.Serving() }

// logDir is the directory holding the replicated log (Env "dataLogDir"),
// the data directory when it is not set apart.
func (s view) logDir() string {
	if d := s.cfg.Env["dataLogDir"]; d != "" {
		return d
	}
	return s.cfg.Env["dataDir"]
}

func (s view) treeStats() (znodes, ephemerals int, dataSize int64, sessions int) {
	t := s.node.RLockTree()
	st := t.Stats()
	s.node.RUnlockTree()
	return st.ZnodeCount, st.Ephemerals, st.DataSize, st.Sessions
}

// resetStats is srst and the AdminServer's stat_reset: ZooKeeper's
// ServerStats.reset, which also starts its metrics' summaries over
// (proposal sizes, fsync, snapshot and election times) where the member
// keeps them.
func (s view) resetStats() {
	s.srv.ResetStats()
	if r, ok := s.node.(backend.FigureResetter); ok {
		r.ResetProposalSizes()
		r.ResetFsyncTimes()
	}
	if r, ok := s.node.(backend.Timings); ok {
		r.ResetTimings()
	}
}
