package ensemble

import (
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// memberLogs gives each member of a test cluster a zap observer of its
// own.
type memberLogs struct {
	mu   sync.Mutex
	logs map[int64]*observer.ObservedLogs
}

func (m *memberLogs) tweak(cfg *Config) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.logs == nil {
		m.logs = map[int64]*observer.ObservedLogs{}
	}
	core, logs := observer.New(zapcore.InfoLevel) // a restarted member starts a new log
	m.logs[cfg.ID] = logs
	cfg.Logger = zap.New(core, zap.AddStacktrace(zapcore.ErrorLevel))
}

func (m *memberLogs) of(id int64) *observer.ObservedLogs {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.logs[id]
}

// lines are a member's entries with message msg.
func (m *memberLogs) lines(id int64, msg string) []observer.LoggedEntry {
	return m.of(id).FilterMessage(msg).AllUntimed()
}

// waitLines waits until member id has logged want lines with message msg.
func (m *memberLogs) waitLines(t *testing.T, id int64, msg string, want int) []observer.LoggedEntry {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		got := m.lines(id, msg)
		if len(got) >= want || time.Now().After(deadline) {
			if len(got) != want {
				t.Fatalf("member %d: %d %q lines, want %d: %v", id, len(got), msg, want, got)
			}
			return got
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestLeaderChangeLogLines: every member logs each election once, as
// "leader elected" with the term and the leader's id; a leader handing
// off logs "leadership lost"; a leader stopped is followed by one more
// "leader elected" on each survivor, naming the successor.
func TestLeaderChangeLogLines(t *testing.T) {
	var logs memberLogs
	c := newCluster(t, 3, logs.tweak)
	l := c.leader()
	mustPropose(t, l, newSession(1, 30000))
	c.converged(l.LastZxid())

	check := func(n *Node, id int64, term uint64, e observer.LoggedEntry) {
		t.Helper()
		f := e.ContextMap()
		if e.Level != zapcore.InfoLevel || f["term"] != term || f["leaderId"] != id || f["leaderAddr"] == "" {
			t.Fatalf("member %d: %v %q %v, want term %d leaderId %d", n.ID(), e.Level, e.Message, f, term, id)
		}
	}
	// Each member's last line names the current leader; no term twice.
	before := map[int64]int{}
	for id, n := range c.nodes {
		got := logs.lines(id, "leader elected")
		if len(got) == 0 {
			t.Fatalf("member %d logged no election", id)
		}
		check(n, l.ID(), l.Term(), got[len(got)-1])
		seen := map[interface{}]bool{}
		for _, e := range got {
			if seen[e.ContextMap()["term"]] {
				t.Fatalf("member %d logged term %v twice: %v", id, e.ContextMap()["term"], got)
			}
			seen[e.ContextMap()["term"]] = true
		}
		before[id] = len(got)
	}

	// A hand-off: the old leader says it lost leadership, every member
	// logs the successor once.
	led := l.Term()
	if err := l.HandOff(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	next := c.leader()
	for next == l {
		time.Sleep(10 * time.Millisecond)
		next = c.leader()
	}
	for id, n := range c.nodes {
		got := logs.waitLines(t, id, "leader elected", before[id]+1)
		check(n, next.ID(), next.Term(), got[len(got)-1])
		before[id]++
	}
	lost := logs.waitLines(t, l.ID(), "leadership lost", 1)
	if f := lost[0].ContextMap(); f["term"] != led || f["state"] != "Follower" {
		t.Fatalf("leadership lost: %v", f)
	}
	for id := range c.nodes {
		if id != l.ID() && len(logs.lines(id, "leadership lost")) != 0 {
			t.Fatalf("member %d never led but logged leadership lost", id)
		}
	}

	// The leader stops: each survivor logs the one successor.
	c.stop(next.ID())
	last := c.leader()
	for id, n := range c.nodes {
		got := logs.waitLines(t, id, "leader elected", before[id]+1)
		check(n, last.ID(), last.Term(), got[len(got)-1])
	}
	// Nothing more arrives later: one line per election.
	time.Sleep(500 * time.Millisecond)
	for id := range c.nodes {
		logs.waitLines(t, id, "leader elected", before[id]+1)
	}

	// raft's own lines that passed are entries with fields, never a
	// formatted "[LEVEL] raft: ..." blob, and carry no stack trace.
	for id := range logs.logs {
		for _, e := range logs.of(id).All() {
			if !strings.HasPrefix(e.LoggerName, "raft") {
				continue
			}
			if e.Stack != "" || strings.Contains(e.Message, "[") || strings.Contains(e.Message, "raft:") {
				t.Fatalf("member %d raft entry %v %q stack %q", id, e.Level, e.Message, e.Stack)
			}
		}
	}
}

// TestSessionExpiredLogLine: the leader logs an expired session once,
// with its id and timeout; followers do not.
func TestSessionExpiredLogLine(t *testing.T) {
	var logs memberLogs
	c := newCluster(t, 3, logs.tweak)
	l := c.leader()
	res := mustPropose(t, l, newSession(0x1234, 400))
	c.converged(res.Zxid)
	got := logs.waitLines(t, l.ID(), "session expired", 1)
	if f := got[0].ContextMap(); got[0].Level != zapcore.InfoLevel || f["session"] != "0x1234" || f["timeoutMs"] != int64(400) {
		t.Fatalf("session expired: %v %v", got[0].Level, f)
	}
	time.Sleep(time.Second) // no retry line at info, no line on a follower
	logs.waitLines(t, l.ID(), "session expired", 1)
	for id := range c.nodes {
		if id != l.ID() && len(logs.lines(id, "session expired")) != 0 {
			t.Fatalf("follower %d logged the expiry", id)
		}
	}
}

// TestSnapshotTakenLogLine: a snapshot is one line with its index, term
// and size; a restart restores it ("snapshot restored", not installed).
func TestSnapshotTakenLogLine(t *testing.T) {
	dir := t.TempDir()
	core, logs := observer.New(zapcore.InfoLevel)
	n := openNode(t, dir, func(c *Config) { c.Logger = zap.New(core) })
	res, err := n.ProposeWait(newSession(7, 30000))
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Snapshot(); err != nil {
		t.Fatal(err)
	}
	taken := logs.FilterMessage("snapshot taken").AllUntimed()
	if len(taken) != 1 {
		t.Fatalf("%d snapshot taken lines: %v", len(taken), taken)
	}
	f := taken[0].ContextMap()
	if index, _ := f["index"].(uint64); index < uint64(res.Zxid) || f["term"] == uint64(0) || f["bytes"].(int64) <= 0 {
		t.Fatalf("snapshot taken: %v (zxid %d)", f, res.Zxid)
	}
	n.Close()
	n = openNode(t, dir, func(c *Config) { c.Logger = zap.New(core) })
	defer n.Close()
	restored := logs.FilterMessage("snapshot restored").AllUntimed()
	if len(restored) != 1 || logs.FilterMessage("snapshot installed").Len() != 0 {
		t.Fatalf("restart: %v", logs.AllUntimed())
	}
	if r := restored[0].ContextMap(); r["index"] != f["index"] || r["nodes"].(int64) < 4 {
		t.Fatalf("snapshot restored %v, taken %v", r, f)
	}
}
