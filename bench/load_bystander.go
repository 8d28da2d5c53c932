package bench

import (
	"context"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/zkraft/zkraft/jute"
)

// bystanderPause is the bystander's think time between requests: it
// samples the ensemble's latency without adding a load of its own.
const bystanderPause = 5 * time.Millisecond

// bystander is a client that is not part of a class's load: one session
// (resumed like the others when its connection breaks) alternating
// getData and setData of a znode of its own, one request at a time,
// whose latency tells what the load costs everyone else.
type bystander struct {
	s     *loadSession
	key   string
	value []byte
	stop  chan struct{}
	done  chan struct{}

	mu      sync.Mutex
	samples []bySample // guarded by mu
}

// bySample is one bystander request.
type bySample struct {
	at  int64 // wall ns it was sent
	lat time.Duration
	ok  bool
}

// startBystander opens the bystander's session, creates its znode key
// and starts its loop.
func startBystander(ctx context.Context, o *LoadOptions, key string, value []byte) (*bystander, error) {
	b := &bystander{key: key, value: value, stop: make(chan struct{}), done: make(chan struct{})}
	b.s = newLoadSession(0, o.Servers, dialOptions{timeout: o.SessionTimeout, dialWait: o.SessionTimeout / 2, inflight: 2}, true, b.stop, nil)
	if err := b.s.open(ctx, 3 /* attempts */); err != nil {
		return nil, err
	}
	t := &tally{ok: jute.ErrNodeExists}
	if err := b.s.conn().Create(key, value, jute.FlagPersistent, classNone, t, 0); err != nil {
		b.s.close(time.Second)
		return nil, err
	}
	if err := b.s.conn().Barrier(ctx); err != nil {
		b.s.close(time.Second)
		return nil, err
	}
	if err := t.check("create " + key); err != nil {
		b.s.close(time.Second)
		return nil, err
	}
	go b.loop()
	return b, nil
}

// loop sends the bystander's requests until stop.
func (b *bystander) loop() {
	defer close(b.done)
	ch := make(chan jute.ErrCode, 1)
	for i := 0; ; i++ {
		select {
		case <-b.stop:
			return
		case <-time.After(bystanderPause):
		}
		c := b.s.conn()
		if c == nil { // resuming
			continue
		}
		start := wallNanos()
		var err error
		if i%2 == 0 {
			err = c.GetData(b.key, false, classNone, barrier{ch}, 0)
		} else {
			err = c.SetData(b.key, b.value, -1, classNone, barrier{ch}, 0)
		}
		code := jute.ErrConnectionLoss
		if err == nil {
			code = <-ch // the reply, or connection loss when the connection breaks
		}
		b.mu.Lock()
		b.samples = append(b.samples, bySample{at: start, lat: time.Duration(wallNanos() - start), ok: code == jute.OK})
		b.mu.Unlock()
	}
}

// close stops the loop and closes the session.
func (b *bystander) close() {
	close(b.stop)
	<-b.done
	b.s.close(2 * time.Second)
}

// Latency sums up a bystander's requests over a time.
type Latency struct {
	P50, P99, Max time.Duration // of those answered
	N, Failed     int           // requests answered, and failed
}

// window returns the latency of the requests sent between from and to.
func (b *bystander) window(from, to int64) Latency { return b.windows([2]int64{from, to}) }

// windows returns the latency of the requests sent in any of spans
// ([from, to] in wall ns).
func (b *bystander) windows(spans ...[2]int64) Latency {
	b.mu.Lock()
	var lats []time.Duration
	var l Latency
	for _, s := range b.samples {
		in := false
		for _, sp := range spans {
			in = in || (s.at >= sp[0] && s.at <= sp[1])
		}
		switch {
		case !in:
		case !s.ok:
			l.Failed++
		default:
			lats = append(lats, s.lat)
		}
	}
	b.mu.Unlock()
	l.N = len(lats)
	l.P50, l.P99, l.Max = quantile(lats, 0.5), quantile(lats, 0.99), quantile(lats, 1)
	return l
}

// quantile returns the q-quantile (0..1) of ds, nearest rank; 0 for none.
// ds is sorted in place.
func quantile[T int64 | time.Duration](ds []T, q float64) T {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	i := int(math.Ceil(q*float64(len(ds)))) - 1
	return ds[min(max(i, 0), len(ds)-1)]
}
