package server

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestLifecycle walks every event from every state: the transitions of
// a live migration's cutover, and the refusals, with the reason an
// operator reads.
func TestLifecycle(t *testing.T) {
	events := []event{evFreeze, evStop, evThaw, evExpire, evCutover}
	want := map[State]map[event]State{
		StateFollowing: {evFreeze: StateFrozen, evThaw: StateFollowing},
		StateFrozen:    {evFreeze: StateFrozen, evStop: StateStopped, evThaw: StateFollowing, evExpire: StateFollowing},
		StateStopped:   {evStop: StateStopped, evThaw: StateFollowing, evExpire: StateFollowing, evCutover: StateMember},
		StateMember:    {},
	}
	for from, row := range want {
		for _, e := range events {
			l := lifecycle{state: from}
			to, err := l.next(e)
			exp, ok := row[e]
			switch {
			case ok && (err != nil || to != exp):
				t.Errorf("%s --%s-->: %s, %v; want %s", from, e, to, err, exp)
			case !ok && (err == nil || to != from):
				t.Errorf("%s --%s--> %s taken; want it refused", from, e, to)
			}
			if l.can(e) != ok {
				t.Errorf("%s: can(%s) = %v", from, e, !ok)
			}
			l.apply(e)
			if ok && l.state != exp || !ok && l.state != from {
				t.Errorf("%s --%s--> applied: %s", from, e, l.state)
			}
		}
	}
	for _, tc := range []struct {
		from State
		e    event
		msg  string
	}{
		{StateFollowing, evStop, "cannot stop: following (freeze first)"},
		{StateFollowing, evCutover, "cannot cutover: following"},
		{StateMember, evThaw, "cannot thaw: the cutover is done"},
		{StateMember, evFreeze, "cannot freeze: the cutover is done"},
	} {
		l := lifecycle{state: tc.from}
		if _, err := l.next(tc.e); err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s --%s-->: %v, want %q", tc.from, tc.e, err, tc.msg)
		}
	}
}

// TestLifecycleRun: a cutover called off and tried again, as zkraft
// migrate cutover may, ends a member; nothing leaves a member.
func TestLifecycleRun(t *testing.T) {
	l := lifecycle{state: StateFollowing}
	for _, e := range []event{evFreeze, evFreeze, evStop, evThaw, evFreeze, evExpire, evFreeze, evStop, evStop, evCutover} {
		if _, err := l.next(e); err != nil {
			t.Fatalf("%s in %s: %v", e, l.state, err)
		}
		l.apply(e)
	}
	if l.state != StateMember {
		t.Fatalf("ended %s", l.state)
	}
	for _, e := range []event{evFreeze, evStop, evThaw, evExpire, evCutover} {
		if l.can(e) {
			t.Errorf("a member takes %s", e)
		}
	}
}

// TestDivergedRefusesTheCutover: a server whose tree refused a change
// ZooKeeper committed says so in its migration status, and `zkraft
// cutover` refuses it (Diverged), rather than seed a new ensemble whose
// members Raft would take as equal.
func TestDivergedRefusesTheCutover(t *testing.T) {
	if err := (MigrationStatus{}).Diverged(); err != nil {
		t.Fatalf("a server that applied everything: %v", err)
	}
	var st MigrationStatus
	if err := json.Unmarshal([]byte(`{"state":"following","not_applied":2}`), &st); err != nil {
		t.Fatal(err)
	}
	if err := st.Diverged(); err == nil || !strings.Contains(err.Error(), "2 changes ZooKeeper committed were not applied") {
		t.Fatalf("a server with 2 changes not applied: %v", err)
	}
}
