package bench

import (
	"context"
	"errors"
	"sync"
	"time"
)

// dial opens session number i (servers are used round robin).
func (r *run) dial(ctx context.Context, i int, rec *recorder, ev eventHandler) (*conn, error) {
	c, err := dial(ctx, dialOptions{
		addr:     r.cfg.Servers[i%len(r.cfg.Servers)],
		timeout:  r.cfg.SessionTimeout,
		dialWait: r.cfg.ConnectTimeout,
		inflight: r.cfg.Inflight,
		rec:      rec,
		events:   ev,
		onStop:   func(c *conn) { r.open.Delete(c) },
	})
	if err != nil {
		return nil, err
	}
	r.open.Store(c, struct{}{})
	if c.Err() != nil { // stopped before it was registered
		r.open.Delete(c)
	}
	return c, nil
}

// dialAll opens n sessions concurrently, each with its own recorder.
func (r *run) dialAll(ctx context.Context, n int, ev func(i int) eventHandler) ([]*conn, []*recorder, error) {
	conns := make([]*conn, n)
	recs := make([]*recorder, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 64) // bound concurrent handshakes
	for i := range conns {
		recs[i] = r.newRecorder()
		var h eventHandler
		if ev != nil {
			h = ev(i)
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			conns[i], errs[i] = r.dial(ctx, i, recs[i], h)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		closeAll(conns, time.Second)
		return nil, nil, err
	}
	return conns, recs, nil
}

// closeAll closes every non-nil session concurrently.
func closeAll(conns []*conn, wait time.Duration) {
	var wg sync.WaitGroup
	for _, c := range conns {
		if c == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = c.Close(wait, classNone)
		}()
	}
	wg.Wait()
}

// abortAll drops every live connection (the server stopped answering):
// pending requests fail with connection loss and blocked workers return.
func (r *run) abortAll() {
	r.open.Range(func(k, _ any) bool {
		go k.(*conn).Abort()
		return true
	})
}
