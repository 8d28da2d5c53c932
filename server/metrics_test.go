package server

import (
	"io"
	"net"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/zkraft/zkraft/ensemble"
	"github.com/zkraft/zkraft/operator/metrics"
	"github.com/zkraft/zkraft/session"
)

// TestMetricsPortClosesSlowHeaders: a connection to the metrics port that
// never finishes its request's headers is closed after the header timeout
// (here the idle timeout, 300 ms), so such connections cannot pile up.
func TestMetricsPortClosesSlowHeaders(t *testing.T) {
	node, err := ensemble.Open(ensemble.Config{DataDir: t.TempDir(), TickTime: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	srv := session.New(session.Config{TickTime: 200 * time.Millisecond}, node)
	t.Cleanup(func() { srv.Close(); node.Close() })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	stop, err := startMetrics(ln, metrics.New(), node, srv, nil, 300*time.Millisecond, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if _, err := io.WriteString(nc, "GET /metrics HTTP/1.1\r\nHost: x\r\n"); err != nil {
		t.Fatal(err)
	}
	_ = nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	start := time.Now()
	_, err = io.ReadAll(nc)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("the connection was still open after %v", time.Since(start).Round(time.Millisecond))
	}
}
