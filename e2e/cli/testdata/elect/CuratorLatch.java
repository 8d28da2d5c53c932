import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.retry.RetryOneTime;

/**
 * A LeaderLatch driven by lines on stdin, for zkraft elect's tests.
 * usage: CuratorLatch HOST:PORT PATH ID; stdin: "campaign" starts a latch
 * and prints CAMPAIGNING, "await MS" prints LEADER or TIMEOUT, "resign"
 * closes the latch and prints RESIGNED.
 */
public class CuratorLatch {
    public static void main(String[] args) throws Exception {
        CuratorFramework client = CuratorFrameworkFactory.newClient(args[0], 10000, 10000, new RetryOneTime(100));
        client.start();
        client.blockUntilConnected();
        LeaderLatch latch = null;
        System.out.println("READY");
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String line;
        while ((line = in.readLine()) != null) {
            String[] w = line.trim().split(" ");
            if (w[0].equals("campaign")) {
                latch = new LeaderLatch(client, args[1], args[2]);
                latch.start();
                System.out.println("CAMPAIGNING");
            } else if (w[0].equals("await")) {
                System.out.println(latch.await(Long.parseLong(w[1]), TimeUnit.MILLISECONDS) ? "LEADER" : "TIMEOUT");
            } else if (w[0].equals("resign")) {
                latch.close();
                System.out.println("RESIGNED");
            }
            System.out.flush();
        }
        client.close();
    }
}
