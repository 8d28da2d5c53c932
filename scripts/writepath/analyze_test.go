package main

import (
	"strings"
	"testing"
	"time"

	st "github.com/zkraft/zkraft/internal/base/stagetrace"
)

// TestAnalyzePairsAWriteAcrossMembers: one write through the leader
// (member 0), seen on both followers; the session's marks pair with the
// entry the leader stored next, a follower row is the quicker follower's,
// and an entry with no proposal before it (a session close) is left out.
func TestAnalyzePairsAWriteAcrossMembers(t *testing.T) {
	us := func(n int64) int64 { return 1_000_000 + n*int64(time.Microsecond) }
	leader := []mark{
		{us(0), st.Propose, 0},
		{us(20), st.Store, 7},
		{us(100), st.Sent, 7},
		{us(400), st.Durable, 7},
		{us(500), st.Answered, 7},
		{us(550), st.ApplyEnter, 7},
		{us(600), st.ApplyDone, 7},
		{us(650), st.ReplyWritten, 0},
		// an entry nobody proposed through a session just before
		{us(90_000), st.Store, 8},
		{us(90_100), st.ApplyEnter, 8},
		{us(90_200), st.ApplyDone, 8},
	}
	slow := []mark{{us(300), st.Received, 7}, {us(800), st.Durable, 7}}
	quick := []mark{{us(150), st.Received, 7}, {us(450), st.Durable, 7}}
	rep := analyze([][]mark{leader, slow, quick}, 0, 0)
	if rep.writes != 1 {
		t.Fatalf("%d writes paired, want 1", rep.writes)
	}
	want := map[rowKey]time.Duration{
		{onEntry, st.Propose}:      0,
		{onLeader, st.Store}:       20 * time.Microsecond,
		{onFollower, st.Received}:  150 * time.Microsecond,
		{onFollower, st.Durable}:   450 * time.Microsecond,
		{onLeader, st.ApplyDone}:   600 * time.Microsecond,
		{onEntry, st.ReplyWritten}: 650 * time.Microsecond,
	}
	for k, d := range want {
		got := rep.rows[k]
		if len(got) != 1 || got[0] != d {
			t.Errorf("%v on %v: %v, want [%v]", k.stage, k.on, got, d)
		}
	}
	table := rep.table()
	for _, s := range []string{"| received | follower | 150 | +50 |", "| reply.written | client's member | 650 | +50 |"} {
		if !strings.Contains(table, s) {
			t.Errorf("table lacks %q:\n%s", s, table)
		}
	}
}
