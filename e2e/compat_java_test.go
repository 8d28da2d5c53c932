package e2e

import (
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// javaChecksMin is the number of checks ZkCompat.java prints when it runs
// to the end; fewer means it stopped early.
const javaChecksMin = 140

// TestCompatJava compiles testdata/compat/java/ZkCompat.java with javac and
// runs it, in one JVM per server, against zkraft and Apache ZooKeeper: the
// Java client's sync and async APIs (5000 async creates, getData, setData
// and deletes in flight), every CreateMode, multi and transactions with
// per-op results, one-shot and persistent (recursive) watches with exact
// event sequences, digest ACLs and whoAmI, session expiry and resumption,
// and the WriteLock, LeaderElectionSupport and DistributedQueue recipes.
func TestCompatJava(t *testing.T) {
	skipShort(t)
	t.Parallel()
	needJava(t)
	javac, err := exec.LookPath("javac")
	requireTool(t, err)
	classes := t.TempDir()
	cp := strings.Join(javaClientJars, ":")
	srcs, _ := filepath.Glob(filepath.Join(compatDir("java"), "*.java"))
	args := append([]string{"-nowarn", "-d", classes, "-cp", cp}, srcs...)
	if out, err := runTool(t, 2*time.Minute, "", javac, args...); err != nil {
		t.Fatalf("javac: %v\n%s", err, out)
	}
	runJavaCompat(t, classes+":"+cp, "ZkCompat", "/compat-java", javaChecksMin)
}

// runJavaCompat runs a compiled compatibility program (mainClass, printing
// PASS/FAIL lines) in one JVM per server, against zkraft and Apache
// ZooKeeper at once, and checks each report for failures and at least min
// checks.
func runJavaCompat(t *testing.T, classPath, mainClass, root string, min int) {
	t.Helper()
	servers := compatServers(t)
	var wg sync.WaitGroup
	outs := make(map[string]string)
	errs := make(map[string]error)
	var mu sync.Mutex
	for kind, s := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := runTool(t, 3*time.Minute, "", javaBin, "-Xss512k", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
				"-cp", classPath, mainClass, s.Addr, root)
			mu.Lock()
			outs[kind], errs[kind] = out, err
			mu.Unlock()
		}()
	}
	wg.Wait()
	for _, kind := range compatKinds() {
		checkReport(t, kind, outs[kind], errs[kind], min)
	}
}
