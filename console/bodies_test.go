package console

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// TestLoginBodyBounded: anyone may post a login, and its body (a user
// name and a password) was read up to maxBody (8 MiB) before any check:
// 16 logins of 7 MB at once took the heap from 28 to 493 MiB. A login's
// body past 16 KiB is refused with 413 before anything else.
func TestLoginBodyBounded(t *testing.T) {
	b := newBrowser(t, startConsole(t, startZK(t), false))
	st, out := b.do("POST", "/api/login", loginRequest{User: strings.Repeat("u", 1<<20), Password: "p"}, nil)
	if st != http.StatusRequestEntityTooLarge {
		t.Fatalf("a login of 1 MiB: %d %v", st, out)
	}
	b.login("user", strings.Repeat("p", 1000))
}

// TestLargeBodiesTakeTurns: a write's body is decoded whole (a set's of
// up to 8 MiB, an import's of up to 32 MiB), holding about three times
// its size, and a login could send as many at once as its connections
// allow. A body past 256 KiB is now read and handled in one of the
// console's turns: sixteen sets of 7 MB at once grow the heap by a few
// sets' worth, not twelve; while the turns are taken such a write is
// refused as busy after the wait, and small ones are not held up.
func TestLargeBodiesTakeTurns(t *testing.T) {
	addr := startZK(t)
	mkTree(t, dialZK(t, addr), zk.WorldACL(zk.PermAll), "/n")
	c := New(func() Config { cfg := consoleConfig(addr, false); cfg.Writable = true; return cfg }())
	hs := httptest.NewServer(c.Handler())
	t.Cleanup(func() {
		hs.Close()
		c.Close()
	})
	b := newBrowser(t, hs)
	b.login("", "")
	post := func(body []byte) int {
		req, _ := http.NewRequest("POST", b.base+"/api/set", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(csrfHeader, b.csrf)
		resp, err := b.hc.Do(req)
		if err != nil {
			t.Error(err)
			return 0
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	huge, _ := json.Marshal(setRequest{Path: "/n", Data: strings.Repeat("x", 7_000_000)}) // refused: past jute.maxbuffer
	defer debug.SetGCPercent(debug.SetGCPercent(20))
	var one uint64 // the most one set grew the heap by, of three
	for range 3 {
		stop := heapPeak()
		if st := post(huge); st != http.StatusRequestEntityTooLarge {
			t.Fatalf("a set of 7 MB: %d", st)
		}
		one = max(one, stop())
	}
	// Every one of them is answered: on a slow machine (the race
	// detector, a second make test) 16 decodes of 7 MB in two turns
	// outlast turnWait's 10 s.
	defer func(d time.Duration) { turnWait = d }(turnWait)
	turnWait = 5 * time.Minute
	const n = 16
	stop := heapPeak()
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if st := post(huge); st != http.StatusRequestEntityTooLarge {
				t.Errorf("a set of 7 MB: %d", st)
			}
		}()
	}
	wg.Wait()
	many := stop()
	t.Logf("heap growth: one set of 7 MB %d MiB, %d at once %d MiB", one>>20, n, many>>20)
	if many > 4*one {
		t.Errorf("%d sets of 7 MB at once grew the heap by %d MiB, one by %d MiB: they did not take turns", n, many>>20, one>>20)
	}

	turnWait = 100 * time.Millisecond
	held := make([]*turn, maxTurns)
	for i := range held {
		held[i] = &turn{c: c}
		if err := held[i].take(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	v := int32(-1)
	large, _ := json.Marshal(setRequest{Path: "/n", Data: strings.Repeat("x", 500_000), Version: &v})
	small, _ := json.Marshal(setRequest{Path: "/n", Data: "small", Version: &v})
	if st := post(large); st != http.StatusServiceUnavailable {
		t.Errorf("a set of 500 kB while the turns are taken: %d", st)
	}
	if st := post(small); st != http.StatusOK {
		t.Errorf("a small set while the turns are taken: %d", st)
	}
	for _, h := range held {
		h.end()
	}
	if st := post(large); st != http.StatusOK {
		t.Errorf("a set of 500 kB after the turns: %d", st)
	}
}
