import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import org.apache.zookeeper.AddWatchMode;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;

/**
 * Sets one-shot and persistent recursive watches through the client's
 * server (a zkraft observer), prints READY, waits for a line on stdin
 * (the test kills ZooKeeper's leader), waits for its reconnection, writes
 * through ZooKeeper and checks that every watch fires (the Java client
 * re-sends them with SetWatches2). One line per check: PASS/FAIL name
 * detail, then DONE n failed. Arguments: the client's address, the
 * ZooKeeper servers' addresses, the root znode.
 */
public class ObserverWatchFailover {
    static int failures;

    static void check(String name, boolean ok, Object detail) {
        if (!ok) failures++;
        System.out.println((ok ? "PASS " : "FAIL ") + name + " " + detail);
        System.out.flush();
    }

    public static void main(String[] args) throws Exception {
        String root = args[2];
        BlockingQueue<String> states = new LinkedBlockingQueue<>();
        CountDownLatch up = new CountDownLatch(1);
        ZooKeeper zk = new ZooKeeper(args[0], 10000, e -> {
            if (e.getType() == Watcher.Event.EventType.None) {
                states.add(e.getState().toString());
                if (e.getState() == Watcher.Event.KeeperState.SyncConnected) up.countDown();
            }
        });
        if (!up.await(20, TimeUnit.SECONDS)) throw new IllegalStateException("no session");
        CountDownLatch otherUp = new CountDownLatch(1);
        ZooKeeper other = new ZooKeeper(args[1], 10000, e -> {
            if (e.getState() == Watcher.Event.KeeperState.SyncConnected) otherUp.countDown();
        });
        if (!otherUp.await(20, TimeUnit.SECONDS)) throw new IllegalStateException("no session on ZooKeeper");
        long session = zk.getSessionId();
        zk.create(root, null, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        zk.create(root + "/p", null, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        BlockingQueue<String> once = new LinkedBlockingQueue<>();
        BlockingQueue<String> persistent = new LinkedBlockingQueue<>();
        // State changes reach every watcher as None events: not counted.
        Watcher w = e -> {
            if (e.getType() != Watcher.Event.EventType.None) once.add(e.getType() + " " + e.getPath());
        };
        zk.getData(root + "/p", w, null);
        zk.exists(root + "/q", w);
        zk.addWatch(root, e -> {
            if (e.getType() != Watcher.Event.EventType.None) persistent.add(e.getType() + " " + e.getPath());
        }, AddWatchMode.PERSISTENT_RECURSIVE);
        states.clear();
        System.out.println("READY");
        System.out.flush();
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();

        String s;
        boolean disconnected = false, reconnected = false;
        while ((s = states.poll(30, TimeUnit.SECONDS)) != null) {
            if (s.equals("Disconnected")) disconnected = true;
            if (disconnected && s.equals("SyncConnected")) {
                reconnected = true;
                break;
            }
            if (s.equals("Expired")) break;
        }
        check("reconnected", disconnected && reconnected, s);
        check("same-session", zk.getSessionId() == session, Long.toHexString(zk.getSessionId()));
        long deadline = System.currentTimeMillis() + 30000;
        while (true) {
            try {
                other.setData(root + "/p", "after".getBytes(), -1);
                break;
            } catch (KeeperException.ConnectionLossException e) {
                if (System.currentTimeMillis() > deadline) throw e;
                Thread.sleep(200);
            }
        }
        other.create(root + "/q", null, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        List<String> got = new ArrayList<>();
        for (int i = 0; i < 2; i++) got.add(once.poll(10, TimeUnit.SECONDS));
        Collections.sort(got, (a, b) -> String.valueOf(a).compareTo(String.valueOf(b)));
        check("one-shot", got.equals(List.of("NodeCreated " + root + "/q", "NodeDataChanged " + root + "/p")), got);
        got = new ArrayList<>();
        for (int i = 0; i < 2; i++) got.add(persistent.poll(10, TimeUnit.SECONDS));
        check("persistent-recursive", got.equals(List.of("NodeDataChanged " + root + "/p", "NodeCreated " + root + "/q")), got);
        zk.close();
        other.close();
        System.out.printf("DONE %d failed%n", failures);
        System.exit(failures == 0 ? 0 : 1);
    }
}
