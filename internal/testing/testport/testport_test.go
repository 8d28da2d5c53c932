package testport

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TestFreeIsBelowTheEphemeralRangeAndNeverRepeats: ports come from
// 20000-31999, are bindable, and are not handed out twice.
func TestFreeIsBelowTheEphemeralRangeAndNeverRepeats(t *testing.T) {
	seen := map[int]bool{}
	for i := 0; i < 200; i++ {
		p, err := Free()
		if err != nil {
			t.Fatal(err)
		}
		if p < low || p >= high {
			t.Fatalf("port %d outside %d-%d", p, low, high-1)
		}
		if seen[p] {
			t.Fatalf("port %d handed out twice", p)
		}
		seen[p] = true
	}
	a, err := Addr()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", a)
	if err != nil {
		t.Fatalf("bind %s: %v", a, err)
	}
	ln.Close()
}

// TestClaimsAcrossProcesses: a port another process claimed recently is
// not handed out; a claim older than claimTTL is taken over.
func TestClaimsAcrossProcesses(t *testing.T) {
	p, err := Free()
	if err != nil {
		t.Fatal(err)
	}
	if claim(p) {
		t.Fatalf("port %d claimed twice", p)
	}
	name := filepath.Join(claimDir(), strconv.Itoa(p))
	old := time.Now().Add(-2 * claimTTL)
	if err := os.Chtimes(name, old, old); err != nil {
		t.Fatal(err)
	}
	if !claim(p) {
		t.Fatalf("stale claim on port %d not taken over", p)
	}
	if claim(p) {
		t.Fatalf("port %d claimed again right after the take-over", p)
	}
}
