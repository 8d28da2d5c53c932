package znode

import (
	"reflect"
	"testing"

	"github.com/zkraft/zkraft/jute"
)

func TestReaper(t *testing.T) {
	h := newHarness(t, Options{ExtendedTypes: true})
	h.now = 1000
	h.write(jute.OpCreateContainer, &jute.CreateRequest{Path: "/used", ACL: openACL, Flags: 4})
	h.write(jute.OpCreateContainer, &jute.CreateRequest{Path: "/fresh", ACL: openACL, Flags: 4})
	h.write(jute.OpCreateContainer, &jute.CreateRequest{Path: "/busy", ACL: openACL, Flags: 4})
	h.write(jute.OpCreateTTL, &jute.CreateRequest{Path: "/ttl", ACL: openACL, Flags: 5, TTL: 100, HasTTL: true})
	h.write(jute.OpCreateTTL, &jute.CreateRequest{Path: "/ttlkid", ACL: openACL, Flags: 5, TTL: 100, HasTTL: true})
	h.mustCreate("/used/c", nil, 0)
	h.write(jute.OpDelete, &jute.PathVersionRequest{Path: "/used/c", Version: -1})
	h.mustCreate("/busy/c", nil, 0)
	h.mustCreate("/ttlkid/c", nil, 0)
	h.mustCreate("/plain", nil, 0)

	// Containers and TTL nodes report ephemeralOwner 0.
	for _, p := range []string{"/used", "/ttl"} {
		if st := h.stat(p); st.EphemeralOwner != 0 {
			t.Errorf("%s owner %d", p, st.EphemeralOwner)
		}
	}
	if got := h.tree.ReapCandidates(1100); !reflect.DeepEqual(got, []string{"/used"}) {
		t.Fatalf("at 1100: %v", got)
	}
	if got := h.tree.ReapCandidates(1101); !reflect.DeepEqual(got, []string{"/ttl", "/used"}) {
		t.Fatalf("at 1101: %v", got)
	}

	del := func(path string, now int64) *Result {
		h.zxid++
		return h.tree.Apply(NewDeleteContainerTxn(path, now), h.zxid)
	}
	cases := []struct {
		path string
		now  int64
		want jute.ErrCode
	}{
		{"/ttl", 1100, jute.ErrBadVersion}, // not yet expired
		{"/fresh", 5000, jute.ErrBadVersion},
		{"/plain", 5000, jute.ErrBadVersion},
		{"/busy", 5000, jute.ErrNotEmpty},
		{"/ttlkid", 5000, jute.ErrNotEmpty},
		{"/gone", 5000, jute.ErrNoNode},
		{"/", 5000, jute.ErrBadArguments},
		{"/zookeeper", 5000, jute.ErrBadArguments},
		{"/used", 5000, jute.OK},
		{"/ttl", 1101, jute.OK},
	}
	for _, c := range cases {
		r := del(c.path, c.now)
		if r.Err != c.want {
			t.Errorf("deleteContainer %s at %d: %v want %v", c.path, c.now, r.Err, c.want)
		}
		if r.Err == jute.OK && (len(r.Events) != 2 || r.Events[0].Type != jute.EventNodeDeleted) {
			t.Errorf("events %+v", r.Events)
		}
	}
	if got := h.tree.ReapCandidates(1 << 40); len(got) != 0 {
		t.Fatalf("left: %v", got)
	}
	// The reaper needs no session.
	h.apply(&Txn{Type: jute.OpCloseSession, Session: testSession})
	h.write(jute.OpDelete, &jute.PathVersionRequest{Path: "/busy/c", Version: -1}) // expired: no effect
	h.sess = 0
	if r := del("/busy", 5000); r.Err != jute.ErrNotEmpty {
		t.Fatalf("%v", r.Err)
	}
}

func TestTTLNotReapedWithoutExtendedTypes(t *testing.T) {
	h := newHarness(t, Options{ExtendedTypes: true})
	h.write(jute.OpCreateTTL, &jute.CreateRequest{Path: "/ttl", ACL: openACL, Flags: 5, TTL: 1, HasTTL: true})
	h.tree.opts.ExtendedTypes = false
	if got := h.tree.ReapCandidates(1 << 40); len(got) != 0 {
		t.Fatalf("%v", got)
	}
}
