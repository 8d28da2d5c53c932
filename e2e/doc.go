// Package e2e is zkraft's end-to-end test suite. It starts real server
// processes and talks to them over TCP, with github.com/go-zookeeper/zk and
// with hand-built Jute frames.
//
// The target is chosen with ZKRAFT_E2E_TARGET:
//
//	zkraft     (default) the zkraft binary, built once from ./cmd/zkraft
//	zookeeper  Apache ZooKeeper 3.8 from the Debian package, the oracle
//
// Every functional expectation is meant to hold against both; run the suite
// against zookeeper to validate a new expectation before trusting it against
// zkraft. Nothing is skipped silently: a missing dependency fails the run, and
// with CI=true no test may skip for a missing dependency at all.
//
// Other knobs: ZKRAFT_E2E_LOG_LEVEL (zkraft --log-level, default info),
// ZKRAFT_E2E_ZK_LOG=1 (ZooKeeper logs through slf4j-simple instead of
// slf4j-nop), ZKRAFT_E2E_CLIENT_LOG=1 (go-zookeeper client logs on stderr).
package e2e
