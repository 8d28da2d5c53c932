package metrics

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/zkraft/zkraft/backend"
	"github.com/zkraft/zkraft/ensemble"
	"github.com/zkraft/zkraft/internal/testing/testport"
	"github.com/zkraft/zkraft/session"
)

// member is one member of the test ensemble with its registry, client
// server and metrics endpoint.
type member struct {
	reg     *Registry
	node    *ensemble.Node
	srv     *session.Server
	client  string // client address
	metrics string // /metrics URL
}

// startEnsemble opens a 3-member ensemble over loopback, each member with
// a registry of its own watching it and a metrics endpoint.
func startEnsemble(t *testing.T) []*member {
	t.Helper()
	var peers []backend.Peer
	for i := 1; i <= 3; i++ {
		addr, err := testport.Addr()
		if err != nil {
			t.Fatal(err)
		}
		peers = append(peers, backend.Peer{ID: int64(i), Addr: addr})
	}
	members := make([]*member, len(peers))
	var wg sync.WaitGroup
	for i, p := range peers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			reg := New()
			n, err := ensemble.Open(ensemble.Config{ID: p.ID, DataDir: t.TempDir(), TickTime: 200 * time.Millisecond,
				ElectionTimeout: 2 * time.Second, Peers: peers, JournalSize: 256 << 10, Metrics: reg.Ensemble()})
			if err != nil {
				t.Errorf("open member %d: %v", p.ID, err)
				return
			}
			members[i] = &member{reg: reg, node: n}
		}()
	}
	wg.Wait()
	t.Cleanup(func() {
		for _, m := range members {
			if m != nil {
				m.node.Close()
			}
		}
	})
	if t.Failed() {
		t.FailNow()
	}
	for _, m := range members {
		m.srv = session.New(session.Config{ServerID: m.node.ID(), TickTime: 200 * time.Millisecond, Requests: m.reg.Requests()}, m.node)
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go func() { _ = m.srv.Serve(ln) }()
		t.Cleanup(func() { _ = m.srv.Close() })
		m.client = ln.Addr().String()
		if err := m.reg.Watch(m.srv); err != nil {
			t.Fatal(err)
		}
		if err := m.reg.WatchRaft(m.node); err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(m.reg.Handler())
		t.Cleanup(hs.Close)
		m.metrics = hs.URL + "/metrics"
	}
	return members
}

func leaderOf(t *testing.T, members []*member) *member {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		for _, m := range members {
			if m.node.IsLeader() {
				return m
			}
		}
	}
	t.Fatal("no leader")
	return nil
}

// scrape fetches url and parses it with Prometheus' own text parser,
// returning the families and the raw text.
func scrape(t *testing.T, url string) (map[string]*dto.MetricFamily, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Fatalf("content type %q", ct)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, body)
	}
	return fams, string(body)
}

// value is the single sample of a gauge or counter family (0 if absent).
func value(fams map[string]*dto.MetricFamily, name string) float64 {
	f := fams[name]
	if f == nil || len(f.Metric) == 0 {
		return 0
	}
	m := f.Metric[0]
	switch {
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Summary != nil:
		return float64(m.Summary.GetSampleCount())
	case m.Histogram != nil:
		return float64(m.Histogram.GetSampleCount())
	}
	return 0
}

// histCountOf is the sample count of the series of family name whose
// label has value want.
func histCountOf(fams map[string]*dto.MetricFamily, name, label, want string) uint64 {
	f := fams[name]
	if f == nil {
		return 0
	}
	for _, m := range f.Metric {
		for _, l := range m.Label {
			if l.GetName() == label && l.GetValue() == want {
				return m.GetHistogram().GetSampleCount()
			}
		}
	}
	return 0
}

// TestScrapeEnsemble scrapes a 3-member ensemble's /metrics with
// Prometheus' text parser: every family has HELP and TYPE; ZooKeeper's
// names are there with their types; the Go and process collectors too;
// the per-op histogram counts requests; Raft's term, indexes and timings
// are there, and the leader reports each follower's lag.
func TestScrapeEnsemble(t *testing.T) {
	members := startEnsemble(t)
	l := leaderOf(t, members)
	fams, text := scrape(t, l.metrics)

	for name, f := range fams {
		if f.GetHelp() == "" || !strings.Contains(text, "# HELP "+name+" ") || !strings.Contains(text, "# TYPE "+name+" ") {
			t.Errorf("%s: no HELP or TYPE line", name)
		}
	}
	types := map[string]dto.MetricType{
		"znode_count": dto.MetricType_GAUGE, "watch_count": dto.MetricType_GAUGE, "outstanding_requests": dto.MetricType_GAUGE,
		"num_alive_connections": dto.MetricType_GAUGE, "avg_latency": dto.MetricType_GAUGE, "min_latency": dto.MetricType_GAUGE,
		"max_latency": dto.MetricType_GAUGE, "ephemerals_count": dto.MetricType_GAUGE, "approximate_data_size": dto.MetricType_GAUGE,
		"global_sessions": dto.MetricType_GAUGE, "quorum_size": dto.MetricType_GAUGE, "synced_followers": dto.MetricType_GAUGE,
		"learners": dto.MetricType_GAUGE, "packets_received": dto.MetricType_COUNTER, "uptime": dto.MetricType_COUNTER,
		"readlatency": dto.MetricType_SUMMARY, "updatelatency": dto.MetricType_SUMMARY, "fsynctime": dto.MetricType_SUMMARY,
		"snapshottime": dto.MetricType_SUMMARY, "election_time": dto.MetricType_SUMMARY,
		"zkraft_info": dto.MetricType_GAUGE, "zkraft_request_duration_seconds": dto.MetricType_HISTOGRAM,
		"zkraft_raft_term": dto.MetricType_GAUGE, "zkraft_raft_commit_index": dto.MetricType_GAUGE,
		"zkraft_raft_applied_index": dto.MetricType_GAUGE, "zkraft_raft_last_index": dto.MetricType_GAUGE,
		"zkraft_raft_leader_changes_total": dto.MetricType_COUNTER, "zkraft_raft_append_duration_seconds": dto.MetricType_HISTOGRAM,
		"zkraft_raft_fsync_duration_seconds": dto.MetricType_HISTOGRAM, "zkraft_raft_snapshot_duration_seconds": dto.MetricType_HISTOGRAM,
		"zkraft_raft_follower_lag_entries": dto.MetricType_GAUGE,
		"go_goroutines":                    dto.MetricType_GAUGE, "go_memstats_heap_alloc_bytes": dto.MetricType_GAUGE,
		"process_cpu_seconds_total": dto.MetricType_COUNTER, "process_resident_memory_bytes": dto.MetricType_GAUGE,
	}
	for name, typ := range types {
		if f := fams[name]; f == nil || f.GetType() != typ {
			t.Errorf("%s: %v, want a %v", name, f, typ)
		}
	}
	if v := value(fams, "quorum_size"); v != 3 {
		t.Errorf("quorum_size %v", v)
	}
	if v := value(fams, "zkraft_raft_term"); v <= 0 {
		t.Errorf("raft term %v", v)
	}
	if v := value(fams, "election_time"); v < 1 {
		t.Errorf("election_time observed %v times", v)
	}
	if v := value(fams, "zkraft_raft_leader_changes_total"); v < 1 {
		t.Errorf("leader changes %v", v)
	}
	if got := fams["zkraft_info"].Metric[0].Label; fmt.Sprint(got) == "" || !strings.Contains(fmt.Sprint(got), "leader") {
		t.Errorf("zkraft_info labels %v", got)
	}

	// N reads and writes through a client move the histograms.
	const n = 25
	c, _, err := zk.Connect([]string{l.client}, 10*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i := range n {
		if _, err := c.Create(fmt.Sprintf("/m%d", i), []byte("x"), 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
		if _, _, err := c.Get(fmt.Sprintf("/m%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.node.Snapshot(); err != nil {
		t.Fatal(err)
	}
	after, _ := scrape(t, l.metrics)
	if got, was := histCountOf(after, "zkraft_request_duration_seconds", "op", "getData"), histCountOf(fams, "zkraft_request_duration_seconds", "op", "getData"); got-was != n {
		t.Errorf("getData histogram counted %d requests, want %d", got-was, n)
	}
	if got := histCountOf(after, "zkraft_request_duration_seconds", "op", "create"); got != n {
		t.Errorf("create histogram counted %d requests, want %d", got, n)
	}
	if got := value(after, "updatelatency") - value(fams, "updatelatency"); got < n {
		t.Errorf("updatelatency counted %v writes, want at least %d", got, n)
	}
	for _, name := range []string{"readlatency", "updatelatency"} {
		if q := after[name].Metric[0].GetSummary().Quantile; len(q) != 3 || q[2].GetQuantile() != 0.99 || q[2].GetValue() <= 0 {
			t.Errorf("%s quantiles %v", name, q)
		}
	}
	if got := value(after, "znode_count") - value(fams, "znode_count"); got != n {
		t.Errorf("znode_count grew by %v, want %d", got, n)
	}
	if value(after, "zkraft_raft_append_duration_seconds") == 0 || value(after, "zkraft_raft_fsync_duration_seconds") == 0 || value(after, "fsynctime") == 0 {
		t.Error("no append or fsync timed")
	}
	if histCountOf(after, "zkraft_raft_snapshot_duration_seconds", "kind", "taken") != 1 || value(after, "snapshottime") != 1 {
		t.Error("the snapshot is not timed")
	}
	if value(after, "zkraft_raft_commit_index") < value(fams, "zkraft_raft_commit_index")+n {
		t.Error("commit index did not move")
	}

	// The leader reports each follower's lag, 0 once they caught up; a
	// follower reports none.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		lags := after["zkraft_raft_follower_lag_entries"]
		if lags == nil || len(lags.Metric) != 2 {
			t.Fatalf("follower lag on the leader: %v", lags)
		}
		if lags.Metric[0].GetGauge().GetValue() == 0 && lags.Metric[1].GetGauge().GetValue() == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("followers never caught up: %v", lags)
		}
		after, _ = scrape(t, l.metrics)
	}
	for _, m := range members {
		if m == l {
			continue
		}
		ff, _ := scrape(t, m.metrics)
		if ff["zkraft_raft_follower_lag_entries"] != nil || ff["learners"] != nil {
			t.Errorf("member %d (a follower) reports the leader's figures", m.node.ID())
		}
		if value(ff, "zkraft_raft_term") != value(after, "zkraft_raft_term") {
			t.Errorf("member %d: term %v, leader's %v", m.node.ID(), value(ff, "zkraft_raft_term"), value(after, "zkraft_raft_term"))
		}
	}

	// A follower that stops falls behind by every write since.
	var down *member
	for _, m := range members {
		if m != l {
			down = m
			break
		}
	}
	down.node.Close()
	for i := range n {
		if _, err := c.Set(fmt.Sprintf("/m%d", i), []byte("y"), -1); err != nil {
			t.Fatal(err)
		}
	}
	final, _ := scrape(t, l.metrics)
	for _, m := range final["zkraft_raft_follower_lag_entries"].Metric {
		id := m.Label[0].GetValue() // follower, then role
		if lag := m.GetGauge().GetValue(); id == fmt.Sprint(down.node.ID()) && lag < n {
			t.Errorf("stopped member %s: lag %v, want at least %d", id, lag, n)
		}
	}
}
