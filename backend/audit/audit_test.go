package audit

import (
	"testing"

	"github.com/zkraft/zkraft/jute"
)

// TestEventLayout: ZooKeeper's field order, empty fields left out, and
// its renderings of users, create modes and ACLs (no separator between
// ACL entries, as ZKUtil.aclToString writes them).
func TestEventLayout(t *testing.T) {
	e := Event{Session: "0x1", User: Users([]jute.Id{{Scheme: "digest", ID: "alice:hash"}, {Scheme: "super"}, {Scheme: "ip", ID: "10.0.0.1"}}),
		IP: "10.0.0.1", Operation: "setAcl", Znode: "/a",
		ACL:    ACLString([]jute.ACL{{Perms: jute.PermRead, ID: jute.Id{Scheme: "world", ID: "anyone"}}, {Perms: jute.PermAll, ID: jute.Id{Scheme: "ip", ID: "10.0.0.1"}}}),
		Result: Result(true)}
	want := "session=0x1\tuser=alice,10.0.0.1\tip=10.0.0.1\toperation=setAcl\tznode=/a\tacl=world:anyone:rip:10.0.0.1:cdrwa\tresult=success"
	if got := e.String(); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if got := (Event{User: "root", Operation: "serverStop", Result: "invoked"}).String(); got != "user=root\toperation=serverStop\tresult=invoked" {
		t.Errorf("server event %q", got)
	}
	for flags, want := range map[int32]string{0: "persistent", 1: "ephemeral", 2: "persistent_sequential", 3: "ephemeral_sequential",
		4: "container", 5: "persistent_with_ttl", 6: "persistent_sequential_with_ttl", 9: ""} {
		if got := CreateMode(flags); got != want {
			t.Errorf("CreateMode(%d) = %q, want %q", flags, got, want)
		}
	}
}
