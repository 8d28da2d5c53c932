// Package backend is the vocabulary of the seam between the client
// protocol and the replicated state that serves it, shared by both sides
// so that neither imports the other:
//
//   - Backend is what a session.Server serves, and Member what the
//     operator surfaces (four-letter words, AdminServer, metrics) read of
//     it. ensemble.Node is one; internal/zookeeper/observer's Backend (a
//     zkraft observer of a running ZooKeeper ensemble) is the other.
//   - Waiter, Abandoner and Hooks are how a proposal's outcome and a
//     session's life reach the session layer.
//   - Peer and the member lines (ParseServerLine, ParseMembers,
//     RenderMembers) are zoo.cfg's server.N lines and /zookeeper/config.
//   - Metrics, FsyncTimes, RaftIndexes and FollowerLag are the figures a
//     member measures, for the metrics.
//
// It imports only the data layers below it (jute, znode, watches).
package backend
