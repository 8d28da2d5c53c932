package znode

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/internal/cli/fourletter"
	"github.com/zkraft/zkraft/internal/testing/testenv"
	"github.com/zkraft/zkraft/internal/testing/testport"
	"github.com/zkraft/zkraft/internal/testing/testproc"
)

// startOracle starts a throwaway Apache ZooKeeper 3.8 (Debian's package)
// with extended types for TestOracle and returns its address. Without java
// or the jar the test is skipped, except in CI (CI=true), where that is a
// failure: .ci/run installs both.
func startOracle(t *testing.T) string {
	t.Helper()
	const jar = "/usr/share/java/zookeeper.jar"
	java, err := exec.LookPath("java")
	if err == nil {
		_, err = os.Stat(jar)
	}
	if err != nil {
		testenv.Require(t, fmt.Errorf("no ZooKeeper to compare with: %w", err))
	}
	port, err := testport.Free() // the JVM binds it later: not from the ephemeral range
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg := fmt.Sprintf("tickTime=2000\ndataDir=%s\nclientPort=%d\nclientPortAddress=127.0.0.1\nmaxClientCnxns=0\nadmin.enableServer=false\n", dir, port)
	if err := os.WriteFile(filepath.Join(dir, "zoo.cfg"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(java, "-XX:-UsePerfData", "-Dzookeeper.extendedTypesEnabled=true", "-cp", dir+":"+jar+":/usr/share/java/slf4j-nop.jar",
		"org.apache.zookeeper.server.quorum.QuorumPeerMain", filepath.Join(dir, "zoo.cfg"))
	if err := testproc.Start(t, cmd); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	// The port opens before sessions are served: wait for srvr's Mode line.
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if strings.Contains(fourletter.Ask(addr, "srvr"), "Mode: ") {
			return addr
		}
	}
	t.Fatal("ZooKeeper oracle did not start")
	return ""
}
