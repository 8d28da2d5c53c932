package console

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// fakeEnsemble is an EnsembleSource whose leader the test changes.
type fakeEnsemble struct{ leader atomic.Int64 }

func (f *fakeEnsemble) Leadership() (int, uint64) {
	id := int(f.leader.Load())
	return id, uint64(id) + 1
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
	c := New(Config{ClientAddr: addr, Ensemble: src})
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
