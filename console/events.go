package console

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/zkraft/zkraft/internal/cli/zkjson"
	"github.com/zkraft/zkraft/internal/zookeeper/watchconn"
)

// watchEvent is one "change" event of the stream.
type watchEvent struct {
	Type string `json:"type"`
	Path string `json:"path"`
	Zxid string `json:"zxid"`
}

// openWatch opens a session of the login's user (digest; "" for none)
// holding a persistent recursive watch on root.
func openWatch(l *login, root string, timeout time.Duration) (*watchconn.Session, error) {
	var auth []watchconn.Credential
	if l.user != "" {
		auth = []watchconn.Credential{{Scheme: "digest", Auth: []byte(l.user + ":" + l.password)}}
	}
	return watchconn.Open(watchconn.Config{Dial: l.dial, Path: root, Recursive: true, Auth: auth, Timeout: timeout})
}

// maxStreams bounds the live streams one login may hold open (each is a
// ZooKeeper session).
const maxStreams = 4

// sseHeartbeat is how often an idle stream sends a comment, so proxies
// and the browser keep it open.
const sseHeartbeat = 15 * time.Second

// handleEvents streams changes under ?path= as server-sent events: one
// "change" event per notification of a persistent recursive watch set by
// a session with the login's credentials, after a "ready" event once the
// watch is set. The stream ends when the page goes away, the watch
// session ends (the browser's EventSource then reconnects) or the login
// does (the reconnect then finds no login). While it is open the login is
// held (its browser is there); when it ends the HeartbeatTimeout starts.
func (c *Console) handleEvents(w http.ResponseWriter, r *http.Request) {
	l, root := current(r), queryPath(r)
	flusher, ok := w.(http.Flusher)
	if !ok {
		fail(w, http.StatusInternalServerError, "streaming unsupported")
		return
	}
	if l.streams.Add(1) > maxStreams {
		l.streams.Add(-1)
		fail(w, http.StatusTooManyRequests, "too many live views open for this login")
		return
	}
	defer l.streams.Add(-1)
	// Runs before the decrement above: a login is never without a stream
	// and with a stale lastSeen, so the page's reconnect (a reload, a
	// watch session that ended) is never taken for its going away.
	defer func() { l.seen(time.Now()) }()
	ws, err := openWatch(l, root, c.cfg.SessionTimeout)
	if err != nil {
		fail(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	defer ws.Close()
	l.liveIDs.Store(ws.ID(), struct{}{})
	defer l.liveIDs.Delete(ws.ID())
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprintf(w, "event: ready\ndata: {\"path\":%q}\n\n", root)
	flusher.Flush()
	beat := time.NewTicker(sseHeartbeat)
	defer beat.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-l.ended: // logged out or idled out
			return
		case <-beat.C:
			fmt.Fprint(w, ": heartbeat\n\n")
		case ev, ok := <-ws.Events():
			if !ok {
				return
			}
			b, _ := json.Marshal(watchEvent{Type: ev.TypeName(), Path: ev.Path, Zxid: zkjson.Hex(ev.Zxid)})
			fmt.Fprintf(w, "event: change\ndata: %s\n\n", b)
		}
		flusher.Flush()
	}
}
