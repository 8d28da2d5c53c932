//go:build !unix

package session

import "net"

// connPair returns the two ends of a net.Pipe where there are no socket
// pairs: the server end is read in its goroutine (never parked).
func connPair() (server, client net.Conn, err error) {
	server, client = net.Pipe()
	return server, client, nil
}
