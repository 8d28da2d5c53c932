package migration

import (
	"bufio"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkraft/zkraft/internal/cli/fourletter"
	"github.com/zkraft/zkraft/internal/testing/procs"
	"github.com/zkraft/zkraft/internal/testing/testenv"
	"github.com/zkraft/zkraft/internal/testing/testproc"
	"github.com/zkraft/zkraft/internal/testing/zktest"
)

// TestCutoverKeepsCuratorLockAndKazooLeader is issue 32's proof that
// recipes run through a live migration: three zkraft observers follow a
// ZooKeeper 3.8 ensemble; Apache Curator (testdata/CutoverLock.java)
// holds an InterProcessMutex with a second session contending for it,
// and kazoo (testdata/cutover_kazoo.py) runs an Election with two
// contenders, both connected only to the observers. Across `zkraft
// migrate cutover` and the end of ZooKeeper, the lock's holder and the
// election's leader stay the same, the contenders do not get in, no
// session is lost or replaced, and writes through every client work;
// then the new ensemble's leader is killed: the clients it served
// reconnect to another member within their sessions, holder and leader
// unchanged. Last, the holder lets go and the leader steps down: the
// contenders, waiting all along on watches set before the cutover, take
// over.
func TestCutoverKeepsCuratorLockAndKazooLeader(t *testing.T) {
	if testing.Short() {
		t.Skip("starts ZooKeeper, three observers, a JVM and Python")
	}
	javac, java := procs.JavaTools(t)
	python, err := exec.LookPath("/usr/bin/python3") // Debian's, where python3-kazoo is
	if err == nil {
		err = testproc.Command(python, "-c", "import kazoo.recipe.election").Run()
	}
	if err != nil {
		testenv.Require(t, fmt.Errorf("python3-kazoo is missing (.ci/run installs it): %w", err))
	}
	classes := t.TempDir()
	cp := strings.Join(procs.CuratorClassPath, ":")
	compiled := make(chan error, 1)
	go func() { // javac takes seconds: overlap it with ZooKeeper's start
		out, err := testproc.Command(javac, "-nowarn", "-d", classes, "-cp", cp, filepath.Join("testdata", "CutoverLock.java")).CombinedOutput()
		if err != nil {
			err = fmt.Errorf("javac: %w\n%s", err, out)
		}
		compiled <- err
	}()

	e := zktest.StartWithObservers(t, 3, nil)
	var obs []*procs.Member
	var admins, clients []string
	for _, id := range e.ObserverIDs {
		m := procs.StartFollower(t, e, id)
		obs = append(obs, m)
		admins = append(admins, m.AdminAddr)
		clients = append(clients, m.ClientAddr)
	}
	if err := <-compiled; err != nil {
		t.Fatal(err)
	}
	hosts := strings.Join(clients, ",")
	curator := startLineProc(t, "curator", java, "-XX:-UsePerfData", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
		"-cp", classes+":"+cp, "CutoverLock", hosts, "/locks/x")
	kazoo := startLineProc(t, "kazoo", python, filepath.Join("testdata", "cutover_kazoo.py"), hosts, "/election")
	curator.expect(t, "READY", 60*time.Second)
	kazoo.expect(t, "READY", 30*time.Second)
	holder := strings.TrimPrefix(curator.find("ACQUIRED "), "ACQUIRED ")
	leader := strings.TrimPrefix(kazoo.find("LEADER "), "LEADER ")
	t.Logf("Curator's lock holder is session 0x%s; kazoo's leader is %s", holder, leader)

	check := func(when string) {
		t.Helper()
		curator.send(t, "CHECK")
		kazoo.send(t, "CHECK")
		if got := curator.expect(t, "STILL-HELD ", 30*time.Second); !strings.HasPrefix(got, "STILL-HELD "+holder+" ") {
			t.Fatalf("%s, Curator's lock is held by %q, not session 0x%s", when, got, holder)
		}
		if got := kazoo.expect(t, "STILL-LEADER ", 30*time.Second); got != "STILL-LEADER "+leader {
			t.Fatalf("%s, kazoo's leader is %q, not %q", when, got, leader)
		}
	}
	check("before the cutover")

	out, err := procs.Run(t, "migrate", "cutover", "--admin-addr", strings.Join(admins, ","), "--auth", "digest:admin:secret", "--timeout", "30s")
	if err != nil {
		t.Fatalf("cutover: %v\n%s", err, out)
	}
	t.Logf("cutover:\n%s", out)
	if held := regexp.MustCompile(`writes were held for \S+`).FindString(out); held != "" {
		t.Logf("with a Curator lock and a kazoo election running, %s", held)
	} else {
		t.Errorf("the cutover does not say how long writes were held:\n%s", out)
	}
	check("after the cutover")

	for _, s := range e.Servers {
		e.Kill(s)
	}
	check("with ZooKeeper gone")
	// Curator learnt ZooKeeper's servers from /zookeeper/config through
	// the observers; it must have moved on to the new ensemble's members,
	// or its next reconnect goes to ZooKeeper's dead servers.
	newMembers := func(line string) bool {
		for _, m := range obs {
			if !strings.Contains(line, fmt.Sprintf("server.%d=", m.ID)) || !strings.Contains(line, ";"+m.ClientAddr) {
				return false
			}
		}
		return !strings.Contains(line, "server.1=")
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		got := curator.findAll("STILL-HELD ")
		if last := got[len(got)-1]; newMembers(last) {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("with ZooKeeper gone, Curator's membership is not the new ensemble's (%s): %s", hosts, last)
		}
		time.Sleep(200 * time.Millisecond)
		curator.send(t, "CHECK")
		curator.expect(t, "STILL-HELD ", 30*time.Second)
	}

	// The sessions are the new ensemble's: the loss of its leader moves
	// the clients it served to the others, within their sessions.
	// (One leader: found first, killed after, or its successor, elected
	// within milliseconds, is found leading and killed too.)
	lead := procs.LeaderOf(t, obs, nil)
	cons := fourletter.Ask(lead.ClientAddr, "cons")
	lead.Kill()
	t.Logf("killed the new ensemble's leader, server %d, which held %d of the 4 sessions", lead.ID, strings.Count(cons, "sid=0x"))
	check("after the new ensemble's leader was killed")

	// The holder lets go: the contender waiting all along (on a watch set
	// before the cutover) gets the lock, the other contender leads.
	curator.finish(t)
	kazoo.finish(t)
	if got := curator.find("HANDED-OVER "); got == "" || strings.Contains(got, holder) {
		t.Errorf("the waiting Curator contender did not get the lock once released: %q", got)
	}
	if got := kazoo.findAll("LEADER "); len(got) != 2 || got[0] != "LEADER "+leader {
		t.Errorf("kazoo's leaders: %q, want %q then the other contender", got, leader)
	}
	for _, p := range []*lineProc{curator, kazoo} {
		tr, _, _ := strings.Cut(p.transcript(), "\nCLOSING\n") // closing loses the sessions
		if strings.Contains(tr, " LOST") || strings.Contains(tr, "FAIL") {
			t.Errorf("%s lost a session or failed a check:\n%s", p.name, tr)
		}
		if strings.Contains(tr, "SUSPENDED") {
			t.Logf("%s was suspended (and reconnected within its session)", p.name)
		}
		t.Logf("%s transcript:%s", p.name, p.transcript())
	}
}

// lineProc is a client program the test talks to by lines: commands on
// its stdin, results read from its stdout (and stderr).
type lineProc struct {
	name  string
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string
	done  chan error

	mu  sync.Mutex
	all []string
}

// startLineProc starts a program, killing it when the test ends.
func startLineProc(t *testing.T, name, prog string, args ...string) *lineProc {
	t.Helper()
	p := &lineProc{name: name, cmd: testproc.Command(prog, args...), lines: make(chan string, 1000), done: make(chan error, 1)}
	var err error
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p.cmd.Stderr = p.cmd.Stdout
	if err := testproc.Start(t, p.cmd); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			p.mu.Lock()
			p.all = append(p.all, sc.Text())
			p.mu.Unlock()
			p.lines <- sc.Text()
		}
		close(p.lines)
		p.done <- p.cmd.Wait()
	}()
	return p
}

// expect waits for a line starting with prefix and returns it, failing
// t on a FAIL line, at the end of the output or after timeout.
func (p *lineProc) expect(t *testing.T, prefix string, timeout time.Duration) string {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				t.Fatalf("%s ended before %q:\n%s", p.name, prefix, p.transcript())
			}
			if strings.HasPrefix(line, "FAIL") {
				t.Fatalf("%s: %s\n%s", p.name, line, p.transcript())
			}
			if strings.HasPrefix(line, prefix) {
				return line
			}
		case <-deadline:
			t.Fatalf("%s printed no %q in %v:\n%s", p.name, prefix, timeout, p.transcript())
		}
	}
}

// find returns the first line printed so far that starts with prefix.
func (p *lineProc) find(prefix string) string {
	if all := p.findAll(prefix); len(all) > 0 {
		return all[0]
	}
	return ""
}

// findAll returns the lines printed so far that start with prefix.
func (p *lineProc) findAll(prefix string) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var found []string
	for _, l := range p.all {
		if strings.HasPrefix(l, prefix) {
			found = append(found, l)
		}
	}
	return found
}

// send writes a command line to the program.
func (p *lineProc) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(p.stdin, line+"\n"); err != nil {
		t.Fatalf("%s: %v\n%s", p.name, err, p.transcript())
	}
}

// finish closes the program's stdin and expects it to print DONE and
// exit well.
func (p *lineProc) finish(t *testing.T) {
	t.Helper()
	_ = p.stdin.Close()
	p.expect(t, "DONE", 30*time.Second)
	for range p.lines {
	}
	if err := <-p.done; err != nil {
		t.Fatalf("%s: %v\n%s", p.name, err, p.transcript())
	}
}

// transcript is everything the program printed, a line each.
func (p *lineProc) transcript() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return "\n" + strings.Join(p.all, "\n") + "\n"
}
