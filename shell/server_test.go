package shell

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkraft/zkraft/internal/cli/fourletter"
	"github.com/zkraft/zkraft/internal/testing/testenv"
	"github.com/zkraft/zkraft/internal/testing/testport"
)

// Test servers. Tests get their server address from testServer, which by
// default starts one Apache ZooKeeper 3.8 (Debian's jar) for the whole test
// binary. ZKRAFT_SHELL_TEST_SERVER=host:port points the tests at a running
// server instead (e.g. zkraft itself); startServerHook may be replaced by a
// test file that starts one in-process.

const (
	zkJar    = "/usr/share/java/zookeeper.jar"
	slf4jNop = "/usr/share/java/slf4j-nop.jar"
)

// startServerHook starts the server the tests talk to and returns its
// address and a stop function.
var startServerHook = startApacheZooKeeper

var (
	serverOnce sync.Once
	serverAddr string
	serverErr  error
	serverStop func()
)

// javaAvailable reports whether java and Debian's ZooKeeper jars exist.
func javaAvailable() bool {
	if _, err := exec.LookPath("java"); err != nil {
		return false
	}
	for _, f := range []string{zkJar, slf4jNop} {
		if _, err := os.Stat(f); err != nil {
			return false
		}
	}
	return true
}

// testServer returns the address of the shared test server, starting it on
// first use. Without java it skips (fails in CI).
func testServer(t *testing.T) string {
	t.Helper()
	if a := os.Getenv("ZKRAFT_SHELL_TEST_SERVER"); a != "" {
		return a
	}
	serverOnce.Do(func() {
		serverAddr, serverStop, serverErr = startServerHook()
	})
	if serverErr != nil {
		testenv.Require(t, fmt.Errorf("start test server: %w", serverErr))
	}
	return serverAddr
}

// stopTestServer stops the shared server; TestMain calls it.
func stopTestServer() {
	if serverStop != nil {
		serverStop()
	}
}

// freePort returns a currently unused TCP port on 127.0.0.1, from below
// the ephemeral range (internal/testing/testport).
func freePort() (int, error) { return testport.Free() }

// startApacheZooKeeper runs a standalone Apache ZooKeeper on a free port in
// a temporary directory. The process is ours alone and is killed by the
// returned stop function.
func startApacheZooKeeper() (string, func(), error) { return launchZooKeeper(false) }

// startReconfigZooKeeper runs a one-member ensemble (standaloneEnabled=false)
// with reconfig enabled and ACL checks skipped, so reconfig can commit.
func startReconfigZooKeeper() (string, func(), error) { return launchZooKeeper(true) }

func launchZooKeeper(reconfig bool) (string, func(), error) {
	if !javaAvailable() {
		return "", nil, fmt.Errorf("java or %s missing", zkJar)
	}
	dir, err := os.MkdirTemp("", "zkraft-shell-zk-")
	if err != nil {
		return "", nil, fmt.Errorf("temp dir: %w", err)
	}
	var ports [3]int
	for i := range ports {
		if ports[i], err = freePort(); err != nil {
			return "", nil, err
		}
	}
	port := ports[0]
	data := filepath.Join(dir, "data")
	cfg := fmt.Sprintf("tickTime=2000\ndataDir=%s\nmaxClientCnxns=0\n4lw.commands.whitelist=*\nadmin.enableServer=false\n", data)
	jvm := []string{"-Dzookeeper.extendedTypesEnabled=true"}
	if reconfig {
		cfg += fmt.Sprintf("initLimit=10\nsyncLimit=5\nstandaloneEnabled=false\nreconfigEnabled=true\n"+
			"server.1=127.0.0.1:%d:%d:participant;127.0.0.1:%d\n", ports[1], ports[2], port)
		jvm = append(jvm, "-Dzookeeper.skipACL=yes")
		if err := os.MkdirAll(data, 0o755); err != nil {
			return "", nil, fmt.Errorf("data dir: %w", err)
		}
		if err := os.WriteFile(filepath.Join(data, "myid"), []byte("1\n"), 0o644); err != nil {
			return "", nil, fmt.Errorf("write myid: %w", err)
		}
	} else {
		cfg += fmt.Sprintf("clientPort=%d\nclientPortAddress=127.0.0.1\n", port)
	}
	if err := os.WriteFile(filepath.Join(dir, "zoo.cfg"), []byte(cfg), 0o644); err != nil {
		return "", nil, fmt.Errorf("write zoo.cfg: %w", err)
	}
	logf, err := os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		return "", nil, fmt.Errorf("server log: %w", err)
	}
	args := append(append([]string{"-XX:-UsePerfData"}, jvm...), "-cp", dir+":"+zkJar+":"+slf4jNop,
		"org.apache.zookeeper.server.quorum.QuorumPeerMain", filepath.Join(dir, "zoo.cfg"))
	cmd := exec.Command("java", args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	dieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		logf.Close()
		return "", nil, fmt.Errorf("start java: %w", err)
	}
	stop := func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		logf.Close()
		os.RemoveAll(dir)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if strings.Contains(fourletter.Ask(addr, "srvr"), "Mode:") {
			return addr, stop, nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	stop()
	return "", nil, fmt.Errorf("zookeeper on %s did not come up", addr)
}
