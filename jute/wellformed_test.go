package jute

import "testing"

// TestWellFormed: for the writes WellFormed scans in place, every prefix of
// a valid body (and the body with a trailing byte) is judged as a decode
// would judge it, and scanning allocates nothing.
func TestWellFormed(t *testing.T) {
	acl := []ACL{{Perms: 31, ID: Id{Scheme: "world", ID: "anyone"}}, {Perms: 1, ID: Id{Scheme: "ip", ID: "10.0.0.0/8"}}}
	cases := []struct {
		op  Op
		rec Record
	}{
		{OpSetData, &SetDataRequest{Path: "/a", Data: []byte("xyz"), Version: -1}},
		{OpSetData, &SetDataRequest{Path: "/a"}}, // null data
		{OpDelete, &PathVersionRequest{Path: "/a/b", Version: 3}},
		{OpCreate, &CreateRequest{Path: "/a", Data: []byte{1}, ACL: acl, Flags: 1}},
		{OpCreate2, &CreateRequest{Path: "/a", ACL: nil}}, // null ACL vector
		{OpCreateContainer, &CreateRequest{Path: "/c", ACL: acl, Flags: 4}},
		{OpCreateTTL, &CreateRequest{Path: "/t", ACL: acl, Flags: 5, TTL: 1000, HasTTL: true}},
		{OpGetData, &PathWatchRequest{Path: "/a", Watch: true}}, // decoded, not scanned
	}
	for _, c := range cases {
		body := Marshal(c.rec)
		for n := 0; n <= len(body); n++ {
			rec, _ := NewRequest(c.op)
			want := Unmarshal(body[:n], rec) == nil
			if got := WellFormed(c.op, body[:n]); got != want {
				t.Errorf("op %d, %d of %d bytes: WellFormed %v, decode %v", c.op, n, len(body), got, want)
			}
		}
		if !WellFormed(c.op, append(body, 0)) {
			t.Errorf("op %d: a trailing byte refused", c.op)
		}
		if c.op != OpGetData {
			if a := testing.AllocsPerRun(20, func() { WellFormed(c.op, body) }); a != 0 {
				t.Errorf("op %d: %.0f allocations", c.op, a)
			}
		}
	}
	if WellFormed(OpCreateSession, nil) || WellFormed(Op(999), nil) {
		t.Error("an op without a request body is well formed")
	}
}
