// Package watches is the local watch registry of one server: the one-shot
// data, exist and child watches set by getData/exists/getChildren, and the
// persistent and persistent-recursive watches set by addWatch. Trigger fans
// a tree change out to the watchers with ZooKeeper 3.9's exact event sets
// and READ filtering (CVE-2024-23944).
//
// # Model
//
// ZooKeeper keeps two WatchManagers, one for data watches (getData, exists,
// persistent, persistent-recursive) and one for child watches (getChildren,
// persistent). A Registry keeps both in one table: for each (path, watcher)
// pair it stores the watcher's modes in each manager. Modes coexist as in
// ZooKeeper 3.9 (ZOOKEEPER-4466): a standard watch added where the watcher
// already has a persistent one fires once and is consumed, leaving the
// persistent watch in place.
//
//	watch set by           data modes     child modes
//	getData, exists        standard       -
//	getChildren            -              standard
//	addWatch PERSISTENT    persistent     persistent
//	addWatch RECURSIVE     recursive      -
//
// # Events
//
//	NodeCreated, NodeDataChanged  data watches on the path, recursive watches on the path and its ancestors
//	NodeDeleted                   data and child watches on the path, recursive watches on ancestors
//	NodeChildrenChanged           child watches on the path only (never recursive watches)
//
// Each watcher gets at most one notification per Trigger, and standard
// (one-shot) modes are consumed by the trigger whether or not the READ filter
// then suppresses the notification, as in ZooKeeper.
//
// # Locking
//
// A Registry is safe for concurrent use. Trigger collects and unregisters
// the watchers under the registry lock, then releases it and calls Ids and
// Notify for each; Notify may therefore call back into the Registry (for
// example RemoveWatcher on a connection that gives up), but must not block.
// Trigger returns only after every Notify call has returned, so a caller that
// triggers under the tree's write lock knows the notifications are queued
// before any later read of the tree is answered.
package watches
