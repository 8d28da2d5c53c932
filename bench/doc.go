// Package bench is `zkraft bench`, a load generator that speaks the ZooKeeper
// client protocol to any server (zkraft or Apache ZooKeeper).
//
//	zkraft bench --server 127.0.0.1:2181 --workload read --sessions 16 --inflight 32 --duration 30s
//	zkraft bench --server a:2181,b:2181,c:2181 --workload mixed --read-ratio 0.8 --json
//	zkraft bench --workload watch-fanout --watchers 500
//	zkraft bench --workload populate --nodes 1000000 --keep
//	zkraft bench --workload idle-sessions --sessions 10000 --duration 1m
//
// Workloads and what one op is:
//
//   - read: getData of a random key among --keys znodes of --value-size bytes.
//   - write: setData (version -1) of a random key.
//   - mixed: getData with probability --read-ratio, otherwise setData.
//   - create-delete: create a fresh persistent znode, then delete it
//     (both pipelined; reported as two rows).
//   - ephemeral-churn: each worker loops over a session's life: connect
//     (TCP + handshake), --ephemerals ephemeral creates and the closeSession
//     pipelined in one write, then close; one goroutine per worker. Rows:
//     connect, create, closeSession and the whole session-cycle. Afterwards
//     the benchmark checks that no ephemeral survived its session.
//   - watch-fanout: --watchers sessions hold a data watch on one znode; one
//     writer sets it; a fanout-round lasts from the setData until the last
//     watcher is notified. Rows: fanout-round, watch-event (setData →
//     one watcher's event), watch-arm (getData with watch), setData.
//     Duplicate or unexpected notifications are reported as problems.
//   - populate: create --nodes znodes (1000 per directory; with --shape
//     realistic, exactly --nodes znodes laid out by bench/treeshape like a
//     real ensemble's tree, as scripts/scale uses); the measurement ends when
//     all exist, and the count is checked with getAllChildrenNumber.
//   - idle-sessions: connect --sessions sessions and hold them, sending only
//     pings, for the warm-up and --duration; there is no op. It is the load
//     under which a server's memory and CPU per connected client are read
//     from outside (scripts/benchcompare does).
//
// The client is deliberately small so that it is not the bottleneck: one TCP
// connection per session, requests pipelined up to --inflight and written by
// one goroutine in coalesced batches, replies matched in order by one reader
// goroutine (ZooKeeper answers each connection's requests in order; anything
// else is reported as a protocol violation), explicit Jute encoding with no
// reflection and no allocation per reply, pings when idle, a read timeout
// of 2/3 of the session timeout like ZooKeeper's own client, and latencies
// recorded into lock-free log-linear histograms (1.6% resolution) owned by
// each worker. Ephemeral churn runs each short session on its worker's
// goroutine instead. The result reports the client's own CPU time during the
// measurement (client_cpu_seconds; per op in the table), so a run can be
// checked for a client that took much of a machine it shares with the
// servers.
// Each row of the JSON also carries the latency at a spectrum of quantiles
// (10% to the maximum) and the p50 and p99 of each whole second of the
// measurement, from which scripts/benchcompare draws its plots; Summarize
// and Histogram.RecordN give other load generators (the Java and
// go-zookeeper clients there) rows of the same kind.
//
// The load classes of scripts/overload (issue 37) are Go entry points
// rather than workloads, since each needs what only its caller can do
// (kill a member, read the members' memory): RunHerd (a thundering herd
// of watchers re-reading one znode), RunStorm (sessions resuming on the
// survivors of a member's kill -9), RunOverload (three times the write
// capacity offered, a bystander's latency and the recovery) and RunTable
// (idle sessions held while the caller measures the members). Their
// sessions behave as ZooKeeper's client does: they ping from the moment
// they open and, where resumed, try the next server after a random pause
// of up to a second, presenting their id, password and last zxid. Tens of
// thousands of them are spread over worker processes (`zkraft bench
// --worker`, JSON requests on stdin), so that no process needs more file
// descriptors than RLIMIT_NOFILE allows; times cross between the
// processes as wall-clock nanoseconds.
//
// A run has four phases: setup (znodes and sessions the workload needs, not
// measured), warm-up (load applied, not measured), measurement, and cleanup
// (the benchmark's root, /zkraft-bench by default, is removed unless --keep).
// A request belongs to the measurement when it was sent inside the window;
// ops/s is successful ops in the window divided by its length. Errors are
// counted by class and ZooKeeper code (or client failure: connection loss,
// timeout). Live progress goes to stderr, the table or JSON to stdout.
package bench
