package operator

import (
	"strings"
	"testing"

	"github.com/zkraft/zkraft/ensemble"
)

// nodeSource is a server with an ensemble member, or nil.
type nodeSource struct{ node *ensemble.Node }

func (s nodeSource) Node() *ensemble.Node { return s.node }

// backendSource is a server without an ensemble member but with a
// Backend, as session.Server is in observer mode.
type backendSource struct {
	nodeSource
	backend any
}

func (s backendSource) Backend() any { return s.backend }

// observerMember is a Member that is not an *ensemble.Node.
type observerMember struct{ absentMember }

func (observerMember) Mode() string { return "observer" }

func TestMemberFrom(t *testing.T) {
	ts := startServer(t)
	obs := observerMember{newAbsentMember()}
	cases := []struct {
		name string
		src  memberSource
		want func(Member) bool
	}{
		{"node", nodeSource{ts.node}, func(m Member) bool { return m == Member(ts.node) }},
		{"nil node", nodeSource{}, isAbsent},
		{"nil backend", backendSource{}, isAbsent},
		{"nil node as backend", backendSource{backend: (*ensemble.Node)(nil)}, isAbsent},
		{"node as backend", backendSource{backend: ts.node}, func(m Member) bool { return m == Member(ts.node) }},
		{"observer backend", backendSource{backend: obs}, func(m Member) bool { return m.Mode() == "observer" }},
		{"other backend", backendSource{backend: "not a member"}, isAbsent},
	}
	for _, c := range cases {
		if m := memberFrom(c.src); !c.want(m) {
			t.Errorf("%s: memberFrom gave %T", c.name, m)
		}
	}
}

func isAbsent(m Member) bool { _, ok := m.(absentMember); return ok }

// TestAbsentMemberView checks that a server without a member answers every
// four-letter word and AdminServer command, as a server not serving.
func TestAbsentMemberView(t *testing.T) {
	ts := startServer(t)
	s := view{srv: ts.srv, node: newAbsentMember(), cfg: ts.srv.Config()}
	if s.serving() || s.mode() != "" {
		t.Fatalf("absent member: serving %v, mode %q", s.serving(), s.mode())
	}
	answers := map[string]string{}
	for _, w := range Words() {
		var b strings.Builder
		s.answer(&b, w)
		answers[w] = b.String()
	}
	for w, want := range map[string]string{
		"ruok": "imok",
		"srvr": "Zxid: 0x0\nMode: \n",
		"stat": "Zxid: 0x0\nMode: \n",
		"mntr": "zk_server_state\t\n",
		"conf": "serverId=0\n",
		"dump": "SessionTracker dump:\n",
		"isro": "null",
		"wchs": "0 connections watching 0 paths\n",
	} {
		if !strings.Contains(answers[w], want) {
			t.Errorf("%s: %q lacks %q", w, answers[w], want)
		}
	}
	for _, c := range adminCommands {
		var b strings.Builder
		writeJackson(&b, c.run(s))
	}
}
