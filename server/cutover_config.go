package server

import (
	"bytes"

	"github.com/zkraft/zkraft/ensemble"
	"github.com/zkraft/zkraft/internal/zookeeper/observer"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// refireConfig notifies /zookeeper/config's watchers again once the
// clients' requests go to the new member, if the member's membership
// there is not the text the observer served. The new ensemble's first
// leader writes it as soon as it is elected, which fires the watches
// (the registry is shared) while the clients' reads still go to the
// observer's tree, ZooKeeper's membership: a client whose watch fired
// then read ZooKeeper's text again and set its watch, and would hear of
// the new one never. Curator's EnsembleTracker is such a client: it kept
// ZooKeeper's servers as its connect string and lost its session at its
// next reconnect, to servers that are gone. A watcher told twice only
// reads the same text twice.
func refireConfig(old *observer.Backend, node *ensemble.Node) {
	t := old.RLockTree()
	was, _, err := t.GetData(znode.ConfigPath, nil)
	old.RUnlockTree()
	if err != nil {
		return
	}
	t = node.RLockTree()
	now, st, err := t.GetData(znode.ConfigPath, nil)
	acl, _ := t.NodeACL(znode.ConfigPath)
	node.RUnlockTree()
	if err != nil || len(now) == 0 || bytes.Equal(was, now) {
		return // not written yet: its write fires the watches then
	}
	old.Watches().Trigger(znode.ConfigPath, jute.EventNodeDataChanged, st.Mzxid, acl)
}
