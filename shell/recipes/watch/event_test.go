package watch

import (
	"bytes"
	"testing"
)

// TestPrint: a text line is "TYPE PATH ZXID" with " (while away)" when
// away; JSON carries the data except for a deletion, and away only when
// set.
func TestPrint(t *testing.T) {
	cases := []struct {
		ev     Event
		asJSON bool
		want   string
	}{
		{Event{Type: NodeCreated, Path: "/a", Zxid: 0x1f, Data: []byte("v")}, false, "NodeCreated /a 0x1f\n"},
		{Event{Type: NodeDeleted, Path: "/a", Zxid: 0x20, Away: true}, false, "NodeDeleted /a 0x20 (while away)\n"},
		{Event{Type: NodeDataChanged, Path: "/a", Zxid: 0x21, Data: []byte("w")}, true, `{"type":"NodeDataChanged","path":"/a","zxid":"0x21","data":"w"}` + "\n"},
		{Event{Type: NodeDeleted, Path: "/a", Zxid: 0x22, Away: true}, true, `{"type":"NodeDeleted","path":"/a","zxid":"0x22","away":true}` + "\n"},
	}
	for _, c := range cases {
		var b bytes.Buffer
		if err := Print(&b, c.ev, c.asJSON); err != nil {
			t.Fatal(err)
		}
		if b.String() != c.want {
			t.Errorf("Print(%+v, json=%v) = %q, want %q", c.ev, c.asJSON, b.String(), c.want)
		}
	}
}

// TestSortEventsKeepsTies: events sort by zxid, and a deletion listed
// before a creation at the same zxid stays first.
func TestSortEventsKeepsTies(t *testing.T) {
	evs := []Event{{Type: NodeDataChanged, Zxid: 9}, {Type: NodeDeleted, Zxid: 5}, {Type: NodeCreated, Zxid: 5}, {Type: NodeCreated, Zxid: 3}}
	sortEvents(evs)
	var got []string
	for _, e := range evs {
		got = append(got, e.Type)
	}
	want := []string{NodeCreated, NodeDeleted, NodeCreated, NodeDataChanged}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("sorted: %v, want %v", got, want)
		}
	}
}

// TestFollows: without recursion the root and its children; with it,
// every descendant; never a sibling sharing the root's prefix.
func TestFollows(t *testing.T) {
	flat := newWatcher(nil, "/a", false)
	deep := newWatcher(nil, "/a", true)
	top := newWatcher(nil, "/", false)
	for _, c := range []struct {
		w    *watcher
		p    string
		want bool
	}{
		{flat, "/a", true}, {flat, "/a/b", true}, {flat, "/a/b/c", false}, {flat, "/ab", false},
		{deep, "/a/b/c", true}, {deep, "/ab", false}, {top, "/x", true}, {top, "/x/y", false},
	} {
		if got := c.w.follows(c.p); got != c.want {
			t.Errorf("root %s recursive=%v follows(%s) = %v, want %v", c.w.root, c.w.recursive, c.p, got, c.want)
		}
	}
}
