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
//
// Two test processes could still draw the same port between one's check
// and its server's bind, so a port is also claimed across processes: a
// file named after it is created exclusively in a shared directory
// (claimDir) and left there; claims older than claimTTL are taken over, by
// then the server that used the port has long been started.
package testport

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
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
		if used[p] || !claim(p) {
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

// claimTTL is how long a port stays claimed by the process that drew it.
const claimTTL = 10 * time.Minute

// claimDir is where the claims of every test process on the machine go.
func claimDir() string { return filepath.Join(os.TempDir(), "zkraft-testports") }

// claim reports whether this process may use port p: it created p's claim
// file, or took over one older than claimTTL. If the directory cannot be
// used at all, every port may be (the in-process checks still hold).
func claim(p int) bool {
	dir := claimDir()
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return true
	}
	name := filepath.Join(dir, strconv.Itoa(p))
	for range 2 {
		f, err := os.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o666)
		if err == nil {
			f.Close()
			return true
		}
		if !errors.Is(err, os.ErrExist) {
			return true
		}
		st, err := os.Stat(name)
		if err != nil || time.Since(st.ModTime()) < claimTTL {
			return false
		}
		_ = os.Remove(name) // stale: take it over (a racing taker loses the O_EXCL create)
	}
	return false
}
