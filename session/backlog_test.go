package session

import "testing"

// TestBacklogPausesTheLargest: under the global limit only a connection
// over its own limit pauses; over it, those with at least the average
// backlog pause and the small ones are read on.
func TestBacklogPausesTheLargest(t *testing.T) {
	var b backlog
	b.total.Store(MaxUnsentTotal / 2)
	b.conns.Store(4)
	if b.over(1<<20) || !b.over(MaxUnsentPerConn+1) {
		t.Fatal("within the global limit only the per-connection limit applies")
	}
	b.total.Store(MaxUnsentTotal + 1)
	avg := int64(MaxUnsentTotal+1) / 4
	if !b.over(avg + 1) {
		t.Fatal("over the global limit, a backlog above the average must pause")
	}
	if b.over(avg / 8) {
		t.Fatal("over the global limit, a small backlog must not pause")
	}
	if b.over(0) {
		t.Fatal("a connection with nothing queued must never pause")
	}
	var none *backlog
	if none.over(1<<20) || !none.over(MaxUnsentPerConn+1) {
		t.Fatal("without a Server only the per-connection limit applies")
	}
}
