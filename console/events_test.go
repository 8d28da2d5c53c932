package console

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/acl"
	"github.com/zkraft/zkraft/session"
)

// sseEvent is one server-sent event.
type sseEvent struct{ name, data string }

// openStream opens the live stream of root for b's login and returns its
// events as they arrive.
func openStream(t *testing.T, b *browser, root string) <-chan sseEvent {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", b.base+"/api/events?path="+root, nil)
	hc := *b.hc
	hc.Timeout = 0
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("events: %s %s", resp.Status, resp.Header.Get("Content-Type"))
	}
	out := make(chan sseEvent, 64)
	go func() {
		defer resp.Body.Close()
		defer close(out)
		sc := bufio.NewScanner(resp.Body)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				ev.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				ev.data = strings.TrimPrefix(line, "data: ")
			case line == "" && ev.name != "":
				out <- ev
				ev = sseEvent{}
			}
		}
	}()
	return out
}

// nextChange waits for the next change event.
func nextChange(t *testing.T, events <-chan sseEvent, within time.Duration) (watchEvent, bool) {
	t.Helper()
	timeout := time.After(within)
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatal("stream ended")
			}
			if ev.name != "change" {
				continue
			}
			var we watchEvent
			if err := json.Unmarshal([]byte(ev.data), &we); err != nil {
				t.Fatalf("change %q: %v", ev.data, err)
			}
			return we, true
		case <-timeout:
			return watchEvent{}, false
		}
	}
}

// TestEventsStreamChanges: another client's create, set and delete under
// the watched path arrive on the stream in order; changes elsewhere do
// not; a change to a node the login may not read is not told (the
// server's READ filter, as for any client).
func TestEventsStreamChanges(t *testing.T) {
	addr := startZK(t)
	other := dialZK(t, addr, "alice:pw")
	open := zk.WorldACL(zk.PermAll)
	for _, p := range []string{"/live", "/elsewhere"} {
		if _, err := other.Create(p, nil, 0, open); err != nil {
			t.Fatal(err)
		}
	}
	b := newBrowser(t, startConsole(t, addr, false))
	b.login("bob", "pw")
	events := openStream(t, b, "/live")
	if ev := <-events; ev.name != "ready" {
		t.Fatalf("first event %v, want ready", ev)
	}
	only := []zk.ACL{{Perms: zk.PermAll, Scheme: "digest", ID: acl.DigestID("alice", "pw")}}
	if _, err := other.Create("/live/hidden", nil, 0, only); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Create("/elsewhere/x", nil, 0, open); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Create("/live/a", []byte("1"), 0, open); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Set("/live/a", []byte("2"), 0); err != nil {
		t.Fatal(err)
	}
	if err := other.Delete("/live/a", 1); err != nil {
		t.Fatal(err)
	}
	want := []watchEvent{{Type: "NodeCreated", Path: "/live/a"}, {Type: "NodeDataChanged", Path: "/live/a"}, {Type: "NodeDeleted", Path: "/live/a"}}
	for _, w := range want {
		got, ok := nextChange(t, events, 5*time.Second)
		if !ok || got.Type != w.Type || got.Path != w.Path || got.Zxid == "" {
			t.Fatalf("got %+v (arrived %v), want %+v", got, ok, w)
		}
	}
	if got, ok := nextChange(t, events, 300*time.Millisecond); ok {
		t.Fatalf("unexpected %+v", got)
	}
	// Logging out ends the stream (and its watch session).
	b.post("/api/logout", struct{}{})
	deadline := time.After(5 * time.Second)
	for open := true; open; {
		select {
		case _, open = <-events:
		case <-deadline:
			t.Fatal("the stream outlived the login")
		}
	}
}

// TestEventsStreamOutlivesShortSessionTimeout: the live stream's watch
// session pings at a third of the timeout the server granted, not of the
// one the console asked for, so a member whose maxSessionTimeout is below
// the console's SessionTimeout does not expire it (ending the stream)
// while the page is open.
func TestEventsStreamOutlivesShortSessionTimeout(t *testing.T) {
	addr := startZKWith(t, session.Config{TickTime: 100 * time.Millisecond, MaxSessionTimeout: time.Second})
	other := dialZK(t, addr)
	if _, err := other.Create("/live", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	cfg := consoleConfig(addr, false)
	cfg.SessionTimeout = 30 * time.Second
	c := New(cfg)
	hs := httptest.NewServer(c.Handler())
	t.Cleanup(func() { hs.Close(); c.Close() })
	b := newBrowser(t, hs)
	b.login("", "")
	events := openStream(t, b, "/live")
	if ev := <-events; ev.name != "ready" {
		t.Fatalf("first event %v, want ready", ev)
	}
	time.Sleep(3 * time.Second) // three granted timeouts
	// other's own session has the same short timeout: on a busy machine it
	// may lose its connection meanwhile (what is tested is the stream's).
	for try := 0; ; try++ {
		_, err := other.Create("/live/a", nil, 0, zk.WorldACL(zk.PermAll))
		if err == nil || (err == zk.ErrNodeExists && try > 0) {
			break
		}
		if try == 10 || (err != zk.ErrConnectionClosed && err != zk.ErrSessionExpired && err != zk.ErrNoServer) {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	got, ok := nextChange(t, events, 5*time.Second) // fails if the stream ended
	if !ok || got.Path != "/live/a" {
		t.Fatalf("got %+v (arrived %v), want /live/a's creation", got, ok)
	}
}
