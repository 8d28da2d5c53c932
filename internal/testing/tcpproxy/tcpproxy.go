// Package tcpproxy is a TCP proxy for tests: it forwards connections to a
// server and can refuse new ones, hold the bytes of open ones, or cut them
// all, so a test can fail the network between a client and a server
// without touching either.
package tcpproxy

import (
	"io"
	"net"
	"sync"
	"testing"
)

// Proxy forwards the connections it accepts on Addr to its target.
type Proxy struct {
	l         net.Listener
	connected chan struct{} // closed once a first connection is forwarded

	mu      sync.Mutex
	conns   []net.Conn
	refuse  bool          // accept new connections and close them
	gate    chan struct{} // closed while bytes flow
	started bool
	wg      sync.WaitGroup
}

// Start listens on a free loopback port and forwards to target until the
// test ends, when it closes the listener and every connection.
func Start(t testing.TB, target string) *Proxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{l: l, connected: make(chan struct{}), gate: make(chan struct{})}
	close(p.gate)
	p.wg.Add(1)
	go p.accept(target)
	t.Cleanup(func() {
		l.Close()
		p.Hold(false)
		p.Cut()
		p.wg.Wait()
	})
	return p
}

// Addr is the address clients dial instead of the target's.
func (p *Proxy) Addr() string { return p.l.Addr().String() }

// Connected is closed once the proxy forwards its first connection.
func (p *Proxy) Connected() <-chan struct{} { return p.connected }

// Refuse makes the proxy close new connections at once (on) or forward
// them again (off).
func (p *Proxy) Refuse(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refuse = on
}

// Hold makes every byte read from either side wait (on) until it is
// released (off): a server, or a network, that stalls.
func (p *Proxy) Hold(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	held := !isClosed(p.gate)
	switch {
	case on && !held:
		p.gate = make(chan struct{})
	case !on && held:
		close(p.gate)
	}
}

// Cut closes every connection forwarded so far.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

func (p *Proxy) accept(target string) {
	defer p.wg.Done()
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		refuse := p.refuse
		p.mu.Unlock()
		if refuse {
			c.Close()
			continue
		}
		s, err := net.Dial("tcp", target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, s)
		if !p.started {
			p.started = true
			close(p.connected)
		}
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(s, c)
		go p.pipe(c, s)
	}
}

// pipe copies from src to dst, each read's bytes waiting while held.
func (p *Proxy) pipe(dst io.WriteCloser, src io.Reader) {
	defer p.wg.Done()
	defer dst.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			g := p.gate
			p.mu.Unlock()
			<-g
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
