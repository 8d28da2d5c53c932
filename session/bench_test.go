package session

import (
	"io"
	"net"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/zkraft/zkraft/jute"
)

// BenchmarkReadGetData is the read path of one request after decoding its
// header: body decode, tree lookup, reply encoded into the connection's
// outbound buffer (a local read, no write in flight).
func BenchmarkReadGetData(b *testing.B) {
	ts := startServer(b)
	a, z := net.Pipe()
	defer a.Close()
	defer z.Close()
	c := newConn(ts.srv, a)
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
		c := dialRaw(b, ts.addr)
		c.connect(false)
		c.request(1, jute.OpCloseSession, nil)
		if h := c.reply(nil); h.Err != jute.OK {
			b.Fatalf("closeSession: %+v", h)
		}
		c.nc.Close()
	}
}
