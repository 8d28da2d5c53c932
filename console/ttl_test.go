package console

import (
	"net/http"
	"testing"

	"github.com/zkraft/zkraft/znode"
)

// TestCreateTTLOutOfRange: a TTL the server refuses (over 2^40-1 ms, or
// not positive) is refused, never wrapped into another one. The first
// case is 2^64/10^6 ms rounded up plus 1000: as a time.Duration of
// nanoseconds it wraps to just over one second, which made a node that
// expires a second after it was last changed.
func TestCreateTTLOutOfRange(t *testing.T) {
	addr := startZK(t)
	other := dialZK(t, addr)
	b := newBrowser(t, startConsole(t, addr, true))
	b.login("alice", "pw")
	for _, ttl := range []int64{18446744073710 + 1000, znode.MaxTTL + 1, 0, -1} {
		st, out := b.post("/api/create", createRequest{Path: "/t", Mode: "ttl", TTLMs: ttl})
		if st != http.StatusBadRequest || out["code"] != "BadArguments" {
			t.Fatalf("ttl %d: %d %v, want 400 BadArguments", ttl, st, out)
		}
	}
	if ok, _, _ := other.Exists("/t"); ok {
		t.Fatal("/t exists")
	}
}
