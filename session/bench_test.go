package session

import (
	"net"
	"testing"

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
