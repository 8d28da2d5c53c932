package console

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/acl"
)

// fakeEnsemble is an EnsembleSource whose leader the test changes.
type fakeEnsemble struct{ leader atomic.Int64 }

func (f *fakeEnsemble) Leadership() (int64, uint64) {
	id := f.leader.Load()
	return id, uint64(id) + 1
}

func (f *fakeEnsemble) Sessions(int, int) ([]SessionStatus, int) {
	return []SessionStatus{{ID: 0x99, TimeoutMs: 4000, Ephemerals: []string{"/priv", "/pub"}, NumEphemerals: 2}, {ID: 0x9a, TimeoutMs: 30000}}, 2
}

func (f *fakeEnsemble) Members(context.Context) []MemberStatus {
	return []MemberStatus{{ID: 1, Role: "leader", Self: true}, {ID: 2, Role: "follower"}, {ID: 3, Error: "connection refused"}}
}

// TestEnsembleEndpoint: the ensemble page's data carries the members as
// the source tells them, the leader and term, each leadership change the
// console saw (once), and the latency of its own requests by operation.
func TestEnsembleEndpoint(t *testing.T) {
	addr := startZK(t)
	src := &fakeEnsemble{}
	src.leader.Store(1)
	cfg := consoleConfig(addr, false)
	cfg.Ensemble = src
	c := New(cfg)
	hs := httptest.NewServer(c.Handler())
	t.Cleanup(func() { hs.Close(); c.Close() })
	b := newBrowser(t, hs)
	b.login("alice", "pw")
	b.get("/api/children?path=/")
	time.Sleep(1500 * time.Millisecond)
	src.leader.Store(2)
	time.Sleep(1500 * time.Millisecond)
	st, out := b.get("/api/ensemble")
	if st != http.StatusOK || out["leader"] != 2.0 || out["term"] != 3.0 || len(out["members"].([]any)) != 3 {
		t.Fatalf("ensemble: %d %v", st, out)
	}
	changes := out["changes"].([]any)
	if len(changes) != 2 || changes[0].(map[string]any)["leader"] != 1.0 || changes[1].(map[string]any)["leader"] != 2.0 {
		t.Fatalf("changes: %v", changes)
	}
	var ops []string
	for _, o := range out["ops"].([]any) {
		ops = append(ops, o.(map[string]any)["op"].(string))
	}
	if len(ops) < 2 || ops[0] != "exists" && ops[0] != "getChildren" {
		t.Fatalf("ops: %v", ops)
	}
}

// TestSessionsEndpoint: the sessions list shows each session's ephemerals
// the login may read and counts the others, and never a password.
func TestSessionsEndpoint(t *testing.T) {
	addr := startZK(t)
	owner := dialZK(t, addr, "alice:pw")
	if _, err := owner.Create("/pub", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	only := []zk.ACL{{Perms: zk.PermAll, Scheme: "digest", ID: acl.DigestID("alice", "pw")}}
	if _, err := owner.Create("/priv", nil, 0, only); err != nil {
		t.Fatal(err)
	}
	cfg := consoleConfig(addr, false)
	cfg.Ensemble = &fakeEnsemble{}
	c := New(cfg)
	hs := httptest.NewServer(c.Handler())
	t.Cleanup(func() { hs.Close(); c.Close() })
	for user, want := range map[string]string{
		"bob":   `[{"ephemerals":["/pub"],"hidden":1,"id":"0x99","timeoutMs":4000},{"ephemerals":[],"id":"0x9a","timeoutMs":30000}]`,
		"alice": `[{"ephemerals":["/priv","/pub"],"id":"0x99","timeoutMs":4000},{"ephemerals":[],"id":"0x9a","timeoutMs":30000}]`,
	} {
		b := newBrowser(t, hs)
		b.login(user, "pw")
		st, out := b.get("/api/sessions")
		got, _ := json.Marshal(out["sessions"])
		if st != http.StatusOK || string(got) != want || out["total"] != 2.0 {
			t.Fatalf("%s: %d %s, want %s", user, st, got, want)
		}
	}
}

// boundedEnsemble is an EnsembleSource that lists fewer sessions and
// ephemerals than there are, as a member holding many does, and records
// the bounds it was asked for.
type boundedEnsemble struct {
	fakeEnsemble
	asked [2]atomic.Int64
}

func (f *boundedEnsemble) Sessions(maxSessions, maxEphemerals int) ([]SessionStatus, int) {
	f.asked[0].Store(int64(maxSessions))
	f.asked[1].Store(int64(maxEphemerals))
	return []SessionStatus{{ID: 0x99, TimeoutMs: 4000, Ephemerals: []string{"/pub"}, NumEphemerals: 4}}, 600
}

// TestSessionsEndpointBounded: the console asks its source for no more
// sessions and paths than the page shows, and ephemerals the source did
// not list are counted as unlisted, not as refused to the login.
func TestSessionsEndpointBounded(t *testing.T) {
	addr := startZK(t)
	owner := dialZK(t, addr)
	if _, err := owner.Create("/pub", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	src := &boundedEnsemble{}
	cfg := consoleConfig(addr, false)
	cfg.Ensemble = src
	c := New(cfg)
	hs := httptest.NewServer(c.Handler())
	t.Cleanup(func() { hs.Close(); c.Close() })
	b := newBrowser(t, hs)
	b.login("bob", "pw")
	st, out := b.get("/api/sessions")
	got, _ := json.Marshal(out["sessions"])
	want := `[{"ephemerals":["/pub"],"id":"0x99","timeoutMs":4000,"unlisted":3}]`
	if st != http.StatusOK || string(got) != want || out["total"] != 600.0 || out["truncated"] != true {
		t.Fatalf("%d %s total %v truncated %v, want %s total 600 truncated", st, got, out["total"], out["truncated"], want)
	}
	if s, e := src.asked[0].Load(), src.asked[1].Load(); s != maxSessionsShown || e != maxEphemeralsShown {
		t.Fatalf("asked for %d sessions and %d paths, want %d and %d", s, e, maxSessionsShown, maxEphemeralsShown)
	}
}
