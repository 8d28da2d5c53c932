package session

import (
	"io"
	"net"
	"runtime"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/zkraft/zkraft/internal/testing/rawclient"
	"github.com/zkraft/zkraft/jute"
)

// BenchmarkReadGetData is the read path of one request after decoding its
// header: body decode, tree lookup, reply encoded into the connection's
// outbound buffer (a local read, no write in flight).
func BenchmarkReadGetData(b *testing.B) {
	ts := startServer(b)
	c := pipeConn(b, ts)
	var w jute.Writer
	req := jute.PathWatchRequest{Path: "/zookeeper/quota"}
	req.Encode(&w)
	body := w.Buf
	h := jute.RequestHeader{Xid: 1, Type: jute.OpGetData}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c.read(h, body)
		c.out.mu.Lock()
		c.out.w.Buf = c.out.w.Buf[:0]
		c.out.mu.Unlock()
	}
}

// BenchmarkSessionCycle is one session's life on a one-member server, as
// the ephemeral-churn workload drives it: TCP connect, ConnectRequest
// (createSession through the log), closeSession, close. Its allocations
// are the server's and this client's together. The server logs as zkraft
// server does by default (JSON, info level), into io.Discard.
func BenchmarkSessionCycle(b *testing.B) {
	ts := startServer(b, func(c *Config) {
		c.Logger = zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()),
			zapcore.AddSync(io.Discard), zap.InfoLevel))
	})
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c := rawclient.Dial(b, ts.addr)
		c.Connect(false)
		c.Request(1, jute.OpCloseSession, nil)
		if h := c.Reply(nil); h.Err != jute.OK {
			b.Fatalf("closeSession: %+v", h)
		}
		c.Conn.Close()
	}
}

// BenchmarkIdleSessionMemory reports what an idle session costs the
// process (heap in use and goroutine stacks after a collection, per
// session, as bytes/session): b.N sessions are opened and left idle. The
// figure includes each client's socket (a few hundred bytes: the clients
// keep nothing else). The RSS of the real binary is measured by
// scripts/memprobe.
func BenchmarkIdleSessionMemory(b *testing.B) {
	ts := startServer(b)
	live := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapInuse + ms.StackInuse
	}
	before := live()
	clients := make([]net.Conn, b.N)
	var w jute.Writer
	at := jute.BeginFrame(&w)
	(&jute.ConnectRequest{TimeOut: 30000, Passwd: make([]byte, 16)}).Encode(&w)
	jute.EndFrame(&w, at)
	resp := make([]byte, 64)
	for i := range clients {
		nc, err := net.Dial("tcp", ts.addr)
		if err != nil {
			b.Fatal(err)
		}
		defer nc.Close()
		if _, err := nc.Write(w.Buf); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadAtLeast(nc, resp, 4+36); err != nil { // the ConnectResponse
			b.Fatal(err)
		}
		clients[i] = nc
	}
	time.Sleep(parkAfter + 500*time.Millisecond) // the writers exit, the readers park
	after := live()
	b.ReportMetric(float64(int64(after)-int64(before))/float64(b.N), "bytes/session")
	b.ReportMetric(0, "ns/op")
}
