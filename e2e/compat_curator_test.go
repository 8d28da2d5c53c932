package e2e

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// curatorChecksMin is the number of checks CuratorCompat.java prints when
// it runs to the end; fewer means it stopped early.
const curatorChecksMin = 58

// curatorJars is the class path of the Curator program: Debian's Apache
// Curator 5 (libcurator-recipes-java and the framework and client it
// needs), the ZooKeeper client under it, Guava, and slf4j-nop.
var curatorJars = []string{
	"/usr/share/java/curator-recipes.jar",
	"/usr/share/java/curator-framework.jar",
	"/usr/share/java/curator-client.jar",
	zookeeperJar,
	"/usr/share/java/zookeeper-jute.jar",
	"/usr/share/java/guava.jar",
	"/usr/share/java/slf4j-api.jar",
	slf4jNopJar,
}

// TestCompatCurator compiles testdata/compat/curator/CuratorCompat.java and
// runs it, in one JVM per server, against zkraft and Apache ZooKeeper:
// Curator's framework API (parents and container parents, protected
// ephemeral-sequential names, TTL nodes, versions, watches, background
// calls, getConfig, transactions) and its recipes as services use them —
// CuratorCache over a persistent recursive watch, InterProcessMutex,
// InterProcessSemaphoreV2, InterProcessReadWriteLock, LeaderLatch,
// LeaderSelector, DistributedAtomicLong, SharedCount,
// DistributedDoubleBarrier, PersistentNode, GroupMember and
// DistributedQueue.
func TestCompatCurator(t *testing.T) {
	skipShort(t)
	t.Parallel()
	needJava(t)
	requireTool(t, needFiles(curatorJars...))
	javac, err := exec.LookPath("javac")
	requireTool(t, err)
	classes := t.TempDir()
	cp := strings.Join(curatorJars, ":")
	src := filepath.Join(compatDir("curator"), "CuratorCompat.java")
	if out, err := runTool(t, 2*time.Minute, "", javac, "-nowarn", "-d", classes, "-cp", cp, src); err != nil {
		t.Fatalf("javac: %v\n%s", err, out)
	}
	runJavaCompat(t, classes+":"+cp, "CuratorCompat", "/compat-curator", curatorChecksMin)
}
