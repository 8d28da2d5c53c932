package session

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkraft/zkraft/backend"
	"github.com/zkraft/zkraft/internal/testing/rawclient"
	"github.com/zkraft/zkraft/internal/testing/testmember"
	"github.com/zkraft/zkraft/jute"
)

// TestOnlyResumedSessionsAreAnnounced: a new session costs one log entry
// (createSession); only a client resuming its session announces, through
// the log, that this member now holds it. Counted on another member, which
// applies every announcement.
func TestOnlyResumedSessionsAreAnnounced(t *testing.T) {
	nodes := testmember.Ensemble(t, 3)
	if nodes == nil {
		return
	}
	var moved atomic.Int64
	nodes[1].SetHooks(backend.Hooks{SessionMoved: func(int64, int64) { moved.Add(1) }})
	srv := New(Config{TickTime: 200 * time.Millisecond}, nodes[0])
	addr := testmember.Serve(t, srv)

	created := make([]jute.ConnectResponse, 3)
	for i := range created {
		created[i] = rawclient.Dial(t, addr).Connect(false)
		if created[i].SessionID == 0 {
			t.Fatalf("session %d not created", i)
		}
	}
	resumed := rawclient.Dial(t, addr)
	resumed.Send(&jute.ConnectRequest{TimeOut: 3000, SessionID: created[0].SessionID, Passwd: created[0].Passwd})
	var resp jute.ConnectResponse
	if err := jute.Unmarshal(resumed.Frame(), &resp); err != nil || resp.SessionID != created[0].SessionID {
		t.Fatalf("resume: %+v %v", resp, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for moved.Load() < 1 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond) // any announcement of the new sessions lands by now
	if n := moved.Load(); n != 1 {
		t.Fatalf("%d session announcements applied; want 1 (the resumed session only)", n)
	}
}
