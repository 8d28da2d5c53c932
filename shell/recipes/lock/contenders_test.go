package lock

import "testing"

// TestPredecessorOrdersBothNamings: Curator's and kazoo's nodes are
// ordered by their sequence suffix alone, whatever their prefix; other
// children do not take part.
func TestPredecessorOrdersBothNamings(t *testing.T) {
	children := []string{
		"ffff__lock__0000000003",   // kazoo, third
		"_c_0000-lock-0000000001",  // Curator, first
		"lease_holder",             // not a contender
		"_c_9999-lock-0000000004",  // self
		"0000__lock__0000000002",   // kazoo, second
		"_c_aaaa-lock-0000000007",  // later
		"aaaa__rlock__0000000000",  // a kazoo read lock: not this recipe's
		"_c_bbbb-latch-0000000006", // a LeaderLatch node: ordered too
	}
	for _, tc := range []struct{ self, pred string }{
		{"_c_aaaa-lock-0000000007", "_c_bbbb-latch-0000000006"},
		{"_c_9999-lock-0000000004", "ffff__lock__0000000003"},
		{"ffff__lock__0000000003", "0000__lock__0000000002"},
		{"0000__lock__0000000002", "_c_0000-lock-0000000001"},
		{"_c_0000-lock-0000000001", ""},
	} {
		pred, found := predecessor(children, tc.self)
		if !found || pred != tc.pred {
			t.Errorf("predecessor of %s = %q, %v; want %q", tc.self, pred, found, tc.pred)
		}
	}
	if _, found := predecessor(children, "_c_gone-lock-0000000005"); found {
		t.Error("a node not among the children was found")
	}
}
