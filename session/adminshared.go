package session

// What the AdminServer (admin.go) shares with the four-letter words, which
// moved to package operator; it follows them there.

import (
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/zkraft/zkraft/internal/buildinfo"
	"github.com/zkraft/zkraft/znode"
)

// Version is reported by srvr, stat, mntr and envi in ZooKeeper's format,
// so tools parsing "Zookeeper version: X.Y.Z" keep working; after the
// release come zkraft's module version and revision (internal/buildinfo):
// "3.9.3-zkraft-v1.2.0-0123456789ab, built on 2026-11-21 00:00 UTC".
var Version = buildinfo.Read().ZooKeeperVersion()

// notServing is ZooKeeper's answer to most four-letter words while its
// server is not running: a member of an ensemble without a quorum (and not
// serving read-only clients), e.g. between leaders or cut off from the
// majority. Health checks that look for "Mode:" in srvr rely on it.
const notServing = "This ZooKeeper instance is not currently serving requests\n"

// serving reports whether this member serves clients: it is part of a
// working majority, or serves read-only clients without one
// (readonlymode.enabled).
func (s *Server) serving() bool { return s.node.HasQuorum() || s.cfg.ReadOnlyMode }

// javaDouble formats f as Java's Double.toString does: plain decimals
// from 10^-3 up to 10^7 ("0.0", "5.75", "0.3333333333333333"), and
// Java's scientific notation outside that range ("5.0E-4", "1.25E7").
func javaDouble(f float64) string {
	if a := math.Abs(f); a != 0 && (a < 1e-3 || a >= 1e7) && !math.IsInf(f, 0) && !math.IsNaN(f) {
		mant, exp, _ := strings.Cut(strconv.FormatFloat(f, 'E', -1, 64), "E")
		if !strings.Contains(mant, ".") {
			mant += ".0"
		}
		e, _ := strconv.Atoi(exp)
		return mant + "E" + strconv.Itoa(e)
	}
	out := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(out, ".") {
		out += ".0"
	}
	return out
}

// javaAvg is an AvgMinMaxCounter's average as ZooKeeper prints it: total /
// count rounded half up to four decimals, 0.0 before the first sample.
func javaAvg(total, count int64) string {
	if count == 0 {
		return "0.0"
	}
	return javaDouble(math.Round(float64(total)/float64(count)*1e4) / 1e4)
}

func (s *Server) treeStats() (znodes, ephemerals int, dataSize int64, sessions int) {
	t := s.node.RLockTree()
	st := t.Stats()
	s.node.RUnlockTree()
	return st.ZnodeCount, st.Ephemerals, st.DataSize, st.Sessions
}

// monitorValue is one monitoring figure, shared by mntr and /metrics.
type monitorValue struct {
	key   string // without the zk_ prefix
	value any
	gauge bool // a level rather than an ever-growing counter
}

// monitorValues are the figures mntr prints and /metrics exports.
func (s *Server) monitorValues() []monitorValue {
	znodes, ephemerals, dataSize, sessions := s.treeStats()
	_, _, watches := s.node.Watches().Stats()
	lmin, lavg, lmax := s.stats.latencies()
	fsync := s.node.FsyncTimes()
	out := []monitorValue{
		{"version", Version, true},
		{"server_state", s.mode(), true},
		{"ephemerals_count", ephemerals, true},
		{"num_alive_connections", s.numConns(), true},
		{"avg_latency", javaDouble(lavg), true},
		{"outstanding_requests", s.stats.outstanding.Load(), true},
		{"znode_count", znodes, true},
		{"global_sessions", sessions, true},
		{"local_sessions", 0, true},
		{"packets_sent", s.stats.packetsSent.Load(), false},
		{"packets_received", s.stats.packetsReceived.Load(), false},
		{"watch_count", watches, true},
		{"auth_failed_count", s.stats.authFailed.Load(), false},
		{"min_latency", lmin, true},
		{"max_latency", lmax, true},
		{"max_file_descriptor_count", maxFDs(), true},
		{"open_file_descriptor_count", openFDs(), true},
		{"approximate_data_size", dataSize, true},
		// ZooKeeper's fsynctime summary: the log's syncs, in milliseconds.
		{"avg_fsynctime", javaAvg(fsync.SumMs, fsync.Count), true},
		{"min_fsynctime", fsync.MinMs, true},
		{"max_fsynctime", fsync.MaxMs, true},
		{"cnt_fsynctime", fsync.Count, false},
		{"sum_fsynctime", fsync.SumMs, false},
		{"uptime", time.Since(s.stats.started).Milliseconds(), false},
	}
	mode := s.node.Mode()
	if state, ok := peerStates[mode]; ok {
		// Every member of an ensemble: its role and the voting members.
		out = append(out,
			monitorValue{"peer_state", state, true},
			monitorValue{"quorum_size", s.node.QuorumSize(), true})
	}
	if mode == "leader" {
		// ZooKeeper 3.8's leader figures (LeaderZooKeeperServer's gauges),
		// plus followers, the learner count under its 3.4 name that older
		// monitoring still reads. Only learners answering the leader count,
		// so a member that is down shows, as with ZooKeeper.
		voters, observers := s.node.SyncedFollowers()
		out = append(out,
			monitorValue{"learners", voters + observers, true},
			monitorValue{"synced_followers", voters, true},
			monitorValue{"synced_non_voting_followers", 0, true},
			monitorValue{"synced_observers", observers, true},
			monitorValue{"pending_syncs", 0, true},
			monitorValue{"leader_uptime", s.node.LeaderUptime().Milliseconds(), false},
			monitorValue{"followers", voters + observers, true})
	}
	return out
}

// peerStates are ZooKeeper's zk_peer_state values by role (state - Zab
// phase).
var peerStates = map[string]string{
	"leader": "leading - broadcast", "follower": "following - broadcast",
	"observer": "observing - broadcast",
}

// sessionsAndEphemerals returns the sessions, by id, and the ephemeral
// nodes of those that own any (dump, in both its forms).
func (s *Server) sessionsAndEphemerals() ([]znode.SessionInfo, map[int64][]string) {
	t := s.node.RLockTree()
	sessions := t.Sessions()
	eph := make(map[int64][]string, len(sessions))
	for _, si := range sessions {
		if list := t.GetEphemerals(si.ID, "/"); len(list) > 0 {
			eph[si.ID] = list
		}
	}
	s.node.RUnlockTree()
	sort.Slice(sessions, func(i, j int) bool { return sessions[i].ID < sessions[j].ID })
	return sessions, eph
}
