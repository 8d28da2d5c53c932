// Package bench is `zkraft bench`, a load generator that speaks the ZooKeeper
// client protocol to any server (zkraft or Apache ZooKeeper).
//
// The client is deliberately small so that it is not the bottleneck: one TCP
// connection per session, requests pipelined up to an in-flight depth and
// written by one goroutine in coalesced batches, replies matched in order by
// one reader goroutine (ZooKeeper answers each connection's requests in
// order), explicit Jute encoding with no reflection, and latencies recorded
// into lock-free log-linear histograms owned by each worker.
//
// A run has four phases: setup (znodes the workload needs, not measured),
// warm-up (load applied, not measured), measurement, and cleanup (the
// benchmark's root, /zkraft-bench by default, is removed unless --keep).
// A request belongs to the measurement when it was sent inside the window.
package bench
