package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zkraft/zkraft/jute"
)

// latencyObjectives are the quantiles of the summaries of rare events
// (fsynctime, snapshottime, election_time: ZooKeeper has the median, 0.9
// and 0.99 come at no cost worth counting). The request latency summaries
// are latencyWindows, cheaper on the request path.
var latencyObjectives = map[float64]float64{0.5: 0.05, 0.9: 0.01, 0.99: 0.001}

// requestBuckets are the request latency histogram's bounds, in seconds:
// 100 µs to 10 s.
var requestBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// opNames are ZooKeeper's names of the request types (its OpCode
// constants), the op label's values.
var opNames = map[jute.Op]string{
	jute.OpCreate: "create", jute.OpDelete: "delete", jute.OpExists: "exists", jute.OpGetData: "getData",
	jute.OpSetData: "setData", jute.OpGetACL: "getACL", jute.OpSetACL: "setACL", jute.OpGetChildren: "getChildren",
	jute.OpSync: "sync", jute.OpPing: "ping", jute.OpGetChildren2: "getChildren2", jute.OpCheck: "check",
	jute.OpMulti: "multi", jute.OpCreate2: "create2", jute.OpReconfig: "reconfig", jute.OpCheckWatches: "checkWatches",
	jute.OpRemoveWatches: "removeWatches", jute.OpCreateContainer: "createContainer",
	jute.OpDeleteContainer: "deleteContainer", jute.OpCreateTTL: "createTTL", jute.OpMultiRead: "multiRead",
	jute.OpAuth: "auth", jute.OpSetWatches: "setWatches", jute.OpSASL: "sasl", jute.OpGetEphemerals: "getEphemerals",
	jute.OpGetAllChildrenNumber: "getAllChildrenNumber", jute.OpSetWatches2: "setWatches2", jute.OpAddWatch: "addWatch",
	jute.OpWhoAmI: "whoAmI", jute.OpCreateSession: "createSession", jute.OpCloseSession: "closeSession",
}

// Op codes run from closeSession (-11) to whoAmI (107): byOp is indexed
// by op - minOp.
const (
	minOp = jute.OpCloseSession
	maxOp = jute.OpWhoAmI
)

// Requests observes answered requests: zkraft_request_duration_seconds
// by op, and ZooKeeper's readlatency and updatelatency summaries (ms).
// The observer of every op is built once, so ObserveRequest does no
// label lookup and allocates nothing.
type Requests struct {
	hist          *prometheus.HistogramVec
	byOp          [maxOp - minOp + 1]prometheus.Observer
	other         prometheus.Observer // an op code not in opNames
	read, updates *latencyWindow
}

func newRequests() *Requests {
	r := &Requests{
		hist: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "zkraft_request_duration_seconds",
			Help:    "Latency of the requests this member answered, from read to reply queued, by request type (ZooKeeper's op names).",
			Buckets: requestBuckets,
		}, []string{"op"}),
		read: newLatencyWindow("readlatency",
			"Read request latency in milliseconds (requests answered from this member's tree); quantiles over the last 1-2 minutes."),
		updates: newLatencyWindow("updatelatency",
			"Update request latency in milliseconds (changes that went through the log; sync is a read); quantiles over the last 1-2 minutes."),
	}
	for op, name := range opNames {
		r.byOp[op-minOp] = r.hist.WithLabelValues(name)
	}
	r.other = r.hist.WithLabelValues("other")
	return r
}

func (r *Requests) register(reg *prometheus.Registry) {
	reg.MustRegister(r.hist, r.read, r.updates)
}

// ObserveRequest implements session.RequestObserver.
func (r *Requests) ObserveRequest(op jute.Op, write bool, took time.Duration) {
	o := r.other
	if op >= minOp && op <= maxOp && r.byOp[op-minOp] != nil {
		o = r.byOp[op-minOp]
	}
	o.Observe(took.Seconds())
	if write {
		r.updates.observe(took)
	} else {
		r.read.observe(took)
	}
}
