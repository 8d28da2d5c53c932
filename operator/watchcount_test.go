package operator

import (
	"fmt"
	"testing"

	"github.com/zkraft/zkraft/jute"
)

// countedWatcher is a watcher of the registry that no connection stands
// behind.
type countedWatcher struct{ int }

func (*countedWatcher) Notify(string, jute.EventType, int64) {}
func (*countedWatcher) Ids() []jute.Id                       { return nil }

// TestMonitorWatchCountDoesNotWalkTheWatches: mntr's and /metrics'
// zk_watch_count walked every watch under the registry's lock (and built
// a set of every watcher), the lock the FSM takes for each event it
// fires: with a million watched paths each scrape held up every write on
// the member for about 0.4 s. It is now the count the registry keeps, so
// what the figures cost does not grow with the watches (counted in
// allocations, the walk's set), and it counts both of ZooKeeper's watch
// managers as its getWatchCount does (a getChildren watch too).
func TestMonitorWatchCountDoesNotWalkTheWatches(t *testing.T) {
	ts := startServer(t)
	c := adminClientState(t, ts) // a data and a child watch on /a, an exists watch on /a/b
	defer c.Conn.Close()
	v := newView(ts.srv)
	watchCount := func() any {
		for _, f := range v.monitorValues() {
			if f.key == "watch_count" {
				return f.value
			}
		}
		t.Fatal("no watch_count figure")
		return nil
	}
	if got := watchCount(); got != 3 {
		t.Errorf("watch_count = %v, want 3 (ZooKeeper 3.8's for these watches)", got)
	}

	few := testing.AllocsPerRun(5, func() { v.monitorValues() })
	const many = 16384
	for i := range many {
		ts.node.Watches().AddData(fmt.Sprintf("/w%d", i), &countedWatcher{i})
	}
	if got := watchCount(); got != 3+many {
		t.Errorf("watch_count = %v, want %d", got, 3+many)
	}
	if more := testing.AllocsPerRun(5, func() { v.monitorValues() }); more > few+8 {
		t.Errorf("the monitor figures cost %v allocations with %d more watches, %v without: they walk the watches", more, many, few)
	}
}
