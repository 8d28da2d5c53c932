import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.RetryOneTime;

/**
 * An InterProcessMutex driven by lines on stdin, for zkraft lock's tests.
 * usage: CuratorLock HOST:PORT PATH; stdin: "acquire MS" prints GOT or
 * TIMEOUT, "release" prints RELEASED.
 */
public class CuratorLock {
    public static void main(String[] args) throws Exception {
        CuratorFramework client = CuratorFrameworkFactory.newClient(args[0], 10000, 10000, new RetryOneTime(100));
        client.start();
        client.blockUntilConnected();
        InterProcessMutex mutex = new InterProcessMutex(client, args[1]);
        System.out.println("READY");
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String line;
        while ((line = in.readLine()) != null) {
            String[] w = line.trim().split(" ");
            if (w[0].equals("acquire")) {
                System.out.println(mutex.acquire(Long.parseLong(w[1]), TimeUnit.MILLISECONDS) ? "GOT" : "TIMEOUT");
            } else if (w[0].equals("release")) {
                mutex.release();
                System.out.println("RELEASED");
            }
            System.out.flush();
        }
        client.close();
    }
}
