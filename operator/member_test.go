package operator

import (
	"strings"
	"testing"

	"github.com/zkraft/zkraft/backend"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// backendSource is a server with the Backend b (nil: none).
type backendSource struct{ b backend.Backend }

func (s backendSource) Backend() backend.Backend { return s.b }

// observerBackend is a Backend that is not an *ensemble.Node: an absent
// member that says it observes, with a data path never called here.
type observerBackend struct{ absentMember }

func (observerBackend) Mode() string                                              { return "observer" }
func (observerBackend) Propose(*znode.Txn, backend.Waiter)                        {}
func (observerBackend) ProposeWait(*znode.Txn) (*znode.Result, error)             { return nil, nil }
func (observerBackend) Barrier(backend.Waiter)                                    {}
func (observerBackend) TouchSession(int64)                                        {}
func (observerBackend) AnnounceSession(int64, backend.Waiter)                     {}
func (observerBackend) Reconfig(*jute.ReconfigRequest, []jute.Id, backend.Waiter) {}
func (observerBackend) SetHooks(backend.Hooks)                                    {}

// TestMemberFrom: the operator surfaces read the server's Backend as its
// Member, whatever it is; a server without one reads as a member that is
// not serving.
func TestMemberFrom(t *testing.T) {
	ts := startServer(t)
	obs := observerBackend{newAbsentMember()}
	cases := []struct {
		name string
		src  memberSource
		want func(backend.Member) bool
	}{
		{"node", backendSource{ts.node}, func(m backend.Member) bool { return m == backend.Member(ts.node) }},
		{"observer backend", backendSource{obs}, func(m backend.Member) bool { return m.Mode() == "observer" }},
		{"no backend", backendSource{}, isAbsent},
	}
	for _, c := range cases {
		if m := memberFrom(c.src); !c.want(m) {
			t.Errorf("%s: memberFrom gave %T", c.name, m)
		}
	}
}

func isAbsent(m backend.Member) bool { _, ok := m.(absentMember); return ok }

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
