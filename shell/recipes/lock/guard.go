package lock

import (
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
)

// Guard watches a connection's session events and reports the session
// lost: expired, refused for its credentials, or disconnected for longer
// than the session timeout (past which the ensemble may have expired it
// without this client hearing of it).
type Guard struct {
	timeout time.Duration
	lost    chan struct{}

	mu    sync.Mutex
	had   bool // a session was established
	done  bool
	timer *time.Timer
	why   string
}

// NewGuard returns a Guard for a session of the given timeout; pass its
// Event to zk.WithEventCallback.
func NewGuard(sessionTimeout time.Duration) *Guard {
	return &Guard{timeout: sessionTimeout, lost: make(chan struct{})}
}

// Lost is closed once the session is lost.
func (g *Guard) Lost() <-chan struct{} { return g.lost }

// Why says how the session was lost ("" while it is not).
func (g *Guard) Why() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.why
}

// Event takes one go-zookeeper event.
func (g *Guard) Event(ev zk.Event) {
	if ev.Type != zk.EventSession {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	switch ev.State {
	case zk.StateHasSession:
		g.had = true
		if g.timer != nil {
			g.timer.Stop()
			g.timer = nil
		}
	case zk.StateExpired:
		g.loseLocked("session expired")
	case zk.StateAuthFailed:
		g.loseLocked("authentication failed")
	case zk.StateDisconnected:
		if g.had && g.timer == nil && !g.done {
			g.timer = time.AfterFunc(g.timeout, func() {
				g.mu.Lock()
				defer g.mu.Unlock()
				if g.timer != nil {
					g.loseLocked("disconnected for longer than the session timeout " + g.timeout.String())
				}
			})
		}
	}
}

func (g *Guard) loseLocked(why string) {
	if g.done {
		return
	}
	g.done, g.why = true, why
	if g.timer != nil {
		g.timer.Stop()
		g.timer = nil
	}
	close(g.lost)
}
