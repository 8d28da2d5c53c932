// CuratorCompat drives one ZooKeeper-compatible server with Apache Curator
// 5 (Debian's libcurator-*-java), the client library most JVM services use
// ZooKeeper through, printing one line per check:
//
//	PASS name detail
//	FAIL name detail
//
// and exiting 1 if any check failed. Usage: java CuratorCompat host:port
// /root (the root must not exist). The e2e test runs it against zkraft and,
// to validate the program itself, against Apache ZooKeeper. The server must
// have TTL nodes enabled (extendedTypesEnabled).

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.api.transaction.CuratorTransactionResult;
import org.apache.curator.framework.recipes.atomic.AtomicValue;
import org.apache.curator.framework.recipes.atomic.DistributedAtomicLong;
import org.apache.curator.framework.recipes.barriers.DistributedDoubleBarrier;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderSelector;
import org.apache.curator.framework.recipes.leader.LeaderSelectorListenerAdapter;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.framework.recipes.nodes.GroupMember;
import org.apache.curator.framework.recipes.nodes.PersistentNode;
import org.apache.curator.framework.recipes.queue.DistributedQueue;
import org.apache.curator.framework.recipes.queue.QueueBuilder;
import org.apache.curator.framework.recipes.queue.QueueConsumer;
import org.apache.curator.framework.recipes.queue.QueueSerializer;
import org.apache.curator.framework.recipes.shared.SharedCount;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

public class CuratorCompat {
    static String addr;
    static String root;
    static int failures;
    static int checks;
    static final List<CuratorFramework> clients = Collections.synchronizedList(new ArrayList<>());

    public static void main(String[] args) throws Exception {
        addr = args[0];
        root = args[1];
        String only = args.length > 2 ? args[2] : "";
        // A hung recipe must not hang the test: report and stop.
        Thread watchdog = new Thread(() -> {
            try {
                Thread.sleep(150_000);
            } catch (InterruptedException e) {
                return;
            }
            System.out.println("FAIL watchdog the program ran for more than 150 s");
            System.out.flush();
            Runtime.getRuntime().halt(2);
        });
        watchdog.setDaemon(true);
        watchdog.start();

        CuratorFramework c = client();
        c.create().forPath(root, new byte[0]); // Curator's default data is the local address
        String[] sections = {"framework", "transaction", "cache", "mutex", "semaphore", "rwlock", "latch",
            "selector", "atomic", "shared", "barrier", "persistent", "group", "queue"};
        for (String s : sections) {
            if (!only.isEmpty() && !only.equals(s)) {
                continue;
            }
            String base = root + "/" + s;
            c.create().forPath(base, new byte[0]);
            long start = System.nanoTime();
            try {
                switch (s) {
                    case "framework": framework(c, base); break;
                    case "transaction": transaction(c, base); break;
                    case "cache": cache(c, base); break;
                    case "mutex": mutex(base); break;
                    case "semaphore": semaphore(base); break;
                    case "rwlock": rwlock(base); break;
                    case "latch": latch(base); break;
                    case "selector": selector(base); break;
                    case "atomic": atomic(base); break;
                    case "shared": shared(base); break;
                    case "barrier": barrier(base); break;
                    case "persistent": persistent(c, base); break;
                    case "group": group(base); break;
                    case "queue": queue(base); break;
                    default: break;
                }
            } catch (Throwable e) {
                check(s + "/exception", false, e.toString());
                e.printStackTrace(System.out);
            }
            System.out.printf("INFO section %s took %d ms%n", s, (System.nanoTime() - start) / 1000000);
        }
        for (CuratorFramework h : new ArrayList<>(clients)) {
            h.close();
        }
        System.out.printf("DONE %d checks, %d failed%n", checks, failures);
        System.out.flush();
        System.exit(failures == 0 ? 0 : 1);
    }

    // ---- helpers

    static void check(String name, boolean ok, Object detail) {
        checks++;
        if (!ok) {
            failures++;
        }
        System.out.println((ok ? "PASS " : "FAIL ") + name + " " + detail);
    }

    static void eq(String name, Object want, Object got) {
        boolean ok = want == null ? got == null : want.equals(got);
        check(name, ok, ok ? String.valueOf(got) : "want " + want + " got " + got);
    }

    /** A started client, connected, closed at the end. */
    static CuratorFramework client() throws Exception {
        CuratorFramework c = CuratorFrameworkFactory.builder()
            .connectString(addr)
            .sessionTimeoutMs(20000)
            .connectionTimeoutMs(10000)
            .retryPolicy(new RetryNTimes(3, 200))
            .build();
        clients.add(c);
        c.start();
        if (!c.blockUntilConnected(15, TimeUnit.SECONDS)) {
            throw new IllegalStateException("not connected to " + addr);
        }
        return c;
    }

    static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static String s(byte[] b) {
        return b == null ? "null" : new String(b, StandardCharsets.UTF_8);
    }

    interface Call {
        Object run() throws Exception;
    }

    /** Runs a Curator call from a Runnable, turning its exception unchecked. */
    static void forPath(Call call) {
        try {
            call.run();
        } catch (Exception e) {
            throw new RuntimeException(e);
        }
    }

    static String rel(String path) {
        return path.startsWith(root) ? "~" + path.substring(root.length()) : path;
    }

    // ---- the framework's own API

    static void framework(CuratorFramework c, String base) throws Exception {
        // Parents created as needed (persistent) and as containers.
        c.create().creatingParentsIfNeeded().forPath(base + "/p/q/r", b("deep"));
        eq("framework/parents", "deep", s(c.getData().forPath(base + "/p/q/r")));
        c.create().creatingParentContainersIfNeeded().forPath(base + "/c/d", b("x"));
        Stat st = c.checkExists().forPath(base + "/c");
        check("framework/container-parent", st != null && st.getEphemeralOwner() == 0, st);

        Stat created = new Stat();
        c.create().storingStatIn(created).forPath(base + "/stat", b("v0"));
        eq("framework/create-stat-version", 0, created.getVersion());
        Stat set = c.setData().withVersion(0).forPath(base + "/stat", b("v1"));
        eq("framework/setData-version", 1, set.getVersion());
        try {
            c.setData().withVersion(0).forPath(base + "/stat", b("v2"));
            check("framework/bad-version", false, "no exception");
        } catch (KeeperException.BadVersionException e) {
            check("framework/bad-version", true, e.code());
        }
        try {
            c.create().forPath(base + "/stat");
            check("framework/node-exists", false, "no exception");
        } catch (KeeperException.NodeExistsException e) {
            check("framework/node-exists", true, e.code());
        }

        // Protected ephemeral sequential: the name carries Curator's GUID
        // prefix and the server's sequence suffix.
        String prot = c.create().withProtection().withMode(CreateMode.EPHEMERAL_SEQUENTIAL).forPath(base + "/lock-", b(""));
        String name = prot.substring(prot.lastIndexOf('/') + 1);
        check("framework/protected-name", name.startsWith("_c_") && name.matches(".*-lock-\\d{10}"), name);
        eq("framework/protected-ephemeral", c.getZookeeperClient().getZooKeeper().getSessionId(),
            c.checkExists().forPath(prot).getEphemeralOwner());

        // TTL node.
        c.create().withTtl(60000).withMode(CreateMode.PERSISTENT_WITH_TTL).forPath(base + "/ttl", b("t"));
        eq("framework/ttl", "t", s(c.getData().forPath(base + "/ttl")));

        // A one-shot watch through usingWatcher.
        BlockingQueue<String> events = new LinkedBlockingQueue<>();
        c.getData().usingWatcher((org.apache.zookeeper.Watcher) e -> events.add(e.getType() + " " + rel(e.getPath())))
            .forPath(base + "/stat");
        c.setData().forPath(base + "/stat", b("v9"));
        eq("framework/watch", "NodeDataChanged ~/framework/stat", events.poll(5, TimeUnit.SECONDS));

        // Children, sorted, and a guaranteed recursive delete.
        List<String> kids = new ArrayList<>(c.getChildren().forPath(base + "/p"));
        eq("framework/children", "[q]", kids.toString());
        c.delete().guaranteed().deletingChildrenIfNeeded().forPath(base + "/p");
        eq("framework/delete-recursive", null, c.checkExists().forPath(base + "/p"));

        // An async create in the background, answered through a callback.
        CountDownLatch done = new CountDownLatch(1);
        AtomicInteger rc = new AtomicInteger(-1);
        c.create().inBackground((client, event) -> {
            rc.set(event.getResultCode());
            done.countDown();
        }).forPath(base + "/async", b("a"));
        check("framework/background", done.await(5, TimeUnit.SECONDS) && rc.get() == 0, rc.get());

        // Ensemble configuration as Curator reads it (getConfig).
        byte[] config = c.getConfig().forEnsemble();
        check("framework/getConfig", config != null, "config bytes " + (config == null ? -1 : config.length));
    }

    static void transaction(CuratorFramework c, String base) throws Exception {
        CuratorOp a = c.transactionOp().create().forPath(base + "/a", b("1"));
        CuratorOp bOp = c.transactionOp().create().withMode(CreateMode.PERSISTENT_SEQUENTIAL).forPath(base + "/s-", b("2"));
        CuratorOp chk = c.transactionOp().check().withVersion(0).forPath(base + "/a");
        CuratorOp set = c.transactionOp().setData().forPath(base + "/a", b("3"));
        List<CuratorTransactionResult> res = c.transaction().forOperations(a, bOp, chk, set);
        List<String> got = new ArrayList<>();
        for (CuratorTransactionResult r : res) {
            got.add(r.getType() + ":" + rel(r.getForPath()) + ":" + (r.getResultPath() == null ? "-" : rel(r.getResultPath()))
                + ":" + r.getError());
        }
        eq("transaction/results",
            "[CREATE:~/transaction/a:~/transaction/a:0, CREATE:~/transaction/s-:~/transaction/s-0000000001:0, "
                + "CHECK:~/transaction/a:-:0, SET_DATA:~/transaction/a:-:0]",
            got.toString());
        try {
            c.transaction().forOperations(
                c.transactionOp().create().forPath(base + "/b"),
                c.transactionOp().delete().forPath(base + "/missing"));
            check("transaction/failure", false, "no exception");
        } catch (KeeperException.NoNodeException e) {
            check("transaction/failure", true, e.code());
        }
        eq("transaction/atomic", null, c.checkExists().forPath(base + "/b"));
    }

    // ---- recipes

    /** CuratorCache: a persistent recursive watch (ZooKeeper 3.6+). */
    static void cache(CuratorFramework c, String base) throws Exception {
        BlockingQueue<String> events = new LinkedBlockingQueue<>();
        CountDownLatch initialized = new CountDownLatch(1);
        c.create().forPath(base + "/pre", b("0"));
        CuratorCache cache = CuratorCache.build(c, base);
        cache.listenable().addListener(CuratorCacheListener.builder()
            .forCreates(n -> events.add("create " + rel(n.getPath()) + " " + s(n.getData())))
            .forChanges((o, n) -> events.add("change " + rel(n.getPath()) + " " + s(o.getData()) + "->" + s(n.getData())))
            .forDeletes(o -> events.add("delete " + rel(o.getPath())))
            .forInitialized(initialized::countDown)
            .build());
        cache.start();
        check("cache/initialized", initialized.await(10, TimeUnit.SECONDS), "");
        List<String> initial = new ArrayList<>();
        String e;
        while ((e = events.poll(300, TimeUnit.MILLISECONDS)) != null) {
            initial.add(e);
        }
        Collections.sort(initial);
        eq("cache/initial", "[create ~/cache , create ~/cache/pre 0]", initial.toString());
        // One change at a time: CuratorCache reports a deletion at once but a
        // data change only after re-reading the node, so the listener's order
        // across quick successive changes is Curator's, not the server's.
        List<String> got = new ArrayList<>();
        Runnable[] steps = {
            () -> forPath(() -> c.create().forPath(base + "/x", b("1"))),
            () -> forPath(() -> c.create().forPath(base + "/x/y", b("2"))),
            () -> forPath(() -> c.setData().forPath(base + "/x", b("3"))),
            () -> forPath(() -> c.delete().forPath(base + "/x/y")),
        };
        for (Runnable step : steps) {
            step.run();
            String ev = events.poll(5, TimeUnit.SECONDS);
            if (ev == null) {
                break;
            }
            got.add(ev);
        }
        eq("cache/events", "[create ~/cache/x 1, create ~/cache/x/y 2, change ~/cache/x 1->3, delete ~/cache/x/y]",
            got.toString());
        eq("cache/contents", "3", s(cache.get(base + "/x").get().getData()));
        cache.close();
    }

    static void mutex(String base) throws Exception {
        CuratorFramework c1 = client();
        CuratorFramework c2 = client();
        InterProcessMutex m1 = new InterProcessMutex(c1, base + "/m");
        InterProcessMutex m2 = new InterProcessMutex(c2, base + "/m");
        check("mutex/acquire", m1.acquire(5, TimeUnit.SECONDS), "");
        check("mutex/reentrant", m1.acquire(5, TimeUnit.SECONDS), "");
        check("mutex/excluded", !m2.acquire(500, TimeUnit.MILLISECONDS), "second client waited");
        ExecutorService ex = Executors.newSingleThreadExecutor();
        Future<Boolean> waiting = ex.submit(() -> m2.acquire(10, TimeUnit.SECONDS));
        Thread.sleep(300);
        m1.release();
        check("mutex/still-held", !waiting.isDone(), "held once more (reentrant)");
        m1.release();
        check("mutex/handover", waiting.get(10, TimeUnit.SECONDS), "");
        ex.submit(() -> {
            m2.release();
            return null;
        }).get(5, TimeUnit.SECONDS);
        ex.shutdown();
        // /m is a container: once empty the server's reaper may delete it
        // (every second in these tests), which cleans it all the more.
        int left = 0;
        try {
            left = c1.getChildren().forPath(base + "/m").size();
        } catch (KeeperException.NoNodeException e) {
            left = 0;
        }
        eq("mutex/nodes-cleaned", 0, left);
    }

    static void semaphore(String base) throws Exception {
        CuratorFramework c1 = client();
        CuratorFramework c2 = client();
        InterProcessSemaphoreV2 s1 = new InterProcessSemaphoreV2(c1, base + "/sem", 2);
        InterProcessSemaphoreV2 s2 = new InterProcessSemaphoreV2(c2, base + "/sem", 2);
        Lease a = s1.acquire(5, TimeUnit.SECONDS);
        Lease b2 = s2.acquire(5, TimeUnit.SECONDS);
        check("semaphore/two-leases", a != null && b2 != null, "");
        check("semaphore/third-waits", s1.acquire(500, TimeUnit.MILLISECONDS) == null, "");
        s2.returnLease(b2);
        Lease c3 = s1.acquire(5, TimeUnit.SECONDS);
        check("semaphore/after-return", c3 != null, "");
        s1.returnLease(a);
        s1.returnLease(c3);
        eq("semaphore/participants", 0, s1.getParticipantNodes().size());
    }

    static void rwlock(String base) throws Exception {
        CuratorFramework c1 = client();
        CuratorFramework c2 = client();
        InterProcessReadWriteLock l1 = new InterProcessReadWriteLock(c1, base + "/rw");
        InterProcessReadWriteLock l2 = new InterProcessReadWriteLock(c2, base + "/rw");
        check("rwlock/read1", l1.readLock().acquire(5, TimeUnit.SECONDS), "");
        check("rwlock/read2-shared", l2.readLock().acquire(5, TimeUnit.SECONDS), "");
        check("rwlock/write-excluded", !l2.writeLock().acquire(500, TimeUnit.MILLISECONDS), "");
        l1.readLock().release();
        l2.readLock().release();
        check("rwlock/write", l2.writeLock().acquire(5, TimeUnit.SECONDS), "");
        check("rwlock/read-excluded", !l1.readLock().acquire(500, TimeUnit.MILLISECONDS), "");
        l2.writeLock().release();
    }

    static void latch(String base) throws Exception {
        List<LeaderLatch> latches = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            LeaderLatch l = new LeaderLatch(client(), base + "/latch", "p" + i);
            l.start();
            latches.add(l);
        }
        LeaderLatch leader = null;
        long deadline = System.currentTimeMillis() + 10000;
        while (leader == null && System.currentTimeMillis() < deadline) {
            for (LeaderLatch l : latches) {
                if (l.hasLeadership()) {
                    leader = l;
                }
            }
            Thread.sleep(50);
        }
        check("latch/one-leader", leader != null, leader == null ? "none" : leader.getId());
        int leaders = 0;
        for (LeaderLatch l : latches) {
            leaders += l.hasLeadership() ? 1 : 0;
        }
        eq("latch/exactly-one", 1, leaders);
        // The latches start asynchronously: one may lead before the last
        // one's node exists (on a busy machine, long before).
        int participants = leader.getParticipants().size();
        deadline = System.currentTimeMillis() + 10000;
        while (participants < 3 && System.currentTimeMillis() < deadline) {
            Thread.sleep(50);
            participants = leader.getParticipants().size();
        }
        eq("latch/participants", 3, participants);
        eq("latch/leader-agreed", leader.getId(), latches.get(0).getLeader().getId());
        leader.close();
        latches.remove(leader);
        LeaderLatch next = null;
        deadline = System.currentTimeMillis() + 10000;
        while (next == null && System.currentTimeMillis() < deadline) {
            for (LeaderLatch l : latches) {
                if (l.hasLeadership()) {
                    next = l;
                }
            }
            Thread.sleep(50);
        }
        check("latch/next-leader", next != null, next == null ? "none" : "a successor took over");
        for (LeaderLatch l : latches) {
            l.close();
        }
    }

    static void selector(String base) throws Exception {
        AtomicInteger turns = new AtomicInteger();
        AtomicInteger concurrent = new AtomicInteger();
        AtomicInteger overlap = new AtomicInteger();
        CountDownLatch four = new CountDownLatch(4);
        List<LeaderSelector> selectors = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            LeaderSelector sel = new LeaderSelector(client(), base + "/sel", new LeaderSelectorListenerAdapter() {
                public void takeLeadership(CuratorFramework client) throws Exception {
                    if (concurrent.incrementAndGet() > 1) {
                        overlap.incrementAndGet();
                    }
                    turns.incrementAndGet();
                    Thread.sleep(100);
                    concurrent.decrementAndGet();
                    four.countDown();
                }
            });
            sel.autoRequeue();
            sel.start();
            selectors.add(sel);
        }
        check("selector/turns", four.await(15, TimeUnit.SECONDS), "at least 4 leadership turns");
        eq("selector/no-overlap", 0, overlap.get());
        for (LeaderSelector sel : selectors) {
            sel.close();
        }
    }

    static void atomic(String base) throws Exception {
        DistributedAtomicLong a1 = new DistributedAtomicLong(client(), base + "/counter", new RetryNTimes(50, 10));
        DistributedAtomicLong a2 = new DistributedAtomicLong(client(), base + "/counter", new RetryNTimes(50, 10));
        ExecutorService ex = Executors.newFixedThreadPool(2);
        List<Future<Integer>> fs = new ArrayList<>();
        for (DistributedAtomicLong a : new DistributedAtomicLong[] {a1, a2}) {
            fs.add(ex.submit(() -> {
                int ok = 0;
                for (int i = 0; i < 50; i++) {
                    AtomicValue<Long> v = a.increment();
                    ok += v.succeeded() ? 1 : 0;
                }
                return ok;
            }));
        }
        int ok = fs.get(0).get(60, TimeUnit.SECONDS) + fs.get(1).get(60, TimeUnit.SECONDS);
        ex.shutdown();
        eq("atomic/increments", ok, (int) (long) a1.get().postValue());
        eq("atomic/all-succeeded", 100, ok);
        AtomicValue<Long> cas = a1.compareAndSet(100L, 7L);
        check("atomic/cas", cas.succeeded() && a2.get().postValue() == 7L, cas.postValue());
    }

    static void shared(String base) throws Exception {
        SharedCount s1 = new SharedCount(client(), base + "/count", 5);
        SharedCount s2 = new SharedCount(client(), base + "/count", 99);
        BlockingQueue<Integer> seen = new LinkedBlockingQueue<>();
        s2.addListener(new org.apache.curator.framework.recipes.shared.SharedCountListener() {
            public void countHasChanged(org.apache.curator.framework.recipes.shared.SharedCountReader r, int n) {
                seen.add(n);
            }

            public void stateChanged(CuratorFramework client, ConnectionState state) {
            }
        });
        s1.start();
        s2.start();
        eq("shared/seed", 5, s2.getCount());
        org.apache.curator.framework.recipes.shared.VersionedValue<Integer> stale = s2.getVersionedValue();
        check("shared/trySet", s1.trySetCount(s1.getVersionedValue(), 6), "");
        eq("shared/listener", (Integer) 6, seen.poll(5, TimeUnit.SECONDS));
        check("shared/stale-version", !s2.trySetCount(stale, 7), "");
        eq("shared/value", 6, s1.getCount());
        s1.close();
        s2.close();
    }

    static void barrier(String base) throws Exception {
        ExecutorService ex = Executors.newFixedThreadPool(3);
        List<Future<Boolean>> fs = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            CuratorFramework c = client();
            fs.add(ex.submit(() -> {
                DistributedDoubleBarrier b = new DistributedDoubleBarrier(c, base + "/b", 3);
                boolean in = b.enter(15, TimeUnit.SECONDS);
                boolean out = b.leave(15, TimeUnit.SECONDS);
                return in && out;
            }));
        }
        int passed = 0;
        for (Future<Boolean> f : fs) {
            passed += f.get(40, TimeUnit.SECONDS) ? 1 : 0;
        }
        ex.shutdown();
        eq("barrier/double", 3, passed);
    }

    /** PersistentNode: an ephemeral node Curator recreates when it is deleted. */
    static void persistent(CuratorFramework c, String base) throws Exception {
        PersistentNode node = new PersistentNode(client(), CreateMode.EPHEMERAL, false, base + "/me", b("here"));
        node.start();
        check("persistent/created", node.waitForInitialCreate(10, TimeUnit.SECONDS), rel(node.getActualPath()));
        c.delete().forPath(base + "/me");
        Stat st = null;
        long deadline = System.currentTimeMillis() + 10000;
        while (st == null && System.currentTimeMillis() < deadline) {
            Thread.sleep(50);
            st = c.checkExists().forPath(base + "/me");
        }
        check("persistent/recreated", st != null && st.getEphemeralOwner() != 0, st);
        node.close();
        eq("persistent/closed", null, c.checkExists().forPath(base + "/me"));
    }

    static void group(String base) throws Exception {
        GroupMember g1 = new GroupMember(client(), base + "/g", "one", b("1"));
        GroupMember g2 = new GroupMember(client(), base + "/g", "two", b("2"));
        g1.start();
        g2.start();
        String members = "";
        long deadline = System.currentTimeMillis() + 10000;
        while (System.currentTimeMillis() < deadline) {
            members = new java.util.TreeMap<>(g1.getCurrentMembers()).keySet().toString();
            if (members.equals("[one, two]")) {
                break;
            }
            Thread.sleep(50);
        }
        eq("group/members", "[one, two]", members);
        g2.close();
        deadline = System.currentTimeMillis() + 10000;
        while (System.currentTimeMillis() < deadline) {
            members = new java.util.TreeMap<>(g1.getCurrentMembers()).keySet().toString();
            if (members.equals("[one]")) {
                break;
            }
            Thread.sleep(50);
        }
        eq("group/after-leave", "[one]", members);
        g1.close();
    }

    static void queue(String base) throws Exception {
        BlockingQueue<String> consumed = new LinkedBlockingQueue<>();
        QueueSerializer<String> ser = new QueueSerializer<String>() {
            public byte[] serialize(String item) {
                return b(item);
            }

            public String deserialize(byte[] bytes) {
                return s(bytes);
            }
        };
        QueueConsumer<String> consumer = new QueueConsumer<String>() {
            public void consumeMessage(String message) {
                consumed.add(message);
            }

            public void stateChanged(CuratorFramework client, ConnectionState state) {
            }
        };
        DistributedQueue<String> producer = QueueBuilder.builder(client(), null, ser, base + "/q").buildQueue();
        producer.start();
        for (int i = 0; i < 5; i++) {
            producer.put("m" + i);
        }
        DistributedQueue<String> q = QueueBuilder.builder(client(), consumer, ser, base + "/q").buildQueue();
        q.start();
        List<String> got = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            String m = consumed.poll(10, TimeUnit.SECONDS);
            if (m == null) {
                break;
            }
            got.add(m);
        }
        eq("queue/fifo", "[m0, m1, m2, m3, m4]", got.toString());
        q.close();
        producer.close();
    }
}
