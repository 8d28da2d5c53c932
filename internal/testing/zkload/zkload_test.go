package zkload

import (
	"context"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/ensemble"
	"github.com/zkraft/zkraft/internal/testing/tcpproxy"
	"github.com/zkraft/zkraft/internal/testing/testmember"
	"github.com/zkraft/zkraft/session"
	"github.com/zkraft/zkraft/znode"
)

// TestRunMeasuresSetData: two connections with two requests in flight
// each, for a second against a zkraft server: measured setData requests,
// the second's median and p99, no errors, and the run's znodes gone.
func TestRunMeasuresSetData(t *testing.T) {
	_, _, addr := testmember.Start(t, znode.Options{}, func(n *ensemble.Node) *session.Server {
		return session.New(session.Config{TickTime: testmember.TickTime}, n)
	})
	res, err := Run(context.Background(), Config{Servers: []string{addr}, Conns: 2, PerConn: 2,
		Warmup: 200 * time.Millisecond, Duration: time.Second, Root: "/zkload", ValueSize: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Ops) != 1 || res.Sessions != 2 || res.Inflight != 2 || res.TotalErrors() != 0 || res.ClientCPUSeconds <= 0 {
		t.Fatalf("result %+v", res)
	}
	row := res.Ops[0]
	if row.Op != Op || row.Ops == 0 || row.P50Ms <= 0 || row.P99Ms < row.P50Ms || len(row.PerSecond) != 1 || len(row.Quantiles) == 0 {
		t.Fatalf("row %+v", row)
	}
	c, _, err := zk.Connect([]string{addr}, 10*time.Second, zk.WithLogger(quiet{}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if ok, _, err := c.Exists("/zkload"); err != nil || ok {
		t.Fatalf("/zkload left behind: %v, %v", ok, err)
	}
}

func TestRunRejectsAnEmptyConfig(t *testing.T) {
	if _, err := Run(context.Background(), Config{Servers: []string{"127.0.0.1:1"}, Duration: time.Second}); err == nil {
		t.Fatal("no connections accepted")
	}
}

// TestRunWaitsOutAStalledServer: a server that answers nothing for
// longer than the whole measurement window (a starved JVM under a busy
// machine) still gives a measured row: the window is extended until a
// request completes in it, not reported empty.
func TestRunWaitsOutAStalledServer(t *testing.T) {
	_, _, addr := testmember.Start(t, znode.Options{}, func(n *ensemble.Node) *session.Server {
		return session.New(session.Config{TickTime: testmember.TickTime}, n)
	})
	p := tcpproxy.Start(t, addr)
	// The proxy holds every byte from 200 ms after the client connects,
	// for 1.5 s: the warm-up (300 ms) and the window (500 ms) fall inside
	// the stall, and the request in flight when it began was sent before
	// the window.
	go func() {
		<-p.Connected()
		time.Sleep(200 * time.Millisecond)
		p.Hold(true)
		time.Sleep(1500 * time.Millisecond)
		p.Hold(false)
	}()
	res, err := Run(context.Background(), Config{Servers: []string{p.Addr()}, Conns: 1, PerConn: 1,
		Warmup: 300 * time.Millisecond, Duration: 500 * time.Millisecond, Root: "/zkload", ValueSize: 100})
	if err != nil {
		t.Fatal(err)
	}
	if row := res.Ops[0]; row.Ops == 0 || row.P50Ms <= 0 {
		t.Fatalf("a stall longer than the window left it empty: %+v", row)
	}
}
