// Package load holds the behaviour checks of the load classes of issue
// 37 for `make test`: a thundering herd of 2,000 watchers, a reconnect
// storm of 3,000 sessions through a leader's kill -9, ten seconds of
// three times the write capacity, and a table of 5,000 idle sessions,
// each on a fresh three-member zkraft ensemble (internal/testing/benchcluster)
// driven by the bench package's load classes, the same code as
// scripts/overload (`make overload`), which measures them against Apache
// ZooKeeper. The checks are of behaviour only: no session lost or
// expired, every watcher re-read, every session resumed, memory bounded,
// the ensemble answering right after the load; no timing beyond
// generous liveness bounds, so that they pass on a loaded machine.
//
// The package has no code of its own: everything is in its tests.
package load
