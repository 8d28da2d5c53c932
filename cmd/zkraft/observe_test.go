package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/zkraft/zkraft/internal/testing/procs"
)

// TestLeaderKillLogsAndMetrics runs a 3-member ensemble of zkraft
// processes logging JSON at info level with metricsProvider.httpPort set,
// scrapes the leader's /metrics, kills the leader, and checks each
// survivor's log: one "leader elected" line for the new term naming the
// new leader, as structured fields, and no raft line carrying a stack
// trace or a formatted "[LEVEL]" blob; the new leader's /metrics shows the
// new term and the follower's lag.
func TestLeaderKillLogsAndMetrics(t *testing.T) {
	metricsAddr := map[int]string{}
	members := procs.StartPreparedEnsemble(t, 3, func(m *procs.Member) {
		m.LogLevel, m.LogFormat = "info", "json"
		addr := procs.FreeAddr(t)
		metricsAddr[m.ID] = addr
		host, port, _ := strings.Cut(addr, ":")
		f, err := os.OpenFile(m.CfgPath, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		fmt.Fprintf(f, "metricsProvider.className=org.apache.zookeeper.metrics.prometheus.PrometheusMetricsProvider\n"+
			"metricsProvider.httpHost=%s\nmetricsProvider.httpPort=%s\n", host, port)
	})
	l := procs.LeaderOf(t, members, nil)
	fams := scrapeMetrics(t, metricsAddr[l.ID])
	for _, name := range []string{"znode_count", "watch_count", "num_alive_connections", "quorum_size", "synced_followers",
		"zkraft_raft_term", "zkraft_raft_follower_lag_entries", "go_goroutines", "process_resident_memory_bytes"} {
		if fams[name] == nil {
			t.Errorf("leader's /metrics lacks %s", name)
		}
	}
	oldTerm := gaugeValue(fams, "zkraft_raft_term")
	if oldTerm <= 0 {
		t.Fatalf("raft term %v", oldTerm)
	}

	l.Kill()
	next := procs.LeaderOf(t, members, l)
	var nextFams map[string]*dto.MetricFamily
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		nextFams = scrapeMetrics(t, metricsAddr[next.ID])
		if lags := nextFams["zkraft_raft_follower_lag_entries"]; lags != nil && len(lags.Metric) == 2 || time.Now().After(deadline) {
			break
		}
	}
	term := gaugeValue(nextFams, "zkraft_raft_term")
	if term <= oldTerm {
		t.Fatalf("term %v after the kill, %v before", term, oldTerm)
	}
	if lags := nextFams["zkraft_raft_follower_lag_entries"]; lags == nil || len(lags.Metric) != 2 {
		t.Errorf("new leader's follower lag: %v", lags)
	}

	for _, m := range members {
		if m == l {
			continue
		}
		var elected []map[string]any
		deadline := time.Now().Add(10 * time.Second)
		for {
			elected = elected[:0]
			for _, e := range jsonLines(t, m.LogPath) {
				if e["logger"] != nil && strings.HasPrefix(fmt.Sprint(e["logger"]), "raft") {
					if e["stacktrace"] != nil || strings.Contains(fmt.Sprint(e["msg"]), "[") {
						t.Errorf("member %d: raft line %v", m.ID, e)
					}
				}
				if e["msg"] == "leader elected" && e["term"] == term {
					elected = append(elected, e)
				}
			}
			if len(elected) > 0 || time.Now().After(deadline) {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if len(elected) != 1 {
			t.Fatalf("member %d: %d \"leader elected\" lines for term %v: %v", m.ID, len(elected), term, elected)
		}
		if e := elected[0]; e["level"] != "info" || e["leaderId"] != float64(next.ID) || e["leaderAddr"] == "" {
			t.Errorf("member %d: %v, want leaderId %d", m.ID, e, next.ID)
		}
	}
}

// scrapeMetrics fetches http://addr/metrics and parses it with
// Prometheus' text parser.
func scrapeMetrics(t *testing.T, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

func gaugeValue(fams map[string]*dto.MetricFamily, name string) float64 {
	if f := fams[name]; f != nil && len(f.Metric) > 0 {
		return f.Metric[0].GetGauge().GetValue()
	}
	return 0
}

// jsonLines reads a JSON-format log, skipping lines that are not JSON.
func jsonLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var e map[string]any
		if json.Unmarshal(sc.Bytes(), &e) == nil {
			out = append(out, e)
		}
	}
	return out
}
