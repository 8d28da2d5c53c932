package procs

import (
	_ "embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkraft/zkraft/internal/testing/testenv"
	"github.com/zkraft/zkraft/internal/testing/testproc"
)

// CuratorClassPath is Debian's Apache Curator 5 with the ZooKeeper client
// under it (libcurator-recipes-java; .ci/run installs it).
var CuratorClassPath = []string{
	"/usr/share/java/curator-recipes.jar", "/usr/share/java/curator-framework.jar",
	"/usr/share/java/curator-client.jar", "/usr/share/java/zookeeper.jar", "/usr/share/java/zookeeper-jute.jar",
	"/usr/share/java/guava.jar", "/usr/share/java/slf4j-api.jar", "/usr/share/java/slf4j-nop.jar",
}

// ClientClassPath is the Java client of Debian's libzookeeper-java
// (JavaTools checks it is there, with Curator).
var ClientClassPath = []string{"/usr/share/java/zookeeper.jar", "/usr/share/java/zookeeper-jute.jar",
	"/usr/share/java/slf4j-api.jar", "/usr/share/java/slf4j-nop.jar"}

// JVMFlags start a client JVM quickly and small: no perf data file, the
// serial collector, the C1 compiler only.
var JVMFlags = []string{"-XX:-UsePerfData", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"}

// JavaTools returns javac's and java's paths, skipping the test where
// they or Curator are missing, except on CI, where that is a failure.
func JavaTools(t testing.TB) (javac, java string) {
	t.Helper()
	missing := func(what string) {
		testenv.Require(t, fmt.Errorf("%s is missing (.ci/run installs it)", what))
	}
	javac, err := exec.LookPath("javac")
	if err != nil {
		missing("javac")
	}
	java, err = exec.LookPath("java")
	if err != nil {
		missing("java")
	}
	for _, jar := range CuratorClassPath {
		if _, err := os.Stat(jar); err != nil {
			missing(jar)
		}
	}
	return javac, java
}

// The classes CompileJava compiled, by class path and sources, kept for
// the test binary's life (a javac run costs seconds of CPU) under
// javaDir, which RunTests removes.
var (
	javaMu      sync.Mutex
	javaDir     string
	javaClasses = map[string]string{}
)

// CompileJava compiles the Java sources against classPath, once per test
// binary, and returns the directory of the classes.
func CompileJava(t testing.TB, classPath []string, sources ...string) string {
	t.Helper()
	javac, _ := JavaTools(t)
	cp := strings.Join(classPath, ":")
	key := cp + "\x00" + strings.Join(sources, "\x00")
	javaMu.Lock()
	defer javaMu.Unlock()
	if dir, ok := javaClasses[key]; ok {
		return dir
	}
	if javaDir == "" {
		dir, err := os.MkdirTemp("", "zkraft-java-")
		if err != nil {
			t.Fatal(err)
		}
		javaDir = dir
	}
	classes := filepath.Join(javaDir, fmt.Sprint(len(javaClasses)))
	args := append([]string{"-nowarn", "-d", classes, "-cp", cp}, sources...)
	if out, err := testproc.Command(javac, args...).CombinedOutput(); err != nil {
		t.Fatalf("javac %s: %v\n%s", strings.Join(sources, " "), err, out)
	}
	javaClasses[key] = classes
	return classes
}

//go:embed java/CuratorFailover.java
var curatorFailover []byte

// RunCuratorFailover runs java/CuratorFailover.java (an ephemeral
// PersistentNode, a LeaderLatch and a counter held through Apache
// Curator) against connect, calls kill with its session id (hex) once
// Curator holds its state, and expects every check after to pass:
// Curator reconnected within its session (RECONNECTED, never LOST), kept
// its ephemeral and leadership, and writes work.
func RunCuratorFailover(t testing.TB, connect string, kill func(session string)) {
	t.Helper()
	src := filepath.Join(t.TempDir(), "CuratorFailover.java")
	if err := os.WriteFile(src, curatorFailover, 0o644); err != nil {
		t.Fatal(err)
	}
	classes := CompileJava(t, CuratorClassPath, src)
	script := StartJavaScript(t, append([]string{classes}, CuratorClassPath...), "CuratorFailover", connect, "/curator-failover")
	session := ""
	script.UntilReady(func(line string) {
		if s, ok := strings.CutPrefix(line, "SESSION "); ok {
			session = s
		}
	})
	if session == "" {
		t.Fatalf("Curator did not get ready:\n%s", script.Transcript())
	}
	kill(session)
	out, err := script.Finish(t, "KILLED", 2*time.Minute)
	if err != nil || strings.Contains(out, "FAIL ") || !strings.Contains(out, "DONE 0 failed") {
		t.Fatalf("Curator after the kill: %v\n%s", err, out)
	}
	t.Logf("%d checks passed", strings.Count(out, "PASS "))
}
