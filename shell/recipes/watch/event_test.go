package watch

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/zkraft/zkraft/internal/zookeeper/watchconn"
	"github.com/zkraft/zkraft/jute"
)

// TestPrint: a text line is "TYPE PATH ZXID" with " (while away)" when
// away; JSON carries the data when it was read as of the change, and
// away only when set.
func TestPrint(t *testing.T) {
	cases := []struct {
		ev     Event
		asJSON bool
		want   string
	}{
		{Event{Type: NodeCreated, Path: "/a", Zxid: 0x1f, Data: []byte("v")}, false, "NodeCreated /a 0x1f\n"},
		{Event{Type: NodeDeleted, Path: "/a", Zxid: 0x20, Away: true}, false, "NodeDeleted /a 0x20 (while away)\n"},
		{Event{Type: NodeDataChanged, Path: "/a", Zxid: 0x21, Data: []byte("w"), HasData: true}, true, `{"type":"NodeDataChanged","path":"/a","zxid":"0x21","data":"w"}` + "\n"},
		{Event{Type: NodeDataChanged, Path: "/a", Zxid: 0x21}, true, `{"type":"NodeDataChanged","path":"/a","zxid":"0x21"}` + "\n"},
		{Event{Type: NodeChildrenChanged, Path: "/a", Zxid: 0x23}, false, "NodeChildrenChanged /a 0x23\n"},
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

// TestFollows: without recursion the root alone (its children's changes
// come as its NodeChildrenChanged); with it, every descendant; never a
// sibling sharing the root's prefix.
func TestFollows(t *testing.T) {
	flat := newWatcher(nil, "/a", false)
	deep := newWatcher(nil, "/a", true)
	top := newWatcher(nil, "/", false)
	deepTop := newWatcher(nil, "/", true)
	for _, c := range []struct {
		w    *watcher
		p    string
		want bool
	}{
		{flat, "/a", true}, {flat, "/a/b", false}, {flat, "/a/b/c", false}, {flat, "/ab", false},
		{deep, "/a/b/c", true}, {deep, "/ab", false}, {top, "/", true}, {top, "/x", false}, {deepTop, "/x/y", true},
	} {
		if got := c.w.follows(c.p); got != c.want {
			t.Errorf("root %s recursive=%v follows(%s) = %v, want %v", c.w.root, c.w.recursive, c.p, got, c.want)
		}
	}
}

// TestApplyDropsWhatTheSnapshotHolds: a notification already accounted
// for by a re-read (its zxid no later than the snapshot's) prints
// nothing; a later one prints and moves the snapshot on; a deletion of
// an earlier incarnation is dropped.
func TestApplyDropsWhatTheSnapshotHolds(t *testing.T) {
	w := newWatcher(nil, "/a", true)
	w.snap["/a/b"] = node{czxid: 5, mzxid: 9, pzxid: 5}
	for _, c := range []struct {
		ev   watchconn.Event
		want bool
	}{
		{watchconn.Event{Type: jute.EventNodeDataChanged, Path: "/a/b", Zxid: 9}, false},
		{watchconn.Event{Type: jute.EventNodeDataChanged, Path: "/a/b", Zxid: 10}, true},
		{watchconn.Event{Type: jute.EventNodeDataChanged, Path: "/a/b", Zxid: 10}, false},
		{watchconn.Event{Type: jute.EventNodeCreated, Path: "/a/b", Zxid: 5}, false},
		{watchconn.Event{Type: jute.EventNodeDeleted, Path: "/a/b", Zxid: 4}, false},
		{watchconn.Event{Type: jute.EventNodeDeleted, Path: "/a/b", Zxid: 11}, true},
		{watchconn.Event{Type: jute.EventNodeDeleted, Path: "/a/b", Zxid: 12}, false},
		{watchconn.Event{Type: jute.EventNodeCreated, Path: "/ab", Zxid: 13}, false},
	} {
		if _, got := w.apply(c.ev); got != c.want {
			t.Errorf("apply(%s %s %d) printed %v, want %v", c.ev.TypeName(), c.ev.Path, c.ev.Zxid, got, c.want)
		}
	}
}

// TestCatchUpLeavesLaterChangesToTheWatch: a re-read after a watch set at
// zxid 20 reports what changed up to 20 (a data change, a deletion at the
// parent's pzxid, a creation) and leaves a change after 20 to the
// watch's notification: a data change at 25 is not reported, and the
// snapshot keeps the mzxid it had so the notification prints.
func TestCatchUpLeavesLaterChangesToTheWatch(t *testing.T) {
	w := newWatcher(nil, "/a", true)
	w.snap = map[string]node{"/a": {1, 1, 3}, "/a/x": {2, 2, 2}, "/a/y": {3, 3, 3}, "/a/z": {4, 4, 4}}
	tree := map[string]stat{
		"/a":   {czxid: 1, mzxid: 1, pzxid: 18},
		"/a/x": {czxid: 2, mzxid: 12, pzxid: 2},
		"/a/z": {czxid: 4, mzxid: 25, pzxid: 4},
		"/a/n": {czxid: 15, mzxid: 15, pzxid: 15},
	}
	var got []string
	for _, ev := range w.catchUp(tree, 20) {
		got = append(got, fmt.Sprintf("%s %s %d", ev.Type, ev.Path, ev.Zxid))
	}
	want := []string{"NodeDataChanged /a/x 12", "NodeCreated /a/n 15", "NodeDeleted /a/y 18"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("catch-up:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if _, ok := w.apply(watchconn.Event{Type: jute.EventNodeDataChanged, Path: "/a/z", Zxid: 25}); !ok {
		t.Fatal("the data change after the watch was set was dropped")
	}
}
