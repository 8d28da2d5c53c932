import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;

/**
 * Drives the Java client against one server and prints a transcript of
 * results without zxids, times or session ids, for the test to compare
 * between a zkraft Observer and a ZooKeeper server. Arguments: the client's
 * address, a ZooKeeper server to write through out of band (to fire the
 * client's watches), and the root znode.
 */
public class ObserverClient {
    static String root;

    static void out(Object... parts) {
        StringBuilder b = new StringBuilder();
        for (Object p : parts) {
            if (b.length() > 0) b.append(' ');
            b.append(p);
        }
        System.out.println(b);
        System.out.flush();
    }

    static String rel(String p) {
        return p.startsWith(root) ? p.substring(root.length()) : p;
    }

    static String stat(Stat st, long session) {
        return "v=" + st.getVersion() + " cv=" + st.getCversion() + " len=" + st.getDataLength()
            + " kids=" + st.getNumChildren() + " eph=" + (st.getEphemeralOwner() == session ? "self" : st.getEphemeralOwner());
    }

    static ZooKeeper connect(String addr, Watcher w) throws Exception {
        CountDownLatch up = new CountDownLatch(1);
        ZooKeeper zk = new ZooKeeper(addr, 10000, e -> {
            if (e.getState() == Watcher.Event.KeeperState.SyncConnected) up.countDown();
        });
        if (!up.await(20, TimeUnit.SECONDS)) throw new IllegalStateException("no session from " + addr);
        return zk;
    }

    static void sync(ZooKeeper zk, String path) throws Exception {
        CountDownLatch synced = new CountDownLatch(1);
        zk.sync(path, (rc, p, ctx) -> synced.countDown(), null);
        if (!synced.await(10, TimeUnit.SECONDS)) throw new IllegalStateException("no sync");
    }

    public static void main(String[] args) throws Exception {
        root = args[2];
        ZooKeeper zk = connect(args[0], null);
        ZooKeeper other = connect(args[1], null);
        long sid = zk.getSessionId();
        List<org.apache.zookeeper.data.ACL> acl = ZooDefs.Ids.OPEN_ACL_UNSAFE;

        out("create", rel(zk.create(root, "r".getBytes(), acl, CreateMode.PERSISTENT)));
        out("create", rel(zk.create(root + "/p", "p".getBytes(), acl, CreateMode.PERSISTENT)));
        out("ephemeral", rel(zk.create(root + "/e", "e".getBytes(), acl, CreateMode.EPHEMERAL)));
        out("sequential", rel(zk.create(root + "/s-", "s".getBytes(), acl, CreateMode.PERSISTENT_SEQUENTIAL)));
        out("ephseq", rel(zk.create(root + "/es-", "es".getBytes(), acl, CreateMode.EPHEMERAL_SEQUENTIAL)));
        Stat cst = new Stat();
        zk.create(root + "/c", "c".getBytes(), acl, CreateMode.PERSISTENT, cst);
        out("create2", stat(cst, sid));
        try {
            zk.create(root + "/p", null, acl, CreateMode.PERSISTENT);
        } catch (KeeperException e) {
            out("create-existing", e.code());
        }

        Stat st = new Stat();
        out("get", new String(zk.getData(root + "/e", false, st)), stat(st, sid));
        out("set", stat(zk.setData(root + "/p", "p1".getBytes(), 0), sid));
        try {
            zk.setData(root + "/p", "p2".getBytes(), 0);
        } catch (KeeperException e) {
            out("set-stale", e.code());
        }
        try {
            zk.getData(root + "/missing", false, null);
        } catch (KeeperException e) {
            out("get-missing", e.code());
        }
        out("exists-missing", zk.exists(root + "/missing", false));
        List<String> kids = new ArrayList<>(zk.getChildren(root, false, st));
        Collections.sort(kids);
        out("children", kids, stat(st, sid));

        BlockingQueue<String> events = new LinkedBlockingQueue<>();
        Watcher w = e -> events.add(e.getType() + " " + rel(e.getPath()));
        zk.getData(root + "/p", w, null);
        other.setData(root + "/p", "from-zk".getBytes(), -1);
        out("data-watch", events.poll(10, TimeUnit.SECONDS));
        zk.getChildren(root, w);
        other.create(root + "/z", "z".getBytes(), acl, CreateMode.PERSISTENT);
        out("child-watch", events.poll(10, TimeUnit.SECONDS));
        zk.exists(root + "/x", w);
        other.create(root + "/x", null, acl, CreateMode.PERSISTENT);
        out("exists-watch", events.poll(10, TimeUnit.SECONDS));
        sync(zk, root + "/z");
        out("read-after-sync", new String(zk.getData(root + "/z", false, st)), stat(st, sid));

        List<OpResult> res = zk.multi(List.of(
            Op.create(root + "/t", "t".getBytes(), acl, CreateMode.PERSISTENT),
            Op.check(root + "/p", 2),
            Op.setData(root + "/t", "t2".getBytes(), 0),
            Op.delete(root + "/x", 0)));
        List<String> rs = new ArrayList<>();
        for (OpResult r : res) {
            if (r instanceof OpResult.CreateResult) rs.add("create " + rel(((OpResult.CreateResult) r).getPath()));
            else if (r instanceof OpResult.SetDataResult) rs.add("set " + stat(((OpResult.SetDataResult) r).getStat(), sid));
            else rs.add(r.getClass().getSimpleName());
        }
        out("multi", rs);
        try {
            zk.multi(List.of(Op.create(root + "/u", null, acl, CreateMode.PERSISTENT), Op.check(root + "/p", 9)));
        } catch (KeeperException e) {
            List<String> errs = new ArrayList<>();
            for (OpResult r : e.getResults()) errs.add(String.valueOf(((OpResult.ErrorResult) r).getErr()));
            out("multi-failing", e.code(), errs);
        }
        out("multi-failing-create-absent", zk.exists(root + "/u", false) == null);
        List<String> reads = new ArrayList<>();
        for (OpResult r : zk.multi(List.of(Op.getData(root + "/z"), Op.getChildren(root + "/t"), Op.getData(root + "/missing")))) {
            if (r instanceof OpResult.GetDataResult) reads.add(new String(((OpResult.GetDataResult) r).getData()) + " " + stat(((OpResult.GetDataResult) r).getStat(), sid));
            else if (r instanceof OpResult.GetChildrenResult) reads.add(String.valueOf(((OpResult.GetChildrenResult) r).getChildren()));
            else if (r instanceof OpResult.ErrorResult) reads.add("error " + ((OpResult.ErrorResult) r).getErr());
            else reads.add(r.getClass().getSimpleName());
        }
        out("multi-read", reads);

        try {
            zk.delete(root + "/p", 0);
        } catch (KeeperException e) {
            out("delete-stale", e.code());
        }
        zk.delete(root + "/p", 2);
        sync(other, root);
        out("deleted-on-zk", other.exists(root + "/p", false) == null);
        try {
            zk.delete(root, -1);
        } catch (KeeperException e) {
            out("delete-not-empty", e.code());
        }

        // Persistent (recursive) watches, fired by writes on ZooKeeper.
        BlockingQueue<String> pev = new LinkedBlockingQueue<>();
        zk.addWatch(root + "/c", e -> pev.add(e.getType() + " " + rel(e.getPath())), org.apache.zookeeper.AddWatchMode.PERSISTENT_RECURSIVE);
        other.create(root + "/c/k", null, acl, CreateMode.PERSISTENT);
        other.setData(root + "/c/k", "k".getBytes(), -1);
        other.delete(root + "/c/k", -1);
        List<String> pevs = new ArrayList<>();
        for (int i = 0; i < 3; i++) pevs.add(pev.poll(10, TimeUnit.SECONDS));
        out("persistent-recursive", pevs);
        zk.removeAllWatches(root + "/c", Watcher.WatcherType.Any, false);

        // Other reads and kinds of nodes.
        List<String> ephs = new ArrayList<>(zk.getEphemerals(root));
        Collections.sort(ephs);
        for (int i = 0; i < ephs.size(); i++) ephs.set(i, rel(ephs.get(i)));
        out("ephemerals", ephs);
        out("all-children", zk.getAllChildrenNumber(root));
        out("container", rel(zk.create(root + "/ct", null, acl, CreateMode.CONTAINER)));
        try {
            zk.create(root + "/ttl", null, acl, CreateMode.PERSISTENT_WITH_TTL, new Stat(), 1000);
            out("ttl", "created");
        } catch (KeeperException e) {
            out("ttl", e.code());
        } catch (IllegalArgumentException e) {
            out("ttl", e.getMessage());
        }
        byte[] big = new byte[1000 * 1000];
        java.util.Arrays.fill(big, (byte) 'b');
        zk.create(root + "/big", big, acl, CreateMode.PERSISTENT);
        out("big", zk.getData(root + "/big", false, st).length, stat(st, sid));

        // Digest ACLs: the identity added on the connection is forwarded.
        zk.addAuthInfo("digest", "alice:secret".getBytes());
        zk.create(root + "/acl", "a".getBytes(), ZooDefs.Ids.CREATOR_ALL_ACL, CreateMode.PERSISTENT);
        out("acl-read-own", new String(zk.getData(root + "/acl", false, null)));
        out("acl", zk.getACL(root + "/acl", st).get(0).getId().getScheme());
        // other is on a ZooKeeper server, which may not have applied the
        // create yet (NONODE, seen under load) unless it syncs first.
        sync(other, root + "/acl");
        try {
            other.getData(root + "/acl", false, null);
        } catch (KeeperException e) {
            out("acl-read-other", e.code());
        }
        try {
            other.setData(root + "/acl", null, -1);
        } catch (KeeperException e) {
            out("acl-write-other", e.code());
        }
        zk.setData(root + "/acl", "b".getBytes(), -1);
        out("acl-write-own ok");
        zk.setACL(root + "/acl", acl, -1);
        out("whoami", zk.whoAmI());
        List<String> zkKids = new ArrayList<>(zk.getChildren("/zookeeper", false));
        Collections.sort(zkKids);
        out("zookeeper-children", zkKids);
        out("config", new String(zk.getConfig(false, null)).replace("\n", " | "));

        zk.close();
        sync(other, root);
        kids = new ArrayList<>(other.getChildren(root, false));
        Collections.sort(kids);
        out("after-close", kids);
        org.apache.zookeeper.ZKUtil.deleteRecursive(other, root);
        other.close();
        out("DONE");
    }
}
