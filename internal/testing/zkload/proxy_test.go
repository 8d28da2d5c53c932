package zkload

import (
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// stallingProxy forwards TCP connections to a server and, once told,
// holds every byte in both directions for a while after the first
// connection arrives.
type stallingProxy struct {
	addr string

	mu           sync.Mutex
	gate         chan struct{} // closed while bytes flow
	after, lasts time.Duration
	armed        bool
}

func newStallingProxy(t *testing.T, target string) *stallingProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &stallingProxy{addr: ln.Addr().String(), gate: make(chan struct{})}
	close(p.gate)
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			p.connected()
			wg.Add(2)
			go func() { defer wg.Done(); p.pipe(s, c) }()
			go func() { defer wg.Done(); p.pipe(c, s) }()
			t.Cleanup(func() { c.Close(); s.Close() })
		}
	}()
	return p
}

// stallAfter arms the stall: it begins d after the next connection and
// lasts for.
func (p *stallingProxy) stallAfter(d, lasts time.Duration) {
	p.mu.Lock()
	p.after, p.lasts, p.armed = d, lasts, true
	p.mu.Unlock()
}

func (p *stallingProxy) connected() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.armed {
		return
	}
	p.armed = false
	after, lasts := p.after, p.lasts
	time.AfterFunc(after, func() {
		g := make(chan struct{})
		p.mu.Lock()
		p.gate = g
		p.mu.Unlock()
		time.AfterFunc(lasts, func() { close(g) })
	})
}

// pipe copies from src to dst, each read's bytes waiting at the gate.
func (p *stallingProxy) pipe(dst io.WriteCloser, src io.ReadCloser) {
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
