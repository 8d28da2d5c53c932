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
// zkraft. Nothing is skipped silently: a zkraft that does not build, or a
// missing java or ZooKeeper jar for the zookeeper target, fails the whole
// run; TestDifferential, which needs ZooKeeper next to zkraft, skips with a
// SKIP message when it is missing, and fails instead when CI=true. Tests
// meaningful for one target only skip on the other and say why.
//
// Files: main_test.go (target selection, build), server_test.go (Server:
// start, stop, kill -9, restart), client_test.go (go-zookeeper sessions, a
// dialer that drops and blocks connections), raw_test.go (hand-built Jute
// frames); core, acl, multi, watch, session, frames and ops36 hold the
// functional tests, extended the container/TTL ones, durability the
// kill -9 ones, differential a seeded random comparison with ZooKeeper.
//
// Other knobs: ZKRAFT_E2E_LOG_LEVEL (zkraft --log-level, default info),
// ZKRAFT_E2E_ZK_LOG=1 (ZooKeeper logs through slf4j-simple instead of
// slf4j-nop), ZKRAFT_E2E_CLIENT_LOG=1 (go-zookeeper client logs on stderr),
// ZKRAFT_E2E_SEED (the differential test's sequence). -short skips the
// slowest tests (kill/restart, differential).
package e2e
