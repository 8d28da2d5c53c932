package metrics

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zkraft/zkraft/operator"
	"github.com/zkraft/zkraft/session"
)

// mntrHelp are the HELP texts of mntr's figures, by ZooKeeper's name.
var mntrHelp = map[string]string{
	"ephemerals_count":            "Ephemeral znodes.",
	"num_alive_connections":       "Open client connections.",
	"avg_latency":                 "Average request latency in milliseconds since the start or the last srst.",
	"min_latency":                 "Smallest request latency in milliseconds since the start or the last srst.",
	"max_latency":                 "Largest request latency in milliseconds since the start or the last srst.",
	"outstanding_requests":        "Writes in flight on this member.",
	"znode_count":                 "Znodes in the tree (ZooKeeper counts the root twice).",
	"global_sessions":             "Sessions in the ensemble.",
	"local_sessions":              "Local sessions (always 0: every session is global).",
	"packets_sent":                "Packets sent to clients since the start or the last srst.",
	"packets_received":            "Packets received from clients since the start or the last srst.",
	"watch_count":                 "Watches set on this member.",
	"auth_failed_count":           "Failed authentications.",
	"max_file_descriptor_count":   "The process's file descriptor limit.",
	"open_file_descriptor_count":  "The process's open file descriptors.",
	"approximate_data_size":       "Sum of the znodes' path and data lengths in bytes.",
	"avg_fsynctime":               "Average log sync time in milliseconds since the start or the last srst.",
	"min_fsynctime":               "Smallest log sync time in milliseconds since the start or the last srst.",
	"max_fsynctime":               "Largest log sync time in milliseconds since the start or the last srst.",
	"cnt_fsynctime":               "Log syncs since the start or the last srst.",
	"sum_fsynctime":               "Total log sync time in milliseconds since the start or the last srst.",
	"uptime":                      "Milliseconds since the server started.",
	"quorum_size":                 "Voting members of the ensemble.",
	"learners":                    "Followers and observers answering the leader (on the leader).",
	"synced_followers":            "Voting followers answering the leader (on the leader).",
	"synced_non_voting_followers": "Non-voting followers answering the leader (always 0).",
	"synced_observers":            "Observers answering the leader (on the leader).",
	"pending_syncs":               "Learners waiting to sync with the leader (always 0).",
	"leader_uptime":               "Milliseconds this member has led (on the leader).",
	"followers":                   "Followers and observers answering the leader (ZooKeeper 3.4's name of learners).",
	"connection_rejected":         "Connections refused over a cap, and failed accepts, on every listener since the start.",
	"proposal_count":              "Log entries this member appended as leader since the start or the last srst.",
	"commit_count":                "Log entries this member appended as leader that were committed, since the start or the last srst.",
	"unrecoverable_error_count":   "Errors that stopped the member (0: such an error ends the process).",
}

// mntrCollector exports mntr's figures at scrape time, under the names
// ZooKeeper's Prometheus metrics provider uses (no zk_ prefix); the
// version and the server state, which are text, are labels of
// zkraft_info. It is an unchecked collector: the figures present depend
// on the member's role (the leader's learners and synced_followers).
type mntrCollector struct{ srv *session.Server }

var infoDesc = prometheus.NewDesc("zkraft_info", "The server's version and state (standalone, leader, follower, observer).",
	[]string{"version", "server_state"}, nil)

// rejectedDesc is connection_rejected by listener (client, secureClient,
// member, admin, metrics, pprof), for telling which port is flooded.
var rejectedDesc = prometheus.NewDesc("zkraft_connections_rejected_total",
	"Connections refused over a cap, and failed accepts, by listener since the start (connection_rejected is their sum).",
	[]string{"listener"}, nil)

// Describe implements prometheus.Collector (unchecked: nothing).
func (mntrCollector) Describe(chan<- *prometheus.Desc) {}

// Collect implements prometheus.Collector.
func (c mntrCollector) Collect(ch chan<- prometheus.Metric) {
	info := map[string]string{}
	for _, f := range operator.Figures(c.srv) {
		v, err := strconv.ParseFloat(f.Value, 64)
		if err != nil {
			info[f.Key] = f.Value
			continue
		}
		kind := prometheus.CounterValue
		if f.Gauge {
			kind = prometheus.GaugeValue
		}
		help := mntrHelp[f.Key]
		if help == "" {
			help = "mntr's zk_" + f.Key + "."
		}
		ch <- prometheus.MustNewConstMetric(prometheus.NewDesc(f.Key, help, nil, nil), kind, v)
	}
	ch <- prometheus.MustNewConstMetric(infoDesc, prometheus.GaugeValue, 1, info["version"], info["server_state"])
	for listener, n := range c.srv.Rejections().ByListener() {
		ch <- prometheus.MustNewConstMetric(rejectedDesc, prometheus.CounterValue, float64(n), listener)
	}
}
