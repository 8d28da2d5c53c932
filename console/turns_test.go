package console

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// heapPeak samples the heap in use until stop is called, and returns its
// peak above what it was at the start (after a collection).
func heapPeak() (stop func() uint64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base, peak := ms.HeapInuse, ms.HeapInuse
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
		}
	}()
	return func() uint64 {
		close(done)
		<-finished
		return peak - base
	}
}

// TestExportsAtOnceTakeTurns: an export holds its subtree and then its
// JSON, and any login could ask for as many at once as its connections
// allow (16 exports of 15 MB took the heap from 38 to 718 MiB). Exports
// now take turns with the console's other large answers, at most
// maxTurns at once: twelve at once all succeed, and the heap grows by a
// few exports' worth, not twelve.
func TestExportsAtOnceTakeTurns(t *testing.T) {
	addr := startZK(t)
	zc := dialZK(t, addr)
	open := zk.WorldACL(zk.PermAll)
	mkTree(t, zc, open, "/ex")
	data := make([]byte, 1_000_000)
	for i := range 8 {
		if _, err := zc.Create(fmt.Sprintf("/ex/n%d", i), data, 0, open); err != nil {
			t.Fatal(err)
		}
	}
	b := newBrowser(t, startConsole(t, addr, false))
	b.login("", "")
	export := func() {
		resp, err := b.hc.Get(b.base + "/api/export?path=/ex")
		if err != nil {
			t.Error(err)
			return
		}
		defer resp.Body.Close()
		n, _ := io.Copy(io.Discard, resp.Body)
		if resp.StatusCode != http.StatusOK || n < 8_000_000 {
			t.Errorf("export: %s, %d bytes", resp.Status, n)
		}
	}
	export() // the login's connection has grown its buffers
	// Collect often, so that the peaks are what the exports hold rather
	// than when the collector ran.
	defer debug.SetGCPercent(debug.SetGCPercent(20))
	var one uint64 // the most one export grew it by, of three
	for range 3 {
		stop := heapPeak()
		export()
		one = max(one, stop())
	}

	// Every one of them is answered: on a slow machine (the race
	// detector, a second make test) 12 exports in two turns may outlast
	// turnWait's 10 s.
	defer func(d time.Duration) { turnWait = d }(turnWait)
	turnWait = 5 * time.Minute
	const n = 12
	stop := heapPeak()
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			export()
		}()
	}
	wg.Wait()
	many := stop()
	t.Logf("heap growth: one export %d MiB, %d at once %d MiB", one>>20, n, many>>20)
	if many > 4*one {
		t.Errorf("%d exports at once grew the heap by %d MiB, one by %d MiB: they did not take turns", n, many>>20, one>>20)
	}
}

// TestLargeAnswersTakeTurns: while maxTurns large answers are being made,
// an export, a survey, and a listing, search or deletion listing that
// meets a directory of more than largeListing children wait for a turn
// and are refused as busy after turnWait (503, Retry-After); the same
// requests over small directories, and a node's page, do not wait. Once
// the turns are given back they all answer; many takers run at most
// maxTurns at once.
func TestLargeAnswersTakeTurns(t *testing.T) {
	addr := startZK(t)
	zc := dialZK(t, addr)
	paths := []string{"/big", "/small", "/small/a"}
	for i := range largeListing + 1 {
		paths = append(paths, fmt.Sprintf("/big/n%05d", i))
	}
	mkTree(t, zc, zk.WorldACL(zk.PermAll), paths...)
	c := New(consoleConfig(addr, false))
	hs := httptest.NewServer(c.Handler())
	t.Cleanup(func() {
		hs.Close()
		c.Close()
	})
	b := newBrowser(t, hs)
	b.login("", "")
	defer func(d time.Duration) { turnWait = d }(turnWait)
	turnWait = 100 * time.Millisecond

	large := []string{"/api/export?path=/small", "/api/survey?path=/small", "/api/children?path=/big",
		"/api/search?prefix=/big/", "/api/subtree?path=/big"}
	small := []string{"/api/children?path=/small", "/api/search?prefix=/sm", "/api/subtree?path=/small",
		"/api/node?path=/big", "/api/children?path=/"}
	held := make([]*turn, maxTurns)
	for i := range held {
		held[i] = &turn{c: c}
		if err := held[i].take(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range large {
		resp, err := b.hc.Get(b.base + q)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "1" ||
			!strings.Contains(string(body), errBusy.Error()) {
			t.Errorf("%s while the turns are taken: %s %q", q, resp.Status, body)
		}
	}
	for _, q := range small {
		if st, out := b.get(q); st != http.StatusOK {
			t.Errorf("%s waited for a turn: %d %v", q, st, out)
		}
	}
	for _, h := range held {
		h.end()
	}
	for _, q := range large {
		if st, out := b.get(q); st != http.StatusOK {
			t.Errorf("%s after the turns: %d %v", q, st, out)
		}
	}
	if c.turns.Taken() != 0 {
		t.Errorf("%d turns still taken after the requests", c.turns.Taken())
	}

	turnWait = 10 * time.Second
	var running, most atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tu := &turn{c: c}
			if err := tu.take(context.Background()); err != nil {
				t.Error(err)
				return
			}
			n := running.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			time.Sleep(5 * time.Millisecond)
			running.Add(-1)
			tu.end()
		}()
	}
	wg.Wait()
	if most.Load() > maxTurns {
		t.Errorf("%d large answers at once, want at most %d", most.Load(), maxTurns)
	}
}
