package session

import (
	"context"
	"fmt"
	"net"
)

// Listen opens a client port as ZooKeeper does: TCP keepalive stays off
// on accepted connections (ZooKeeper enables it only with
// zookeeper.clientTcpKeepAlive), since sessions carry their own pings and
// timeouts. Go's listeners otherwise turn it on for every accepted
// connection, which also costs four setsockopt calls per connection.
func Listen(addr string) (net.Listener, error) {
	lc := net.ListenConfig{KeepAlive: -1}
	ln, err := lc.Listen(context.Background(), "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("session: listen on %s: %w", addr, err)
	}
	return ln, nil
}
