package watches

import (
	"testing"

	"github.com/zkraft/zkraft/acl"
	"github.com/zkraft/zkraft/jute"
)

// TestReadFilter: CVE-2024-23944. Only watchers with READ on the node are
// notified; filtered one-shot watches are consumed anyway (ZooKeeper removes
// them in triggerWatch before ServerCnxn.process checks the ACL).
func TestReadFilter(t *testing.T) {
	alice := jute.Id{Scheme: "digest", ID: "alice:hash"}
	bob := jute.Id{Scheme: "digest", ID: "bob:hash"}
	super := jute.Id{Scheme: "super", ID: ""}
	anyone := jute.Id{Scheme: "world", ID: "anyone"}
	cases := []struct {
		name string
		acl  []jute.ACL
		want map[string]bool // watcher name → notified
	}{
		{"empty ACL allows all", nil,
			map[string]bool{"alice": true, "bob": true, "super": true, "none": true}},
		{"world read", []jute.ACL{{Perms: jute.PermRead, ID: anyone}},
			map[string]bool{"alice": true, "bob": true, "super": true, "none": true}},
		{"world without read", []jute.ACL{{Perms: jute.PermAll &^ jute.PermRead, ID: anyone}},
			map[string]bool{"alice": false, "bob": false, "super": true, "none": false}},
		{"alice read", []jute.ACL{{Perms: jute.PermRead, ID: alice}},
			map[string]bool{"alice": true, "bob": false, "super": true, "none": false}},
		{"ip range matching everyone", []jute.ACL{{Perms: jute.PermRead, ID: jute.Id{Scheme: "ip", ID: "127.0.0.0/8"}}},
			map[string]bool{"alice": true, "bob": true, "super": true, "none": true}},
		{"ip range matching no one", []jute.ACL{{Perms: jute.PermRead, ID: jute.Id{Scheme: "ip", ID: "10.0.0.0/8"}}},
			map[string]bool{"alice": false, "bob": false, "super": true, "none": false}},
		{"alice write only", []jute.ACL{{Perms: jute.PermWrite, ID: alice}, {Perms: jute.PermRead, ID: bob}},
			map[string]bool{"alice": false, "bob": true, "super": true, "none": false}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ws := map[string]*testWatcher{
				"alice": newWatcher("alice", jute.Id{Scheme: "ip", ID: "127.0.0.1"}, alice),
				"bob":   newWatcher("bob", jute.Id{Scheme: "ip", ID: "127.0.0.1"}, bob),
				"super": newWatcher("super", jute.Id{Scheme: "ip", ID: "127.0.0.1"}, super),
				"none":  newWatcher("none", jute.Id{Scheme: "ip", ID: "127.0.0.1"}),
			}
			for _, typ := range allTypes {
				r := New()
				pers := map[string]*testWatcher{}
				for name, w := range ws {
					r.AddData("/s", w)
					r.AddChild("/s", w)
					p := newWatcher(name+"-p", w.ids...)
					r.AddPersistent("/", p, true)
					r.AddPersistent("/s", p, false)
					pers[name] = p
				}
				r.Trigger("/s", typ, 3, tc.acl)
				for name, w := range ws {
					if got := len(w.take()) == 1; got != tc.want[name] {
						t.Errorf("event %d: one-shot %s notified = %v, want %v", typ, name, got, tc.want[name])
					}
					if got := len(pers[name].take()) == 1; got != tc.want[name] {
						t.Errorf("event %d: persistent %s notified = %v, want %v", typ, name, got, tc.want[name])
					}
					wantType := jute.WatcherData
					if typ == children {
						wantType = jute.WatcherChildren
					}
					if r.Check("/s", w, wantType) {
						t.Errorf("event %d: one-shot of %s not consumed", typ, name)
					}
					if !r.Check("/s", pers[name], jute.WatcherPersistent) {
						t.Errorf("event %d: persistent of %s lost", typ, name)
					}
				}
				checkInvariants(t, r)
			}
		})
	}
}

func TestReadOpen(t *testing.T) {
	anyone := jute.Id{Scheme: "world", ID: "anyone"}
	cases := []struct {
		acl  []jute.ACL
		want bool
	}{
		{nil, true},
		{[]jute.ACL{}, true},
		{[]jute.ACL{{Perms: jute.PermRead, ID: anyone}}, true},
		{[]jute.ACL{{Perms: jute.PermAll, ID: anyone}}, true},
		{[]jute.ACL{{Perms: jute.PermWrite, ID: anyone}}, false},
		{[]jute.ACL{{Perms: jute.PermRead, ID: jute.Id{Scheme: "world", ID: "someone"}}}, false},
		{[]jute.ACL{{Perms: jute.PermRead, ID: jute.Id{Scheme: "ip", ID: "0.0.0.0/0"}}}, false},
	}
	for _, tc := range cases {
		if got := readOpen(tc.acl); got != tc.want {
			t.Errorf("readOpen(%v) = %v, want %v", tc.acl, got, tc.want)
		}
		// readOpen is a shortcut: when it says open, the real check agrees
		// for a caller with no identities at all.
		if tc.want && !acl.Check(tc.acl, jute.PermRead, nil) {
			t.Errorf("readOpen(%v) is true but the ACL check denies", tc.acl)
		}
	}
}
