// CuratorFailover holds the state a service keeps in ZooKeeper through
// Apache Curator (an ephemeral PersistentNode, a LeaderLatch, a counter),
// prints its session id and READY, waits for a line on stdin (the test
// kills the member it is connected to), and then checks that Curator
// reconnected to another member within the session: same session, no
// LOST, the ephemeral and the leadership kept, writes working. One line
// per check: PASS name detail / FAIL name detail; exit 1 on a failure.
// Usage: java CuratorFailover host:port,host:port,... /root

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.atomic.AtomicValue;
import org.apache.curator.framework.recipes.atomic.DistributedAtomicLong;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.nodes.PersistentNode;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.data.Stat;

public class CuratorFailover {
    static int failures;

    static void check(String name, boolean ok, Object detail) {
        if (!ok) {
            failures++;
        }
        System.out.println((ok ? "PASS " : "FAIL ") + name + " " + detail);
        System.out.flush();
    }

    public static void main(String[] args) throws Exception {
        String connect = args[0], root = args[1];
        CuratorFramework c = CuratorFrameworkFactory.builder()
            .connectString(connect).sessionTimeoutMs(20000).connectionTimeoutMs(5000)
            .retryPolicy(new RetryNTimes(20, 250)).build();
        CountDownLatch reconnected = new CountDownLatch(1);
        StringBuilder states = new StringBuilder();
        c.getConnectionStateListenable().addListener((client, state) -> {
            synchronized (states) {
                states.append(state).append(' ');
            }
            if (state == ConnectionState.RECONNECTED) {
                reconnected.countDown();
            }
        });
        c.start();
        if (!c.blockUntilConnected(15, TimeUnit.SECONDS)) {
            check("connect", false, connect);
            System.exit(1);
        }
        c.create().creatingParentsIfNeeded().forPath(root, new byte[0]);
        PersistentNode me = new PersistentNode(c, CreateMode.EPHEMERAL, false, root + "/me", "x".getBytes(StandardCharsets.UTF_8));
        me.start();
        check("ephemeral", me.waitForInitialCreate(10, TimeUnit.SECONDS), root + "/me");
        LeaderLatch latch = new LeaderLatch(c, root + "/latch", "only");
        latch.start();
        check("leader", latch.await(10, TimeUnit.SECONDS), "the one participant leads");
        DistributedAtomicLong counter = new DistributedAtomicLong(c, root + "/counter", new RetryNTimes(20, 250));
        check("counter", counter.increment().succeeded(), "1");
        long session = c.getZookeeperClient().getZooKeeper().getSessionId();
        System.out.printf("SESSION %x%n", session);
        System.out.println("READY");
        System.out.flush();

        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();

        check("reconnected", reconnected.await(30, TimeUnit.SECONDS), "within 30 s");
        String seen;
        synchronized (states) {
            seen = states.toString().trim();
        }
        check("not-lost", !seen.contains("LOST"), seen);
        check("same-session", c.getZookeeperClient().getZooKeeper().getSessionId() == session,
            String.format("%x", c.getZookeeperClient().getZooKeeper().getSessionId()));
        Stat st = c.checkExists().forPath(root + "/me");
        check("ephemeral-kept", st != null && st.getEphemeralOwner() == session, st);
        long deadline = System.currentTimeMillis() + 15000;
        while (!latch.hasLeadership() && System.currentTimeMillis() < deadline) {
            Thread.sleep(50);
        }
        check("leader-kept", latch.hasLeadership(), "after the reconnect");
        AtomicValue<Long> v = counter.increment();
        check("counter-after", v.succeeded() && v.postValue() == 2L, v.postValue());
        check("write-after", c.create().forPath(root + "/after", new byte[0]) != null, root + "/after");
        latch.close();
        me.close();
        c.close();
        System.out.printf("DONE %d failed%n", failures);
        System.exit(failures == 0 ? 0 : 1);
    }
}
