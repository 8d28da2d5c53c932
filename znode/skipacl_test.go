package znode

import (
	"testing"

	"github.com/zkraft/zkraft/jute"
)

// TestSkipACL: with Options.SkipACL a caller without the ACL's identity
// reads, writes and deletes, its getACL is not masked, and the events
// carry no ACL (every watcher is told); without it the same calls fail.
func TestSkipACL(t *testing.T) {
	alice := []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "digest", ID: "alice:x"}}}
	for _, skip := range []bool{false, true} {
		h := newHarness(t, Options{SkipACL: skip})
		if r := h.write(jute.OpCreate, &jute.CreateRequest{Path: "/p", Data: []byte("v"), ACL: alice}); r.Err != jute.OK {
			t.Fatal(r.Err)
		}
		want := jute.ErrNoAuth
		if skip {
			want = jute.OK
		}
		if _, _, err := h.tree.GetData("/p", ipIDs); errCode(orOK(err)) != want {
			t.Errorf("skip %v: getData: %v, want %v", skip, err, want)
		}
		r := h.write(jute.OpSetData, &jute.SetDataRequest{Path: "/p", Data: []byte("w"), Version: -1})
		if r.Err != want {
			t.Errorf("skip %v: setData: %v, want %v", skip, r.Err, want)
		}
		if skip && (len(r.Events) != 1 || r.Events[0].ACL != nil) {
			t.Errorf("skipACL: events %+v, want one without an ACL", r.Events)
		}
		if list, _, err := h.tree.GetACL("/p", ipIDs); skip && (err != nil || list[0].ID.ID != "alice:x") {
			t.Errorf("skipACL: getACL %v %v, want the digest unmasked", list, err)
		}
	}
}

// orOK maps a nil error to jute.OK for comparison.
func orOK(err error) error {
	if err == nil {
		return jute.OK
	}
	return err
}
