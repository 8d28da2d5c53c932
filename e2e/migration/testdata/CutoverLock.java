// CutoverLock holds an Apache Curator InterProcessMutex across a
// migration cutover. One Curator client (its own session) acquires the
// lock and holds it; a second (another session) tries for a second and
// must not get it. Every connection state change of either prints
// "STATE holder|contender NAME". After "ACQUIRED <session>" and "READY",
// each "CHECK" line on stdin checks that the holder still holds the lock
// (isAcquiredInThisProcess, its lock znode is the first participant and
// belongs to its unchanged session), that the contender still cannot
// get it, and that a write through each client works, then prints
// "STILL-HELD <session>" or "FAIL what". A third InterProcessMutex, on
// the contender's session, waits for the lock throughout (on a watch of
// the holder's lock znode). At the end of stdin the holder releases the
// lock, the waiter must then get it ("HANDED-OVER <session>"), and the
// program prints "CLOSING", closes both clients and prints "DONE".
// Usage: java CutoverLock host:port,host:port,... /locks/x

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.data.Stat;

public class CutoverLock {
    static void say(String line) {
        System.out.println(line);
        System.out.flush();
    }

    static CuratorFramework connect(String connect, String name) throws Exception {
        CuratorFramework c = CuratorFrameworkFactory.builder()
            .connectString(connect).sessionTimeoutMs(20000).connectionTimeoutMs(5000)
            .retryPolicy(new RetryNTimes(40, 250)).build();
        c.getConnectionStateListenable().addListener((client, state) -> say("STATE " + name + " " + state));
        c.start();
        if (!c.blockUntilConnected(20, TimeUnit.SECONDS)) {
            say("FAIL connect " + name + " " + connect);
            System.exit(1);
        }
        return c;
    }

    static long session(CuratorFramework c) throws Exception {
        return c.getZookeeperClient().getZooKeeper().getSessionId();
    }

    public static void main(String[] args) throws Exception {
        String connect = args[0], lockPath = args[1];
        CuratorFramework holder = connect(connect, "holder");
        CuratorFramework contender = connect(connect, "contender");
        InterProcessMutex mine = new InterProcessMutex(holder, lockPath);
        InterProcessMutex theirs = new InterProcessMutex(contender, lockPath);
        if (!mine.acquire(20, TimeUnit.SECONDS)) {
            say("FAIL acquire");
            System.exit(1);
        }
        long sid = session(holder);
        long contenderSid = session(contender);
        say(String.format("ACQUIRED %x", sid));
        AtomicBoolean releasing = new AtomicBoolean();
        CountDownLatch handedOver = new CountDownLatch(1);
        InterProcessMutex waiter = new InterProcessMutex(contender, lockPath);
        Thread waiting = new Thread(() -> {
            try {
                waiter.acquire();
                if (!releasing.get()) {
                    say("FAIL the waiting contender acquired the lock while it was held");
                    return;
                }
                waiter.release();
                say(String.format("HANDED-OVER %x", session(contender)));
                handedOver.countDown();
            } catch (Exception e) {
                say("FAIL waiter " + e);
            }
        });
        waiting.setDaemon(true);
        waiting.start();
        say("READY");

        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        int round = 0;
        for (String line; (line = in.readLine()) != null; ) {
            if (!line.equals("CHECK")) {
                continue;
            }
            round++;
            List<String> failures = new ArrayList<>();
            // After a server's loss a client may be reconnecting: within
            // its session that is allowed, so wait for it.
            for (CuratorFramework c : new CuratorFramework[] {holder, contender}) {
                if (!c.getZookeeperClient().blockUntilConnectedOrTimedOut()) {
                    failures.add("not connected");
                }
            }
            if (!mine.isAcquiredInThisProcess()) {
                failures.add("not-acquired-in-this-process");
            }
            if (session(holder) != sid) {
                failures.add(String.format("holder-session %x, was %x", session(holder), sid));
            }
            if (session(contender) != contenderSid) {
                failures.add(String.format("contender-session %x, was %x", session(contender), contenderSid));
            }
            List<String> nodes = new ArrayList<>(mine.getParticipantNodes());
            if (nodes.isEmpty()) {
                failures.add("no-participants");
            } else {
                Stat st = holder.checkExists().forPath(nodes.get(0));
                if (st == null || st.getEphemeralOwner() != sid) {
                    failures.add(String.format("first-participant %s owner %s", nodes.get(0),
                        st == null ? "gone" : Long.toHexString(st.getEphemeralOwner())));
                }
            }
            if (theirs.acquire(1, TimeUnit.SECONDS)) {
                failures.add("contender-acquired");
                theirs.release();
            }
            for (CuratorFramework c : new CuratorFramework[] {holder, contender}) {
                try {
                    c.create().creatingParentsIfNeeded().withMode(CreateMode.PERSISTENT_SEQUENTIAL)
                        .forPath("/cutover-writes/curator-" + round + "-", new byte[0]);
                } catch (Exception e) {
                    failures.add("write " + e);
                }
            }
            if (failures.isEmpty()) {
                // The membership Curator's EnsembleTracker took from
                // /zookeeper/config: the servers it would reconnect to.
                say(String.format("STILL-HELD %x participants=%d config=%s", sid, nodes.size(),
                    holder.getCurrentConfig().toString().replace('\n', ' ')));
            } else {
                say("FAIL " + String.join("; ", failures));
            }
        }
        releasing.set(true);
        mine.release();
        if (!handedOver.await(20, TimeUnit.SECONDS)) {
            say("FAIL the waiting contender did not get the lock once released");
        }
        say("CLOSING");
        contender.close();
        holder.close();
        say("DONE");
    }
}
