package stagetrace

import "testing"

// TestStageNamesRoundTrip: every stage's name in a trace file reads back
// as that stage, and nothing else reads as one.
func TestStageNamesRoundTrip(t *testing.T) {
	for s := Propose; s <= ReplyWritten; s++ {
		if got := ParseStage(s.String()); got != s {
			t.Errorf("ParseStage(%q) = %v, want %v", s.String(), got, s)
		}
	}
	for _, bad := range []string{"", "stage99", "Store"} {
		if got := ParseStage(bad); got != 0 {
			t.Errorf("ParseStage(%q) = %v, want 0", bad, got)
		}
	}
}

// TestMarkIsOffByDefault: without ZKRAFT_STAGE_TRACE nothing is recorded.
func TestMarkIsOffByDefault(t *testing.T) {
	if On() {
		t.Skip("ZKRAFT_STAGE_TRACE is set for this process")
	}
	Mark(Store, 1)
	mu.Lock()
	n := len(buf)
	mu.Unlock()
	if n != 0 {
		t.Fatalf("%d marks recorded with tracing off", n)
	}
}
