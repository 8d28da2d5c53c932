package metrics

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zkraft/zkraft/backend"
)

// durationBuckets are the bounds of the Raft duration histograms, in
// seconds: 100 µs to 60 s (a large tree's snapshot takes seconds).
var durationBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}

// raftTimings are the durations the member reports through
// backend.Metrics: zkraft's histograms (seconds) and ZooKeeper's
// summaries of the same (milliseconds), each observer built once.
type raftTimings struct {
	appendHist, fsyncHist *prometheus.HistogramVec
	appendObs, fsyncObs   prometheus.Observer
	applyWait             prometheus.Histogram
	snapHist              *prometheus.HistogramVec
	snapObs               map[backend.SnapshotKind]prometheus.Observer
	fsyncTime, snapTime   prometheus.Summary
	electionTime          prometheus.Summary
}

func newRaftTimings() *raftTimings {
	t := &raftTimings{
		appendHist: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "zkraft_raft_append_duration_seconds",
			Help:    "Round trip of the leader's appends (with entries) to a follower, the follower's disk write included.",
			Buckets: durationBuckets,
		}, nil),
		fsyncHist: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "zkraft_raft_fsync_duration_seconds",
			Help:    "Time to make a batch of this member's log appends durable (journal write and fdatasync).",
			Buckets: durationBuckets,
		}, nil),
		snapHist: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "zkraft_raft_snapshot_duration_seconds",
			Help:    "Time to write a snapshot (kind taken), load a leader's (installed) or load the member's own at start (restored).",
			Buckets: durationBuckets,
		}, []string{"kind"}),
		applyWait: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "zkraft_apply_lock_wait_seconds",
			Help:    "Time the FSM waited for the tree's write lock before applying a batch (readers inside held it).",
			Buckets: durationBuckets,
		}),
		fsyncTime: prometheus.NewSummary(prometheus.SummaryOpts{
			Name: "fsynctime", Help: "Log sync time in milliseconds (ZooKeeper's fsynctime).", Objectives: latencyObjectives,
		}),
		snapTime: prometheus.NewSummary(prometheus.SummaryOpts{
			Name: "snapshottime", Help: "Snapshot writing time in milliseconds (ZooKeeper's snapshottime).", Objectives: latencyObjectives,
		}),
		electionTime: prometheus.NewSummary(prometheus.SummaryOpts{
			Name: "election_time", Help: "Time this member knew no leader before it learned of the next, in milliseconds (ZooKeeper's election_time).",
			Objectives: latencyObjectives,
		}),
	}
	t.appendObs = t.appendHist.WithLabelValues()
	t.fsyncObs = t.fsyncHist.WithLabelValues()
	t.snapObs = map[backend.SnapshotKind]prometheus.Observer{}
	for _, k := range []backend.SnapshotKind{backend.SnapshotTaken, backend.SnapshotInstalled, backend.SnapshotRestored} {
		t.snapObs[k] = t.snapHist.WithLabelValues(k.String())
	}
	return t
}

func (t *raftTimings) register(reg *prometheus.Registry) {
	reg.MustRegister(t.appendHist, t.fsyncHist, t.snapHist, t.applyWait, t.fsyncTime, t.snapTime, t.electionTime)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func (t *raftTimings) hooks() backend.Metrics {
	return backend.Metrics{
		Append: func(d time.Duration) { t.appendObs.Observe(d.Seconds()) },
		Fsync: func(d time.Duration) {
			t.fsyncObs.Observe(d.Seconds())
			t.fsyncTime.Observe(ms(d))
		},
		Snapshot: func(k backend.SnapshotKind, d time.Duration) {
			if o := t.snapObs[k]; o != nil {
				o.Observe(d.Seconds())
			}
			if k == backend.SnapshotTaken {
				t.snapTime.Observe(ms(d))
			}
		},
		Election:  func(d time.Duration) { t.electionTime.Observe(ms(d)) },
		ApplyWait: func(d time.Duration) { t.applyWait.Observe(d.Seconds()) },
	}
}

// raftCollector reads the member's Raft figures at scrape time.
type raftCollector struct {
	node                                 backend.Raft
	term, last, commit, applied, changes *prometheus.Desc
	lag                                  *prometheus.Desc
}

func newRaftCollector(node backend.Raft) *raftCollector {
	return &raftCollector{
		node:    node,
		term:    prometheus.NewDesc("zkraft_raft_term", "Current Raft term (ZooKeeper's epoch).", nil, nil),
		last:    prometheus.NewDesc("zkraft_raft_last_index", "Index of the last entry in this member's log.", nil, nil),
		commit:  prometheus.NewDesc("zkraft_raft_commit_index", "Last log index this member knows committed.", nil, nil),
		applied: prometheus.NewDesc("zkraft_raft_applied_index", "Last log index applied to this member's tree (its zxid).", nil, nil),
		changes: prometheus.NewDesc("zkraft_raft_leader_changes_total", "Leaders this member has seen elected since it started.", nil, nil),
		lag: prometheus.NewDesc("zkraft_raft_follower_lag_entries",
			"On the leader: log entries each follower is behind (the leader's last index minus the follower's, as of its latest answer).",
			[]string{"follower", "role"}, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *raftCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.term, c.last, c.commit, c.applied, c.changes, c.lag} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *raftCollector) Collect(ch chan<- prometheus.Metric) {
	idx := c.node.Indexes()
	ch <- prometheus.MustNewConstMetric(c.term, prometheus.GaugeValue, float64(c.node.Term()))
	ch <- prometheus.MustNewConstMetric(c.last, prometheus.GaugeValue, float64(idx.Last))
	ch <- prometheus.MustNewConstMetric(c.commit, prometheus.GaugeValue, float64(idx.Commit))
	ch <- prometheus.MustNewConstMetric(c.applied, prometheus.GaugeValue, float64(idx.Applied))
	ch <- prometheus.MustNewConstMetric(c.changes, prometheus.CounterValue, float64(c.node.LeaderChanges()))
	for _, l := range c.node.FollowerLags() {
		role := "participant"
		if l.Observer {
			role = "observer"
		}
		ch <- prometheus.MustNewConstMetric(c.lag, prometheus.GaugeValue, float64(l.Entries), strconv.Itoa(int(l.ID)), role)
	}
}
