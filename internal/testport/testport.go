// Package testport hands out loopback TCP ports for servers that tests and
// benchmark scripts start as separate processes.
//
// The usual trick, listening on 127.0.0.1:0 and closing before the server
// binds, returns a port from the kernel's ephemeral range (32768-60999 on
// Linux), the same range every outgoing connection takes its local port
// from. With many packages testing at once, a client's connection or
// another package's server took such a port in between, and a server
// failed to start with "address already in use" (or two ensembles shared
// a member port). Ports here come from below that range, at random, and
// one process never hands out the same port twice.
package testport

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
)

// The range ports are drawn from: below Linux's ephemeral range.
const (
	low  = 20000
	high = 32000 // exclusive
)

var (
	mu   sync.Mutex
	used = map[int]bool{} // guarded by mu
)

// ErrNone is returned when no free port was found in the range.
var ErrNone = errors.New("testport: no free port in 20000-31999")

// Free returns a port on 127.0.0.1 that was free a moment ago and that
// this process has not returned before (a killed server may still hold
// the previous one).
func Free() (int, error) {
	mu.Lock()
	defer mu.Unlock()
	for i := 0; i < 1000; i++ {
		p := low + rand.IntN(high-low)
		if used[p] {
			continue
		}
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			continue
		}
		ln.Close()
		used[p] = true
		return p, nil
	}
	return 0, ErrNone
}

// Addr is Free as "127.0.0.1:port".
func Addr() (string, error) {
	p, err := Free()
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("127.0.0.1:%d", p), nil
}
