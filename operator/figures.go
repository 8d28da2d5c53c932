package operator

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/zkraft/zkraft/backend"
	"github.com/zkraft/zkraft/internal/base/avgminmax"
	"github.com/zkraft/zkraft/session"
)

// monitorValue is one monitoring figure, shared by mntr and /metrics.
type monitorValue struct {
	key   string // without the zk_ prefix
	value any
	gauge bool // a level rather than an ever-growing counter
}

// monitorValues are the figures mntr prints and /metrics exports: every
// key of ZooKeeper 3.8's mntr that has a meaning in zkraft, in the order
// its standalone server prints them (testdata/mntr-keys.golden lists
// them; testdata/zookeeper-3.8-mntr-keys.txt is ZooKeeper's whole list),
// then the ensemble's.
func (s view) monitorValues() []monitorValue {
	znodes, ephemerals, dataSize, sessions := s.treeStats()
	// A count the registry keeps, as ZooKeeper's getWatchCount (both
	// managers): not Stats, which walks every watch under the registry's
	// lock, the lock the FSM takes for each event it fires, so that every
	// scrape held up the member's writes for as long as the walk took.
	watches := s.node.Watches().Count()
	st := s.srv.Stats()
	lmin, lavg, lmax := st.MinLatency, st.AvgLatency, st.MaxLatency
	fsync := s.node.FsyncTimes()
	// An observer of ZooKeeper proposes nothing: 0 proposals and commits.
	var proposed, committed, unrecoverable int64
	if c, ok := s.node.(backend.LeaderCounters); ok {
		proposed, committed = c.ProposalCounts()
		unrecoverable = c.UnrecoverableErrors()
	}
	// A standalone server, as ZooKeeper's, never looks for a leader.
	var snaps, elections, startup backend.Times
	var looking int64
	if tm, ok := s.node.(backend.Timings); ok {
		snaps, elections, startup = tm.SnapshotTimes(), tm.ElectionTimes(), tm.StartupSnapLoadTimes()
		if s.node.Mode() != "standalone" {
			looking = tm.LookingCount()
		} else {
			elections = backend.Times{}
		}
	}
	out := []monitorValue{
		{"version", Version, true},
		{"server_state", s.mode(), true},
		{"ephemerals_count", ephemerals, true},
		{"num_alive_connections", s.srv.NumConnections(), true},
		{"avg_latency", javaDouble(lavg), true},
		{"outstanding_requests", st.Outstanding, true},
		{"znode_count", znodes, true},
		{"global_sessions", sessions, true},
		{"packets_sent", st.PacketsSent, false},
		{"packets_received", st.PacketsReceived, false},
		{"watch_count", watches, true},
		{"auth_failed_count", st.AuthFailed, false},
		{"min_latency", lmin, true},
		{"max_file_descriptor_count", maxFDs(), true},
		{"approximate_data_size", dataSize, true},
		{"open_file_descriptor_count", openFDs(), true},
		{"local_sessions", 0, true},
		{"uptime", time.Since(st.Started).Milliseconds(), false},
		{"max_latency", lmax, true},
		// ZooKeeper's ServerMetrics counters. proposal_count and
		// commit_count: the entries this member appended as leader (its
		// Leader's proposals) and those committed, reset by srst.
		{"proposal_count", proposed, false},
		// Connections refused (over a cap) and failed accepts, on every
		// listener of the process.
		{"connection_rejected", s.srv.Rejections().Total(), false},
		// Times this member found itself without a leader, its start
		// included.
		{"looking_count", looking, false},
		// An unrecoverable error (the log cannot be written) stops the
		// process: a member that answers has had none.
		{"unrecoverable_error_count", unrecoverable, false},
		{"commit_count", committed, false},
	}
	// ZooKeeper's summaries, in milliseconds: the log's syncs (fsynctime),
	// snapshots written (snapshottime), how long the member knew no leader
	// before the next (election_time), its own snapshot loaded at start
	// (startup_snap_load_time), writes through the log (updatelatency)
	// and reads (readlatency).
	out = appendTimes(out, "fsynctime", backend.Times{Count: fsync.Count, SumMs: fsync.SumMs, MinMs: fsync.MinMs, MaxMs: fsync.MaxMs})
	out = appendTimes(out, "snapshottime", snaps)
	out = appendTimes(out, "election_time", elections)
	out = appendTimes(out, "startup_snap_load_time", startup)
	out = appendSummary(out, "updatelatency", st.UpdateLatency)
	out = appendSummary(out, "readlatency", st.ReadLatency)
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

// appendTimes adds an AvgMinMaxCounter's five figures, in ZooKeeper's
// order and formats.
func appendTimes(out []monitorValue, name string, t backend.Times) []monitorValue {
	return append(out,
		monitorValue{"avg_" + name, javaAvg(t.SumMs, t.Count), true},
		monitorValue{"min_" + name, t.MinMs, true},
		monitorValue{"max_" + name, t.MaxMs, true},
		monitorValue{"cnt_" + name, t.Count, false},
		monitorValue{"sum_" + name, t.SumMs, false})
}

// appendSummary adds an AvgMinMaxPercentileCounter's nine figures, in
// ZooKeeper's order and formats.
func appendSummary(out []monitorValue, name string, l session.LatencySummary) []monitorValue {
	return append(out,
		monitorValue{"avg_" + name, javaDouble(l.Avg), true},
		monitorValue{"min_" + name, l.Min, true},
		monitorValue{"max_" + name, l.Max, true},
		monitorValue{"cnt_" + name, l.Count, false},
		monitorValue{"sum_" + name, l.Sum, false},
		monitorValue{"p50_" + name, l.P50, true},
		monitorValue{"p95_" + name, l.P95, true},
		monitorValue{"p99_" + name, l.P99, true},
		monitorValue{"p999_" + name, l.P999, true})
}

// peerStates are ZooKeeper's zk_peer_state values by role (state - Zab
// phase).
var peerStates = map[string]string{
	"leader": "leading - broadcast", "follower": "following - broadcast",
	"observer": "observing - broadcast",
}

// writeMntr is mntr: tab-separated zk_* keys, the ones monitoring tools and
// exporters parse.
func (s view) writeMntr(b *strings.Builder) {
	for _, v := range s.monitorValues() {
		fmt.Fprintf(b, "zk_%s\t%v\n", v.key, v.value)
	}
}

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
	return javaDouble(avgminmax.Mean(total, count))
}

// Figure is one of the figures mntr prints, for the metrics endpoint: Key
// without mntr's zk_ prefix (the name ZooKeeper's Prometheus metrics
// provider uses), Value as mntr prints it, and whether it is a level
// (gauge) rather than a count since the start or the last srst.
type Figure struct {
	Key   string
	Value string
	Gauge bool
}

// Figures returns srv's mntr figures now, in mntr's order.
func Figures(srv *session.Server) []Figure {
	vals := newView(srv).monitorValues()
	out := make([]Figure, len(vals))
	for i, v := range vals {
		out[i] = Figure{Key: v.key, Value: fmt.Sprint(v.value), Gauge: v.gauge}
	}
	return out
}
