package metrics

import (
	"io"
	"net"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/zkraft/zkraft/ensemble"
	"github.com/zkraft/zkraft/internal/base/netguard"
	"github.com/zkraft/zkraft/session"
)

// TestScrapeConnectionRejected: connection_rejected is a counter under
// ZooKeeper's name (mntr's zk_connection_rejected without the prefix),
// summing every listener of the process, and
// zkraft_connections_rejected_total tells the listeners apart.
func TestScrapeConnectionRejected(t *testing.T) {
	node, err := ensemble.Open(ensemble.Config{DataDir: t.TempDir(), TickTime: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { node.Close() })
	rejected := new(netguard.Rejections)
	rejected.Add("admin") // another listener of the process refused one
	srv := session.New(session.Config{TickTime: 200 * time.Millisecond, MaxClientCnxns: 1, Rejected: rejected}, node)
	t.Cleanup(func() { _ = srv.Close() })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	reg := New()
	if err := reg.Watch(srv); err != nil {
		t.Fatal(err)
	}
	if err := reg.WatchRaft(node); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(reg.Handler())
	t.Cleanup(hs.Close)

	kept, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer kept.Close()
	for deadline := time.Now().Add(10 * time.Second); srv.NumConnections() < 1; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the first connection was not admitted")
		}
	}
	over, err := net.Dial("tcp", ln.Addr().String()) // past maxClientCnxns
	if err != nil {
		t.Fatal(err)
	}
	_ = over.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, _ = io.Copy(io.Discard, over) // until the server closes it
	over.Close()

	fams, _ := scrape(t, hs.URL+"/metrics")
	f := fams["connection_rejected"]
	if f == nil || f.GetType().String() != "COUNTER" || value(fams, "connection_rejected") != 2 {
		t.Fatalf("connection_rejected = %v, want a counter at 2", f)
	}
	by := map[string]float64{}
	for _, m := range fams["zkraft_connections_rejected_total"].GetMetric() {
		by[m.GetLabel()[0].GetValue()] = m.GetCounter().GetValue()
	}
	if by["client"] != 1 || by["admin"] != 1 {
		t.Errorf("zkraft_connections_rejected_total by listener = %v, want client 1, admin 1", by)
	}
}
