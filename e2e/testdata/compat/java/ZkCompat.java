// ZkCompat drives one ZooKeeper-compatible server with Apache ZooKeeper's
// own Java client and recipes, printing one line per check:
//
//	PASS name detail
//	FAIL name detail
//
// and exiting 1 if any check failed. Usage: java ZkCompat host:port /root
// (the root must not exist). The e2e test runs it against zkraft and, to
// validate the program itself, against Apache ZooKeeper.

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.zookeeper.AddWatchMode;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs.Ids;
import org.apache.zookeeper.ZooDefs.Perms;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.ClientInfo;
import org.apache.zookeeper.data.Id;
import org.apache.zookeeper.data.Stat;
import org.apache.zookeeper.recipes.leader.LeaderElectionSupport;
import org.apache.zookeeper.recipes.lock.LockListener;
import org.apache.zookeeper.recipes.lock.WriteLock;
import org.apache.zookeeper.recipes.queue.DistributedQueue;
import org.apache.zookeeper.server.auth.DigestAuthenticationProvider;

public class ZkCompat {
    static String addr;
    static String root;
    static int failures;
    static int checks;
    static final List<ZooKeeper> handles = Collections.synchronizedList(new ArrayList<>());

    public static void main(String[] args) throws Exception {
        addr = args[0];
        root = args[1];
        String only = args.length > 2 ? args[2] : "";
        ZooKeeper zk = connect(10000);
        zk.create(root, null, Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        String[] sections = {"sync", "modes", "async", "multi", "watches", "persistent", "acl", "session", "lock", "election", "queue"};
        for (String s : sections) {
            if (!only.isEmpty() && !only.equals(s)) {
                continue;
            }
            String base = root + "/" + s;
            zk.create(base, null, Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
            long start = System.nanoTime();
            try {
                switch (s) {
                    case "sync": syncAPI(zk, base); break;
                    case "modes": createModes(zk, base); break;
                    case "async": asyncAPI(zk, base); break;
                    case "multi": multi(zk, base); break;
                    case "watches": watches(zk, base); break;
                    case "persistent": persistentWatches(zk, base); break;
                    case "acl": acl(zk, base); break;
                    case "session": sessions(zk, base); break;
                    case "lock": lockRecipe(base); break;
                    case "election": electionRecipe(base); break;
                    case "queue": queueRecipe(base); break;
                    default: break;
                }
            } catch (Throwable e) {
                check(s + "/exception", false, e.toString());
                e.printStackTrace(System.out);
            }
            System.out.printf("INFO section %s took %d ms%n", s, (System.nanoTime() - start) / 1000000);
        }
        for (ZooKeeper h : new ArrayList<>(handles)) {
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

    /** A watcher that queues every event it sees. */
    static class Recorder implements Watcher {
        final LinkedBlockingQueue<WatchedEvent> q = new LinkedBlockingQueue<>();

        public void process(WatchedEvent e) {
            q.add(e);
        }

        /** Waits for n events, then for stragglers for a short while. */
        List<String> take(int n) throws InterruptedException {
            List<String> out = new ArrayList<>();
            long deadline = System.currentTimeMillis() + 5000;
            while (out.size() < n) {
                WatchedEvent e = q.poll(Math.max(1, deadline - System.currentTimeMillis()), TimeUnit.MILLISECONDS);
                if (e == null) {
                    break;
                }
                out.add(fmt(e));
            }
            WatchedEvent extra;
            while ((extra = q.poll(200, TimeUnit.MILLISECONDS)) != null) {
                out.add(fmt(extra));
            }
            return out;
        }

        WatchedEvent next(long ms) throws InterruptedException {
            return q.poll(ms, TimeUnit.MILLISECONDS);
        }
    }

    static String fmt(WatchedEvent e) {
        String p = e.getPath();
        if (p != null && p.startsWith(root)) {
            p = "~" + p.substring(root.length());
        }
        return e.getType() + (p == null ? "" : " " + p);
    }

    /** Recorder that ignores session (None) events. */
    static class NodeRecorder extends Recorder {
        public void process(WatchedEvent e) {
            if (e.getType() != Watcher.Event.EventType.None) {
                q.add(e);
            }
        }
    }

    static ZooKeeper connect(int timeoutMs) throws Exception {
        return connect(timeoutMs, null, 0, null);
    }

    static ZooKeeper connect(int timeoutMs, Watcher w, long sid, byte[] pw) throws Exception {
        CountDownLatch up = new CountDownLatch(1);
        Watcher all = e -> {
            if (e.getState() == Watcher.Event.KeeperState.SyncConnected && e.getType() == Watcher.Event.EventType.None) {
                up.countDown();
            }
            if (w != null) {
                w.process(e);
            }
        };
        ZooKeeper zk = pw == null ? new ZooKeeper(addr, timeoutMs, all) : new ZooKeeper(addr, timeoutMs, all, sid, pw);
        handles.add(zk);
        if (!up.await(15, TimeUnit.SECONDS)) {
            throw new IllegalStateException("no SyncConnected within 15s");
        }
        return zk;
    }

    static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static String s(byte[] b) {
        return b == null ? "null" : new String(b, StandardCharsets.UTF_8);
    }

    static String code(Throwable e) {
        return e instanceof KeeperException ? ((KeeperException) e).code().toString() : e.toString();
    }

    interface Call {
        void run() throws Exception;
    }

    /** Checks that call fails with the KeeperException code want. */
    static void fails(String name, KeeperException.Code want, Call call) {
        try {
            call.run();
            check(name, false, "want " + want + ", call succeeded");
        } catch (Exception e) {
            eq(name, want.toString(), code(e));
        }
    }

    static boolean waitGone(ZooKeeper zk, String path, long ms) throws Exception {
        long deadline = System.currentTimeMillis() + ms;
        while (System.currentTimeMillis() < deadline) {
            if (zk.exists(path, false) == null) {
                return true;
            }
            Thread.sleep(100);
        }
        return false;
    }

    // ---- sections

    static void syncAPI(ZooKeeper zk, String base) throws Exception {
        String p = base + "/n";
        eq("sync/create", p, zk.create(p, b("v0"), Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT));
        Stat st = new Stat();
        eq("sync/getData", "v0", s(zk.getData(p, false, st)));
        eq("sync/getData.version", 0, st.getVersion());
        eq("sync/getData.dataLength", 2, st.getDataLength());
        check("sync/getData.czxid=mzxid=pzxid", st.getCzxid() == st.getMzxid() && st.getMzxid() == st.getPzxid(), st);
        check("sync/getData.ctime=mtime", st.getCtime() == st.getMtime() && st.getCtime() > 0, st.getCtime());
        Stat st2 = zk.setData(p, b("v1"), 0);
        eq("sync/setData.version", 1, st2.getVersion());
        check("sync/setData.mzxid", st2.getMzxid() > st.getMzxid() && st2.getCzxid() == st.getCzxid(), st2);
        fails("sync/setData.badVersion", KeeperException.Code.BADVERSION, () -> zk.setData(p, b("x"), 0));
        fails("sync/create.exists", KeeperException.Code.NODEEXISTS, () -> zk.create(p, null, Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT));
        fails("sync/create.noParent", KeeperException.Code.NONODE, () -> zk.create(base + "/x/y", null, Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT));
        fails("sync/getData.noNode", KeeperException.Code.NONODE, () -> zk.getData(base + "/missing", false, null));
        eq("sync/exists.missing", null, zk.exists(base + "/missing", false));
        zk.create(p + "/c1", null, Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        zk.create(p + "/c2", b(""), Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        eq("sync/getData.null", "null", s(zk.getData(p + "/c1", false, null)));
        eq("sync/getData.empty", "", s(zk.getData(p + "/c2", false, null)));
        Stat ps = new Stat();
        List<String> kids = new ArrayList<>(zk.getChildren(p, false, ps));
        Collections.sort(kids);
        eq("sync/getChildren", "[c1, c2]", kids.toString());
        eq("sync/getChildren.numChildren", 2, ps.getNumChildren());
        eq("sync/getChildren.cversion", 2, ps.getCversion());
        fails("sync/delete.notEmpty", KeeperException.Code.NOTEMPTY, () -> zk.delete(p, -1));
        fails("sync/delete.badVersion", KeeperException.Code.BADVERSION, () -> zk.delete(p + "/c1", 5));
        zk.delete(p + "/c1", 0);
        zk.delete(p + "/c2", -1);
        Stat after = zk.exists(p, false);
        eq("sync/cversion.afterDeletes", 4, after.getCversion());
        eq("sync/numChildren.afterDeletes", 0, after.getNumChildren());
        eq("sync/getAllChildrenNumber", 0, zk.getAllChildrenNumber(p));
        zk.create(p + "/a", null, Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        zk.create(p + "/a/b", null, Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        eq("sync/getAllChildrenNumber.nested", 2, zk.getAllChildrenNumber(p));
        Stat c2 = new Stat();
        zk.create(p + "/s2", b("abc"), Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT, c2);
        check("sync/create2.stat", c2.getDataLength() == 3 && c2.getVersion() == 0 && c2.getCzxid() > 0, c2);
        zk.sync(p, (rc, path, ctx) -> {}, null);
        fails("sync/delete.root", KeeperException.Code.BADARGUMENTS, () -> zk.delete("/zookeeper", -1));
        fails("sync/badPath", KeeperException.Code.BADARGUMENTS, () -> {
            try {
                zk.create(base + "/a/../b", null, Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
            } catch (IllegalArgumentException e) {
                throw new KeeperException.BadArgumentsException("client-side: " + e.getMessage());
            }
        });
    }

    static void createModes(ZooKeeper zk, String base) throws Exception {
        eq("modes/PERSISTENT", base + "/p", zk.create(base + "/p", null, Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT));
        String ps = zk.create(base + "/ps-", null, Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT_SEQUENTIAL);
        eq("modes/PERSISTENT_SEQUENTIAL", base + "/ps-0000000001", ps);
        String e = zk.create(base + "/e", null, Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL);
        eq("modes/EPHEMERAL.owner", zk.getSessionId(), zk.exists(e, false).getEphemeralOwner());
        fails("modes/EPHEMERAL.noChildren", KeeperException.Code.NOCHILDRENFOREPHEMERALS,
            () -> zk.create(e + "/c", null, Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT));
        String es = zk.create(base + "/es-", null, Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL_SEQUENTIAL);
        eq("modes/EPHEMERAL_SEQUENTIAL", base + "/es-0000000003", es);
        eq("modes/EPHEMERAL_SEQUENTIAL.owner", zk.getSessionId(), zk.exists(es, false).getEphemeralOwner());
        List<String> eph = new ArrayList<>(zk.getEphemerals(base));
        Collections.sort(eph);
        eq("modes/getEphemerals", Arrays.asList(e, es).toString(), eph.toString());

        // Containers and TTL nodes are created together so one wait covers their reaping.
        String c = zk.create(base + "/c", null, Ids.OPEN_ACL_UNSAFE, CreateMode.CONTAINER);
        eq("modes/CONTAINER.owner", 0L, zk.exists(c, false).getEphemeralOwner());
        zk.create(c + "/k", null, Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        String empty = zk.create(base + "/c0", null, Ids.OPEN_ACL_UNSAFE, CreateMode.CONTAINER);
        Stat ttlStat = new Stat();
        String t = zk.create(base + "/t", b("ttl"), Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT_WITH_TTL, ttlStat, 500);
        eq("modes/PERSISTENT_WITH_TTL", base + "/t", t);
        eq("modes/PERSISTENT_WITH_TTL.owner", 0L, zk.exists(t, false).getEphemeralOwner());
        eq("modes/PERSISTENT_WITH_TTL.stat", 3, ttlStat.getDataLength());
        String ts = zk.create(base + "/ts-", null, Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT_SEQUENTIAL_WITH_TTL, new Stat(), 500);
        check("modes/PERSISTENT_SEQUENTIAL_WITH_TTL", ts.matches(".*/ts-\\d{10}"), ts);
        fails("modes/TTL.zero", KeeperException.Code.BADARGUMENTS, () -> {
            try {
                zk.create(base + "/t0", null, Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT_WITH_TTL, new Stat(), 0);
            } catch (IllegalArgumentException ex) {
                throw new KeeperException.BadArgumentsException("client-side");
            }
        });
        Thread.sleep(1500);
        check("modes/CONTAINER.keptWithChild", zk.exists(c, false) != null, "");
        zk.delete(c + "/k", -1);
        check("modes/CONTAINER.reaped", waitGone(zk, c, 10000), "");
        check("modes/PERSISTENT_WITH_TTL.reaped", waitGone(zk, t, 10000), "");
        check("modes/PERSISTENT_SEQUENTIAL_WITH_TTL.reaped", waitGone(zk, ts, 10000), "");
        check("modes/CONTAINER.neverHadChildren.kept", zk.exists(empty, false) != null, "");
    }

    static void asyncAPI(ZooKeeper zk, String base) throws Exception {
        final int n = 5000;
        AtomicInteger ok = new AtomicInteger();
        AtomicInteger inOrder = new AtomicInteger();
        AtomicInteger last = new AtomicInteger(-1);
        CountDownLatch created = new CountDownLatch(n);
        long t0 = System.nanoTime();
        for (int i = 0; i < n; i++) {
            final int idx = i;
            zk.create(base + "/n" + i, b("d" + i), Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT, (rc, path, ctx, name) -> {
                if (rc == 0 && name.equals(base + "/n" + idx)) {
                    ok.incrementAndGet();
                }
                if (last.getAndSet(idx) == idx - 1) {
                    inOrder.incrementAndGet();
                }
                created.countDown();
            }, null);
        }
        check("async/create.callbacks", created.await(60, TimeUnit.SECONDS), created.getCount() + " missing");
        eq("async/create.ok", n, ok.get());
        eq("async/create.inOrder", n, inOrder.get());
        System.out.printf("INFO %d async creates in %d ms%n", n, (System.nanoTime() - t0) / 1000000);

        AtomicInteger dataOK = new AtomicInteger();
        CountDownLatch read = new CountDownLatch(n);
        for (int i = 0; i < n; i++) {
            final int idx = i;
            zk.getData(base + "/n" + i, false, (rc, path, ctx, data, stat) -> {
                if (rc == 0 && s(data).equals("d" + idx) && stat.getVersion() == 0) {
                    dataOK.incrementAndGet();
                }
                read.countDown();
            }, null);
        }
        check("async/getData.callbacks", read.await(60, TimeUnit.SECONDS), read.getCount() + " missing");
        eq("async/getData.ok", n, dataOK.get());

        // Mixed reads and writes in flight together keep their order.
        AtomicInteger mixedOK = new AtomicInteger();
        CountDownLatch mixed = new CountDownLatch(3 * n / 5);
        for (int i = 0; i < n / 5; i++) {
            final String p = base + "/n" + i;
            zk.setData(p, b("x"), 0, (rc, path, ctx, stat) -> {
                if (rc == 0 && stat.getVersion() == 1) {
                    mixedOK.incrementAndGet();
                }
                mixed.countDown();
            }, null);
            zk.exists(p, false, (rc, path, ctx, stat) -> {
                if (rc == 0 && stat.getVersion() == 1) {
                    mixedOK.incrementAndGet();
                }
                mixed.countDown();
            }, null);
            zk.setData(p, b("y"), 0, (rc, path, ctx, stat) -> {
                if (rc == KeeperException.Code.BADVERSION.intValue()) {
                    mixedOK.incrementAndGet();
                }
                mixed.countDown();
            }, null);
        }
        check("async/mixed.callbacks", mixed.await(60, TimeUnit.SECONDS), mixed.getCount() + " missing");
        eq("async/mixed.ok", 3 * n / 5, mixedOK.get());

        Stat st = new Stat();
        eq("async/getChildren.count", n, zk.getChildren(base, false, st).size());
        eq("async/getChildren.numChildren", n, st.getNumChildren());
        CountDownLatch kids = new CountDownLatch(1);
        AtomicInteger kidsN = new AtomicInteger();
        zk.getChildren(base, false, (rc, path, ctx, children, stat) -> {
            kidsN.set(children.size());
            kids.countDown();
        }, null);
        kids.await(10, TimeUnit.SECONDS);
        eq("async/getChildren2.callback", n, kidsN.get());

        AtomicInteger delOK = new AtomicInteger();
        CountDownLatch deleted = new CountDownLatch(n);
        for (int i = 0; i < n; i++) {
            zk.delete(base + "/n" + i, -1, (rc, path, ctx) -> {
                if (rc == 0) {
                    delOK.incrementAndGet();
                }
                deleted.countDown();
            }, null);
        }
        check("async/delete.callbacks", deleted.await(60, TimeUnit.SECONDS), deleted.getCount() + " missing");
        eq("async/delete.ok", n, delOK.get());
        eq("async/empty", 0, zk.exists(base, false).getNumChildren());

        CountDownLatch missing = new CountDownLatch(1);
        AtomicInteger rcMissing = new AtomicInteger();
        zk.getData(base + "/nope", false, (rc, path, ctx, data, stat) -> {
            rcMissing.set(rc);
            missing.countDown();
        }, null);
        missing.await(10, TimeUnit.SECONDS);
        eq("async/getData.noNode", KeeperException.Code.NONODE.intValue(), rcMissing.get());
    }

    static void multi(ZooKeeper zk, String base) throws Exception {
        String a = base + "/a";
        zk.create(a, b("0"), Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        List<OpResult> res = zk.multi(Arrays.asList(
            Op.check(a, 0),
            Op.create(base + "/b", b("b"), Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT),
            Op.create(base + "/s-", null, Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT_SEQUENTIAL),
            Op.setData(a, b("1"), 0),
            Op.delete(base + "/b", 0)));
        eq("multi/ok.count", 5, res.size());
        check("multi/ok.check", res.get(0) instanceof OpResult.CheckResult, res.get(0));
        eq("multi/ok.create", base + "/b", ((OpResult.CreateResult) res.get(1)).getPath());
        eq("multi/ok.sequential", base + "/s-0000000002", ((OpResult.CreateResult) res.get(2)).getPath());
        Stat st = ((OpResult.SetDataResult) res.get(3)).getStat();
        eq("multi/ok.setData.version", 1, st.getVersion());
        check("multi/ok.delete", res.get(4) instanceof OpResult.DeleteResult, res.get(4));
        eq("multi/ok.applied", "1", s(zk.getData(a, false, null)));

        try {
            zk.multi(Arrays.asList(
                Op.create(base + "/c", null, Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT),
                Op.check(a, 0),
                Op.setData(a, b("2"), -1)));
            check("multi/fail.throws", false, "succeeded");
        } catch (KeeperException e) {
            eq("multi/fail.code", "BADVERSION", e.code().toString());
            List<OpResult> r = e.getResults();
            List<Integer> codes = new ArrayList<>();
            for (OpResult o : r) {
                codes.add(o instanceof OpResult.ErrorResult ? ((OpResult.ErrorResult) o).getErr() : 999);
            }
            eq("multi/fail.errorResults", Arrays.asList(0, -103, -2).toString(), codes.toString());
        }
        eq("multi/fail.notApplied.create", null, zk.exists(base + "/c", false));
        eq("multi/fail.notApplied.data", "1", s(zk.getData(a, false, null)));
        String seq = zk.create(base + "/s-", null, Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT_SEQUENTIAL);
        eq("multi/fail.cversionRolledBack", base + "/s-0000000003", seq);

        // Transaction builder and the async multi.
        List<OpResult> tr = zk.transaction().check(a, 1).setData(a, b("3"), 1).commit();
        eq("multi/transaction", 2, tr.size());
        CountDownLatch done = new CountDownLatch(1);
        AtomicInteger rc0 = new AtomicInteger(1);
        List<OpResult> asyncRes = new ArrayList<>();
        zk.multi(Arrays.asList(Op.check(a, 7), Op.delete(a, -1)), (rc, path, ctx, opResults) -> {
            rc0.set(rc);
            if (opResults != null) {
                asyncRes.addAll(opResults);
            }
            done.countDown();
        }, null);
        done.await(10, TimeUnit.SECONDS);
        eq("multi/async.rc", KeeperException.Code.BADVERSION.intValue(), rc0.get());
        List<Integer> codes = new ArrayList<>();
        for (OpResult o : asyncRes) {
            codes.add(o instanceof OpResult.ErrorResult ? ((OpResult.ErrorResult) o).getErr() : 999);
        }
        eq("multi/async.errorResults", Arrays.asList(-103, -2).toString(), codes.toString());
        try {
            zk.multi(Arrays.asList(Op.delete(base + "/none", -1), Op.create(a, null, Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT)));
            check("multi/fail.first", false, "succeeded");
        } catch (KeeperException e) {
            eq("multi/fail.first.code", "NONODE", e.code().toString());
            List<OpResult> r = e.getResults();
            eq("multi/fail.first.results", 2, r == null ? -1 : r.size());
        }
        List<OpResult> rd = zk.multi(Arrays.asList(Op.getData(a), Op.getChildren(base), Op.getData(base + "/none")));
        eq("multi/read.count", 3, rd.size());
        eq("multi/read.data", "3", s(((OpResult.GetDataResult) rd.get(0)).getData()));
        check("multi/read.error", rd.get(2) instanceof OpResult.ErrorResult
            && ((OpResult.ErrorResult) rd.get(2)).getErr() == -101, rd.get(2));
    }

    static void watches(ZooKeeper zk, String base) throws Exception {
        String p = base + "/w";
        NodeRecorder r = new NodeRecorder();
        eq("watches/exists.missing", null, zk.exists(p, r));
        zk.create(p, null, Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        eq("watches/exists.NodeCreated", "[NodeCreated ~/watches/w]", r.take(1).toString());

        zk.getData(p, r, null);
        zk.setData(p, b("1"), -1);
        zk.setData(p, b("2"), -1);
        eq("watches/getData.NodeDataChanged.once", "[NodeDataChanged ~/watches/w]", r.take(1).toString());

        zk.getChildren(p, r);
        zk.create(p + "/c", null, Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        eq("watches/getChildren.NodeChildrenChanged", "[NodeChildrenChanged ~/watches/w]", r.take(1).toString());

        // One watcher registered by exists, getData and getChildren gets a single NodeDeleted.
        zk.exists(p + "/c", r);
        zk.getData(p + "/c", r, null);
        zk.getChildren(p + "/c", r);
        zk.getChildren(p, r);
        zk.delete(p + "/c", -1);
        eq("watches/delete.events", "[NodeDeleted ~/watches/w/c, NodeChildrenChanged ~/watches/w]", sortedTake(r, 2));

        // Distinct watchers are each notified.
        NodeRecorder r2 = new NodeRecorder();
        zk.exists(p, r);
        zk.exists(p, r2);
        zk.setData(p, b("3"), -1);
        eq("watches/twoWatchers.1", "[NodeDataChanged ~/watches/w]", r.take(1).toString());
        eq("watches/twoWatchers.2", "[NodeDataChanged ~/watches/w]", r2.take(1).toString());

        // Default watcher (watch=true).
        NodeRecorder def = new NodeRecorder();
        ZooKeeper zk2 = connect(10000, def, 0, null);
        zk2.getData(p, true, null);
        zk.setData(p, b("4"), -1);
        eq("watches/defaultWatcher", "[NodeDataChanged ~/watches/w]", def.take(1).toString());

        // Watch from another session fires on this session's write; setACL fires nothing.
        zk2.exists(p, true);
        zk.setACL(p, Ids.OPEN_ACL_UNSAFE, -1);
        eq("watches/setACL.noEvent", "[]", def.take(0).toString());
        zk.delete(p, -1);
        eq("watches/otherSession.NodeDeleted", "[NodeDeleted ~/watches/w]", def.take(1).toString());

        // removeWatches.
        zk.create(p, null, Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        Recorder rr = new Recorder();
        zk.getData(p, rr, null);
        zk.removeWatches(p, rr, Watcher.WatcherType.Data, false);
        zk.setData(p, b("5"), -1);
        eq("watches/removeWatches", "[DataWatchRemoved ~/watches/w]", rr.take(1).toString());
        fails("watches/removeWatches.none", KeeperException.Code.NOWATCHER,
            () -> zk.removeWatches(p, rr, Watcher.WatcherType.Children, false));
    }

    static String sortedTake(Recorder r, int n) throws InterruptedException {
        List<String> got = r.take(n);
        Collections.sort(got, Collections.reverseOrder());
        return got.toString();
    }

    static void persistentWatches(ZooKeeper zk, String base) throws Exception {
        String p = base + "/p";
        NodeRecorder pr = new NodeRecorder();
        zk.addWatch(p, pr, AddWatchMode.PERSISTENT);
        zk.create(p, null, Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        zk.setData(p, b("1"), -1);
        zk.create(p + "/c", null, Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        zk.setData(p + "/c", b("1"), -1);
        zk.delete(p + "/c", -1);
        zk.setData(p, b("2"), -1);
        zk.delete(p, -1);
        zk.create(p, null, Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        eq("persistent/PERSISTENT.sequence", Arrays.asList(
            "NodeCreated ~/persistent/p", "NodeDataChanged ~/persistent/p", "NodeChildrenChanged ~/persistent/p",
            "NodeChildrenChanged ~/persistent/p", "NodeDataChanged ~/persistent/p", "NodeDeleted ~/persistent/p",
            "NodeCreated ~/persistent/p").toString(), pr.take(7).toString());

        String q = base + "/r";
        NodeRecorder rr = new NodeRecorder();
        zk.addWatch(q, rr, AddWatchMode.PERSISTENT_RECURSIVE);
        zk.create(q, null, Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        zk.create(q + "/a", null, Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        zk.create(q + "/a/b", null, Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        zk.setData(q + "/a/b", b("x"), -1);
        zk.create(q + "x", null, Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT); // sibling prefix: not below q
        zk.multi(Arrays.asList(Op.delete(q + "/a/b", -1), Op.delete(q + "/a", -1)));
        zk.setData(q, b("y"), -1);
        eq("persistent/RECURSIVE.sequence", Arrays.asList(
            "NodeCreated ~/persistent/r", "NodeCreated ~/persistent/r/a", "NodeCreated ~/persistent/r/a/b",
            "NodeDataChanged ~/persistent/r/a/b", "NodeDeleted ~/persistent/r/a/b", "NodeDeleted ~/persistent/r/a",
            "NodeDataChanged ~/persistent/r").toString(), rr.take(7).toString());

        // A one-shot watch and a persistent watch on the same path both fire.
        NodeRecorder once = new NodeRecorder();
        zk.getData(p, once, null);
        zk.setData(p, b("3"), -1);
        eq("persistent/withOneShot.oneShot", "[NodeDataChanged ~/persistent/p]", once.take(1).toString());
        eq("persistent/withOneShot.persistent", "[NodeDataChanged ~/persistent/p]", pr.take(1).toString());

        // The default watcher through addWatch(path, mode).
        NodeRecorder def = new NodeRecorder();
        ZooKeeper zk2 = connect(10000, def, 0, null);
        zk2.addWatch(q, AddWatchMode.PERSISTENT_RECURSIVE);
        zk.create(q + "/z", null, Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL);
        eq("persistent/defaultWatcher", "[NodeCreated ~/persistent/r/z]", def.take(1).toString());
        rr.take(1);

        // Removing a persistent watch.
        zk.removeWatches(p, pr, Watcher.WatcherType.Any, false);
        zk.setData(p, b("4"), -1);
        eq("persistent/removed", "[PersistentWatchRemoved ~/persistent/p]", pr.take(1).toString());
    }

    static void acl(ZooKeeper zk, String base) throws Exception {
        ZooKeeper alice = connect(10000);
        alice.addAuthInfo("digest", b("alice:secret"));
        ZooKeeper bob = connect(10000);
        bob.addAuthInfo("digest", b("bob:pw"));
        String aliceId = DigestAuthenticationProvider.generateDigest("alice:secret");
        List<ACL> acl = Arrays.asList(new ACL(Perms.ALL, new Id("digest", aliceId)), new ACL(Perms.READ, Ids.ANYONE_ID_UNSAFE));
        String p = base + "/secret";
        alice.create(p, b("s"), acl, CreateMode.PERSISTENT);
        eq("acl/read.world", "s", s(zk.getData(p, false, null)));
        fails("acl/write.anonymous", KeeperException.Code.NOAUTH, () -> zk.setData(p, b("x"), -1));
        fails("acl/write.bob", KeeperException.Code.NOAUTH, () -> bob.setData(p, b("x"), -1));
        fails("acl/create.child.anonymous", KeeperException.Code.NOAUTH,
            () -> zk.create(p + "/c", null, Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT));
        eq("acl/write.alice", 1, alice.setData(p, b("x"), -1).getVersion());
        Stat st = new Stat();
        List<ACL> got = zk.getACL(p, st);
        // Without ADMIN the digest ids come back masked (ZOOKEEPER-1392).
        eq("acl/getACL.masked", "[31 digest:alice:x, 1 world:anyone]", acls(got));
        eq("acl/getACL.admin", acls(acl), acls(alice.getACL(p, null)));
        eq("acl/getACL.aversion", 0, st.getAversion());

        String c = base + "/creator";
        alice.create(c, null, Ids.CREATOR_ALL_ACL, CreateMode.PERSISTENT);
        eq("acl/CREATOR_ALL_ACL", "[31 digest:" + aliceId + "]", acls(alice.getACL(c, null)));
        fails("acl/CREATOR_ALL_ACL.noAuth", KeeperException.Code.INVALIDACL,
            () -> zk.create(base + "/x", null, Ids.CREATOR_ALL_ACL, CreateMode.PERSISTENT));
        fails("acl/read.denied", KeeperException.Code.NOAUTH, () -> bob.getData(c, false, null));
        fails("acl/getChildren.denied", KeeperException.Code.NOAUTH, () -> bob.getChildren(c, false));
        fails("acl/setACL.denied", KeeperException.Code.NOAUTH, () -> bob.setACL(c, Ids.OPEN_ACL_UNSAFE, -1));
        fails("acl/setACL.badVersion", KeeperException.Code.BADVERSION, () -> alice.setACL(c, Ids.OPEN_ACL_UNSAFE, 3));
        eq("acl/setACL.aversion", 1, alice.setACL(c, Ids.READ_ACL_UNSAFE, 0).getAversion());
        fails("acl/readOnly.write", KeeperException.Code.NOAUTH, () -> alice.setData(c, b("x"), -1));
        fails("acl/emptyACL", KeeperException.Code.INVALIDACL,
            () -> zk.create(base + "/e", null, new ArrayList<>(), CreateMode.PERSISTENT));

        ZooKeeper sup = connect(10000);
        sup.addAuthInfo("digest", b("super:superpw"));
        eq("acl/super.write", 1, sup.setData(c, b("su"), -1).getVersion());

        List<String> who = new ArrayList<>();
        for (ClientInfo ci : alice.whoAmI()) {
            if (!ci.getAuthScheme().equals("ip")) {
                who.add(ci.getAuthScheme() + ":" + ci.getUser());
            }
        }
        eq("acl/whoAmI", "[digest:alice]", who.toString());

        // A failed auth closes the session: AuthFailed event.
        Recorder ar = new Recorder();
        ZooKeeper bad = connect(10000, ar, 0, null);
        bad.addAuthInfo("nosuchscheme", b("x"));
        boolean authFailed = false;
        for (int i = 0; i < 20 && !authFailed; i++) {
            WatchedEvent e = ar.next(500);
            authFailed = e != null && e.getState() == Watcher.Event.KeeperState.AuthFailed;
        }
        check("acl/authFailed", authFailed, "");
        bad.close();
    }

    static String acls(List<ACL> l) {
        List<String> out = new ArrayList<>();
        for (ACL a : l) {
            out.add(a.getPerms() + " " + a.getId().getScheme() + ":" + a.getId().getId());
        }
        return out.toString();
    }

    static void sessions(ZooKeeper zk, String base) throws Exception {
        // Expiry: a second handle on the victim's session closes it.
        Recorder vr = new Recorder();
        ZooKeeper victim = connect(4000, vr, 0, null);
        String e = victim.create(base + "/victim", null, Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL);
        NodeRecorder w = new NodeRecorder();
        zk.exists(e, w);
        ZooKeeper killer = connect(4000, null, victim.getSessionId(), victim.getSessionPasswd());
        eq("session/resume.sameId", victim.getSessionId(), killer.getSessionId());
        eq("session/resume.owner", killer.getSessionId(), killer.exists(e, false).getEphemeralOwner());
        killer.close();
        eq("session/expire.ephemeralDeleted", "[NodeDeleted ~/session/victim]", w.take(1).toString());
        boolean expired = false;
        long deadline = System.currentTimeMillis() + 20000;
        while (!expired && System.currentTimeMillis() < deadline) {
            WatchedEvent ev = vr.next(500);
            expired = ev != null && ev.getState() == Watcher.Event.KeeperState.Expired;
        }
        check("session/expire.event", expired, "");
        fails("session/expire.ops", KeeperException.Code.SESSIONEXPIRED, () -> victim.exists(base, false));
        victim.close();

        // Resumption keeps ephemerals and watches; a wrong password is refused.
        ZooKeeper a = connect(6000);
        String ae = a.create(base + "/keep", null, Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL);
        byte[] wrong = a.getSessionPasswd().clone();
        wrong[0] ^= 1;
        Recorder br = new Recorder();
        ZooKeeper badPw = new ZooKeeper(addr, 6000, br, a.getSessionId(), wrong);
        handles.add(badPw);
        boolean refused = false;
        deadline = System.currentTimeMillis() + 15000;
        while (!refused && System.currentTimeMillis() < deadline) {
            WatchedEvent ev = br.next(500);
            refused = ev != null && ev.getState() == Watcher.Event.KeeperState.Expired;
        }
        check("session/wrongPassword.expired", refused, "");
        badPw.close();
        check("session/wrongPassword.sessionAlive", zk.exists(ae, false) != null, "");
        ZooKeeper b2 = connect(6000, null, a.getSessionId(), a.getSessionPasswd());
        check("session/resume.ephemeralKept", b2.exists(ae, false) != null, "");
        eq("session/resume.getEphemerals", "[" + ae + "]", b2.getEphemerals(base).toString());
        b2.close();
        check("session/close.ephemeralGone", zk.exists(ae, false) == null, "");
        a.close();

        // Expiry by timeout: a handle whose connection we cannot stop is
        // simulated by closing the session of one with a short timeout
        // through its own close(); ephemerals vanish at once.
        ZooKeeper c = connect(4000);
        String ce = c.create(base + "/closing", null, Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL_SEQUENTIAL);
        c.close();
        eq("session/close.ephemeralSequentialGone", null, zk.exists(ce, false));
    }

    static void lockRecipe(String base) throws Exception {
        ZooKeeper z1 = connect(10000);
        ZooKeeper z2 = connect(10000);
        String dir = base + "/locks";
        CountDownLatch acquired2 = new CountDownLatch(1);
        WriteLock l1 = new WriteLock(z1, dir, Ids.OPEN_ACL_UNSAFE);
        WriteLock l2 = new WriteLock(z2, dir, Ids.OPEN_ACL_UNSAFE, new LockListener() {
            public void lockAcquired() {
                acquired2.countDown();
            }

            public void lockReleased() {
            }
        });
        check("lock/first.acquired", l1.lock() && l1.isOwner(), l1.getId());
        check("lock/second.waits", !l2.lock() && !l2.isOwner(), l2.getId());
        eq("lock/contenders", 2, z1.getChildren(dir, false).size());
        l1.unlock();
        check("lock/second.acquiredAfterUnlock", acquired2.await(10, TimeUnit.SECONDS) && l2.isOwner(), l2.getId());
        l2.unlock();
        eq("lock/cleanedUp", 0, z1.getChildren(dir, false).size());
        l1.close();
        l2.close();
    }

    static void electionRecipe(String base) throws Exception {
        String dir = base + "/election";
        ZooKeeper z0 = connect(10000);
        z0.create(dir, null, Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        List<LeaderElectionSupport> cands = new ArrayList<>();
        List<CountDownLatch> elected = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            LeaderElectionSupport les = new LeaderElectionSupport();
            les.setZooKeeper(connect(10000));
            les.setRootNodeName(dir);
            les.setHostName("host" + i);
            CountDownLatch l = new CountDownLatch(1);
            les.addListener(ev -> {
                if (ev == LeaderElectionSupport.EventType.ELECTED_COMPLETE) {
                    l.countDown();
                }
            });
            cands.add(les);
            elected.add(l);
            les.start();
        }
        check("election/firstElected", elected.get(0).await(10, TimeUnit.SECONDS), "");
        eq("election/leader", "host0", cands.get(1).getLeaderHostName());
        check("election/othersNotElected", elected.get(1).getCount() == 1 && elected.get(2).getCount() == 1, "");
        cands.get(0).stop();
        check("election/secondElected", elected.get(1).await(10, TimeUnit.SECONDS), "");
        eq("election/newLeader", "host1", cands.get(2).getLeaderHostName());
        cands.get(1).stop();
        check("election/thirdElected", elected.get(2).await(10, TimeUnit.SECONDS), "");
        cands.get(2).stop();
        eq("election/cleanedUp", 0, z0.getChildren(dir, false).size());
    }

    static void queueRecipe(String base) throws Exception {
        String dir = base + "/queue";
        ZooKeeper z1 = connect(10000);
        ZooKeeper z2 = connect(10000);
        DistributedQueue producer = new DistributedQueue(z1, dir, Ids.OPEN_ACL_UNSAFE);
        DistributedQueue consumer = new DistributedQueue(z2, dir, Ids.OPEN_ACL_UNSAFE);
        eq("queue/poll.empty", null, consumer.poll());
        for (int i = 0; i < 12; i++) {
            producer.offer(b("m" + i));
        }
        eq("queue/peek", "m0", s(consumer.peek()));
        eq("queue/element", "m0", s(consumer.element()));
        StringBuilder got = new StringBuilder();
        for (int i = 0; i < 11; i++) {
            got.append(s(consumer.remove())).append(i < 10 ? "," : "");
        }
        eq("queue/fifo", "m0,m1,m2,m3,m4,m5,m6,m7,m8,m9,m10", got.toString());
        eq("queue/take.ready", "m11", s(consumer.take()));
        CountDownLatch took = new CountDownLatch(1);
        StringBuilder late = new StringBuilder();
        Thread t = new Thread(() -> {
            try {
                late.append(s(consumer.take()));
            } catch (Exception e) {
                late.append(e);
            }
            took.countDown();
        });
        t.start();
        Thread.sleep(300);
        producer.offer(b("late"));
        check("queue/take.blocking", took.await(10, TimeUnit.SECONDS), "");
        eq("queue/take.value", "late", late.toString());
    }
}
