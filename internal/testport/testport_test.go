package testport

import (
	"net"
	"testing"
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
