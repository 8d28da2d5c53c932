package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/internal/cli/fourletter"
	"github.com/zkraft/zkraft/internal/testing/testenv"
)

// curatorClassPath is Debian's Apache Curator 5 with the ZooKeeper client
// under it (libcurator-recipes-java; .ci/run installs it).
var curatorClassPath = []string{
	"/usr/share/java/curator-recipes.jar", "/usr/share/java/curator-framework.jar",
	"/usr/share/java/curator-client.jar", "/usr/share/java/zookeeper.jar", "/usr/share/java/zookeeper-jute.jar",
	"/usr/share/java/guava.jar", "/usr/share/java/slf4j-api.jar", "/usr/share/java/slf4j-nop.jar",
}

// needJavaTools returns javac's and java's paths, skipping the test where
// they or Curator are missing, except on CI, where that is a failure.
func needJavaTools(t *testing.T) (javac, java string) {
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
	for _, jar := range curatorClassPath {
		if _, err := os.Stat(jar); err != nil {
			missing(jar)
		}
	}
	return javac, java
}

// TestCuratorSurvivesMemberKill connects Apache Curator to a three-process
// ensemble with an ephemeral PersistentNode, a LeaderLatch and a counter,
// kills -9 the member its session is connected to, and expects what a
// service on Curator needs: a reconnect to another member within the
// session (RECONNECTED, never LOST), its ephemeral and its leadership
// kept, and writes working (testdata/CuratorFailover.java).
func TestCuratorSurvivesMemberKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three server processes and a JVM")
	}
	javac, java := needJavaTools(t)
	classes := t.TempDir()
	cp := strings.Join(curatorClassPath, ":")
	if out, err := exec.Command(javac, "-nowarn", "-d", classes, "-cp", cp, filepath.Join("testdata", "CuratorFailover.java")).CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, out)
	}
	members := startEnsemble(t, 3)
	leaderOf(t, members, nil)
	runCuratorFailover(t, java, classes, cp, strings.Join(clientAddrs(members), ","), func(session string) {
		// The member holding the session's connection lists it in cons.
		var held *member
		for _, m := range members {
			if strings.Contains(fourletter.Ask(m.clientAddr, "cons"), "sid=0x"+session) {
				held = m
			}
		}
		if held == nil {
			t.Fatalf("no member lists session 0x%s", session)
		}
		role := held.mode()
		held.kill()
		t.Logf("killed member %d (%s), which held session 0x%s", held.id, role, session)
	})
}

// runCuratorFailover runs testdata/CuratorFailover.java (compiled in
// classes) against connect, calls kill with its session id (hex) once
// Curator holds its state, and expects every check after to pass.
func runCuratorFailover(t *testing.T, java, classes, cp, connect string, kill func(session string)) {
	t.Helper()
	cmd := exec.Command(java, "-XX:-UsePerfData", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp", classes+":"+cp,
		"CuratorFailover", connect, "/curator-failover")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()
	var transcript strings.Builder
	lines := bufio.NewScanner(stdout)
	session := ""
	for lines.Scan() {
		line := lines.Text()
		transcript.WriteString(line + "\n")
		if s, ok := strings.CutPrefix(line, "SESSION "); ok {
			session = s
		}
		if line == "READY" {
			break
		}
	}
	if session == "" {
		t.Fatalf("Curator did not get ready:\n%s", transcript.String())
	}
	kill(session)
	if _, err := io.WriteString(stdin, "KILLED\n"); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		for lines.Scan() {
			transcript.WriteString(lines.Text() + "\n")
		}
		done <- cmd.Wait()
	}()
	select {
	case err = <-done:
	case <-time.After(2 * time.Minute):
		t.Fatalf("Curator did not finish:\n%s", transcript.String())
	}
	out := transcript.String()
	if err != nil || strings.Contains(out, "FAIL ") || !strings.Contains(out, "DONE 0 failed") {
		t.Fatalf("Curator after the kill: %v\n%s", err, out)
	}
	t.Logf("%d checks passed", strings.Count(out, "PASS "))
}
