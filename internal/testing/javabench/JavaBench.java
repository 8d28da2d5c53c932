// JavaBench drives a ZooKeeper-compatible ensemble with Apache ZooKeeper's
// own Java client, the way Kafka and HBase use it: asynchronous calls,
// several sessions, many requests in flight on each. It is compiled and
// run by internal/testing/javabench (scripts/benchcompare), which parses
// what it prints.
//
// Usage: java JavaBench connect workload sessions inflight warmupMs
// durationMs root keys valueSize readRatio
//
// Workloads: read (getData), write (setData), mixed (getData with
// probability readRatio, else setData) over keys znodes of valueSize
// bytes, and create-delete (create a fresh znode, then delete it; both
// are ops). A request belongs to the measurement if it was sent in it.
// Latencies go into histograms of the layout of zkraft's bench/histogram.go
// (values under 128 ns exact, then 64 buckets per power of two), printed
// as "ns:count" pairs, ns being a value in the bucket:
//
//	READY                                 sessions connected, keys created
//	SEC i ns:count ...                    requests answered in second i of the measurement
//	ALL ns:count ...                      every measured request
//	WINDOW ns                             the measurement's length
//	CPU ns                                the JVM's CPU time during it (all its threads)
//	ERROR code count                      measured requests that failed, by KeeperException code
//	DONE
//
// It halts when its standard input closes (the program that started it is
// gone) or when the run overruns its time by two minutes, whatever the
// servers do.

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

import org.apache.zookeeper.AsyncCallback;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZKUtil;
import org.apache.zookeeper.ZooDefs.Ids;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;

public class JavaBench {
    // The layout of bench/histogram.go.
    static final int SUB_BITS = 7, SUB = 1 << SUB_BITS, HALF = SUB / 2, MAX_BITS = 37;
    static final long MAX = (1L << MAX_BITS) - 1;
    static final int BUCKETS = (MAX_BITS - SUB_BITS) * HALF + SUB;

    static int bucketOf(long v) {
        if (v < SUB) {
            return v < 0 ? 0 : (int) v;
        }
        if (v > MAX) {
            v = MAX;
        }
        int e = (64 - Long.numberOfLeadingZeros(v)) - SUB_BITS;
        return e * HALF + (int) (v >>> e);
    }

    static long bucketLow(int i) {
        if (i < SUB) {
            return i;
        }
        int e = i / HALF - 1;
        long m = i - e * HALF;
        return m << e;
    }

    /** A histogram of latencies in nanoseconds, safe for many threads. */
    static final class Hist {
        final AtomicLongArray counts = new AtomicLongArray(BUCKETS);
        final AtomicLong max = new AtomicLong();

        void record(long ns) {
            counts.incrementAndGet(bucketOf(ns));
            long m;
            while (ns > (m = max.get()) && !max.compareAndSet(m, ns)) {
            }
        }

        /** "ns:count" for each bucket in use; the top one's value is the maximum. */
        String format() {
            StringBuilder b = new StringBuilder();
            int top = bucketOf(max.get());
            for (int i = 0; i < BUCKETS; i++) {
                long n = counts.get(i);
                if (n != 0) {
                    b.append(' ').append(i == top ? max.get() : bucketLow(i)).append(':').append(n);
                }
            }
            return b.toString();
        }
    }

    static String workload;
    static double readRatio;
    static String[] keys;
    static byte[] value;
    static String cdDir;
    static volatile long startNs = Long.MAX_VALUE, endNs = Long.MAX_VALUE;
    static volatile boolean stopping;
    static final Hist all = new Hist();
    static volatile Hist second = new Hist();
    static final Map<Integer, AtomicLong> errors = new ConcurrentHashMap<>();
    static final AtomicInteger chains = new AtomicInteger();
    static final AtomicLong seq = new AtomicLong();

    public static void main(String[] args) throws Exception {
        String connect = args[0];
        workload = args[1];
        int sessions = Integer.parseInt(args[2]);
        int inflight = Integer.parseInt(args[3]);
        long warmupMs = Long.parseLong(args[4]);
        long durationMs = Long.parseLong(args[5]);
        String root = args[6];
        int nkeys = Integer.parseInt(args[7]);
        value = new byte[Integer.parseInt(args[8])];
        readRatio = Double.parseDouble(args[9]);
        for (int i = 0; i < value.length; i++) {
            value[i] = (byte) ('a' + i % 26);
        }
        watchdog(warmupMs + durationMs + 120_000);

        ZooKeeper admin = connect(connect);
        if (admin.exists(root, false) != null) {
            ZKUtil.deleteRecursive(admin, root);
        }
        admin.create(root, null, Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        admin.create(root + "/keys", null, Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        cdDir = root + "/cd";
        admin.create(cdDir, null, Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        keys = new String[nkeys];
        CountDownLatch created = new CountDownLatch(nkeys);
        AtomicInteger createFailures = new AtomicInteger();
        for (int i = 0; i < nkeys; i++) {
            keys[i] = String.format("%s/keys/k%07d", root, i);
            admin.create(keys[i], value, Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT, (rc, path, ctx, name) -> {
                if (rc != 0) {
                    createFailures.incrementAndGet();
                }
                created.countDown();
            }, null);
        }
        if (!created.await(60, TimeUnit.SECONDS) || createFailures.get() > 0) {
            throw new IllegalStateException("creating the keys: " + createFailures.get() + " failed");
        }
        List<ZooKeeper> zks = new ArrayList<>();
        for (int i = 0; i < sessions; i++) {
            zks.add(connect(connect));
        }
        System.out.println("READY");
        System.out.flush();

        for (ZooKeeper zk : zks) {
            for (int j = 0; j < inflight; j++) {
                chains.incrementAndGet();
                next(zk);
            }
        }
        Thread.sleep(warmupMs);
        second = new Hist();
        startNs = System.nanoTime();
        long cpuAtStart = processCpu();
        PrintStream out = System.out;
        long deadline = startNs + durationMs * 1_000_000L;
        for (int i = 0; ; i++) {
            long secondEnd = startNs + (i + 1) * 1_000_000_000L;
            if (secondEnd > deadline) {
                break;
            }
            sleepUntil(secondEnd);
            Hist h = second;
            second = new Hist();
            out.println("SEC " + i + h.format());
        }
        sleepUntil(deadline);
        endNs = System.nanoTime();
        long cpu = processCpu() - cpuAtStart;
        stopping = true;
        long drain = System.nanoTime() + 60_000_000_000L;
        while (chains.get() > 0 && System.nanoTime() < drain) {
            Thread.sleep(10);
        }
        out.println("ALL" + all.format());
        out.println("WINDOW " + (endNs - startNs));
        if (cpu >= 0) {
            out.println("CPU " + cpu);
        }
        for (Map.Entry<Integer, AtomicLong> e : errors.entrySet()) {
            out.println("ERROR " + e.getKey() + " " + e.getValue().get());
        }
        if (chains.get() > 0) {
            out.println("ERROR unanswered " + chains.get());
        }
        out.flush();
        for (ZooKeeper zk : zks) {
            zk.close();
        }
        ZKUtil.deleteRecursive(admin, root);
        admin.close();
        out.println("DONE");
        out.flush();
        Runtime.getRuntime().halt(0);
    }

    /** processCpu is the JVM's CPU time in nanoseconds, or a negative number if unknown. */
    static long processCpu() {
        java.lang.management.OperatingSystemMXBean os = java.lang.management.ManagementFactory.getOperatingSystemMXBean();
        if (os instanceof com.sun.management.OperatingSystemMXBean) {
            return ((com.sun.management.OperatingSystemMXBean) os).getProcessCpuTime();
        }
        return -1;
    }

    static void sleepUntil(long ns) throws InterruptedException {
        long left;
        while ((left = ns - System.nanoTime()) > 0) {
            Thread.sleep(Math.max(1, left / 1_000_000L));
        }
    }

    static ZooKeeper connect(String connect) throws Exception {
        CountDownLatch up = new CountDownLatch(1);
        ZooKeeper zk = new ZooKeeper(connect, 30000, e -> {
            if (e.getState() == Watcher.Event.KeeperState.SyncConnected) {
                up.countDown();
            }
        });
        if (!up.await(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException("no session with " + connect + " within 30 s");
        }
        return zk;
    }

    /** done records a request sent at sent and answered now with rc. */
    static void done(long sent, int rc) {
        long now = System.nanoTime();
        if (sent < startNs || sent >= endNs) {
            return;
        }
        if (rc != 0) {
            errors.computeIfAbsent(rc, k -> new AtomicLong()).incrementAndGet();
            return;
        }
        all.record(now - sent);
        second.record(now - sent);
    }

    /** next sends a chain's next request, or ends the chain once stopping. */
    static void next(ZooKeeper zk) {
        if (stopping) {
            chains.decrementAndGet();
            return;
        }
        ThreadLocalRandom rnd = ThreadLocalRandom.current();
        long sent = System.nanoTime();
        switch (workload) {
            case "read":
                get(zk, rnd, sent);
                break;
            case "write":
                set(zk, rnd, sent);
                break;
            case "mixed":
                if (rnd.nextDouble() < readRatio) {
                    get(zk, rnd, sent);
                } else {
                    set(zk, rnd, sent);
                }
                break;
            case "create-delete":
                String path = cdDir + "/n" + seq.incrementAndGet();
                zk.create(path, value, Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT, (rc, p, ctx, name) -> {
                    done(sent, rc);
                    if (rc != 0) {
                        next(zk);
                        return;
                    }
                    long dsent = System.nanoTime();
                    zk.delete(path, -1, (drc, dp, dctx) -> {
                        done(dsent, drc);
                        next(zk);
                    }, null);
                }, null);
                break;
            default:
                System.err.println("unknown workload " + workload);
                Runtime.getRuntime().halt(2);
        }
    }

    static void get(ZooKeeper zk, ThreadLocalRandom rnd, long sent) {
        zk.getData(keys[rnd.nextInt(keys.length)], false, (rc, path, ctx, data, stat) -> {
            done(sent, rc);
            next(zk);
        }, null);
    }

    static void set(ZooKeeper zk, ThreadLocalRandom rnd, long sent) {
        zk.setData(keys[rnd.nextInt(keys.length)], value, -1, (rc, path, ctx, stat) -> {
            done(sent, rc);
            next(zk);
        }, null);
    }

    /** watchdog halts the JVM when stdin closes or after limitMs. */
    static void watchdog(long limitMs) {
        Thread stdin = new Thread(() -> {
            try {
                while (System.in.read() >= 0) {
                }
            } catch (Exception e) {
                // the parent is gone either way
            }
            Runtime.getRuntime().halt(3);
        });
        stdin.setDaemon(true);
        stdin.start();
        Thread timer = new Thread(() -> {
            try {
                Thread.sleep(limitMs);
            } catch (InterruptedException e) {
                return;
            }
            System.err.println("JavaBench: overran its time, halting");
            Runtime.getRuntime().halt(4);
        });
        timer.setDaemon(true);
        timer.start();
    }
}
