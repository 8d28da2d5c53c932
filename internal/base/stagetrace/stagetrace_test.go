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

// TestMarkRecordsNothingWhenOff: with tracing off (no ZKRAFT_STAGE_TRACE
// at start) a mark records nothing.
func TestMarkRecordsNothingWhenOff(t *testing.T) {
	was := on
	on = false
	t.Cleanup(func() { on = was })
	mu.Lock()
	before := len(buf)
	mu.Unlock()
	Mark(Store, 1)
	mu.Lock()
	after := len(buf)
	mu.Unlock()
	if after != before {
		t.Fatalf("%d marks recorded with tracing off", after-before)
	}
}
