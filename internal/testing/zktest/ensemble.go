// Package zktest runs a real Apache ZooKeeper 3.8 ensemble (Debian's
// zookeeper package, under java) for tests that follow or compare with
// one. Only tests import it.
package zktest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/internal/cli/fourletter"
	"github.com/zkraft/zkraft/internal/testing/testenv"
	"github.com/zkraft/zkraft/internal/testing/testport"
	"github.com/zkraft/zkraft/internal/testing/testproc"
)

// Jar is the ZooKeeper server jar the ensemble runs.
const Jar = "/usr/share/java/zookeeper.jar"

// Server is one Apache ZooKeeper server of a test ensemble.
type Server struct {
	ID         int
	ClientAddr string
	QuorumAddr string
	dir        string
	cmd        *exec.Cmd
	done       chan struct{}
}

// Ensemble is three ZooKeeper 3.8 Servers (Debian's package) on
// loopback, each configured with observers as server.ObserverIDs.
type Ensemble struct {
	t       *testing.T
	Servers []*Server
	// ObserverID is the first of ObserverIDs.
	ObserverID int
	// ObserverIDs are the ids of the observer lines, 4, 5...
	ObserverIDs []int
	// ServerLines are the server.N lines of every server's zoo.cfg, the
	// observers' last.
	ServerLines []string
	java        string
	jvmProps    []string
}

// Start starts the ensemble and waits for a leader. Without java
// or the jar the test is skipped, except in CI (CI=true), where that is a
// failure: .ci/run installs both. jvmProps are extra -D options.
func Start(t *testing.T, jvmProps ...string) *Ensemble {
	t.Helper()
	return StartWith(t, nil, jvmProps...)
}

// StartWith is Start with extra zoo.cfg lines (reconfigEnabled=true...).
func StartWith(t *testing.T, cfgLines []string, jvmProps ...string) *Ensemble {
	t.Helper()
	return StartWithObservers(t, 1, cfgLines, jvmProps...)
}

// StartWithObservers is StartWith with observers observer lines (ids 4,
// 5...) in every server's zoo.cfg, for as many followers of the ensemble.
func StartWithObservers(t *testing.T, observers int, cfgLines []string, jvmProps ...string) *Ensemble {
	t.Helper()
	if observers < 1 {
		t.Fatalf("zktest: %d observers: at least one", observers)
	}
	java, err := exec.LookPath("java")
	if err == nil {
		_, err = os.Stat(Jar)
	}
	if err != nil {
		testenv.Require(t, fmt.Errorf("no ZooKeeper ensemble to follow (install the Debian zookeeper package): %w", err))
	}
	port := func() int {
		p, err := testport.Free()
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	e := &Ensemble{t: t, ObserverID: 4, java: java, jvmProps: jvmProps}
	var lines []string
	root := t.TempDir()
	for id := 1; id <= 3; id++ {
		s := &Server{ID: id, ClientAddr: fmt.Sprintf("127.0.0.1:%d", port()), QuorumAddr: fmt.Sprintf("127.0.0.1:%d", port()),
			dir: filepath.Join(root, strconv.Itoa(id))}
		lines = append(lines, fmt.Sprintf("server.%d=%s:%d;%s", id, s.QuorumAddr, port(), s.ClientAddr))
		e.Servers = append(e.Servers, s)
	}
	for id := 4; id < 4+observers; id++ {
		e.ObserverIDs = append(e.ObserverIDs, id)
		lines = append(lines, fmt.Sprintf("server.%d=127.0.0.1:%d:%d:observer", id, port(), port()))
	}
	e.ServerLines = lines
	for _, s := range e.Servers {
		if err := os.MkdirAll(s.dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(s.dir, "myid"), []byte(fmt.Sprintln(s.ID)), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg := fmt.Sprintf("tickTime=500\ninitLimit=20\nsyncLimit=10\ndataDir=%s\nmaxClientCnxns=0\n"+
			"4lw.commands.whitelist=*\nadmin.enableServer=false\n%s\n%s\n", s.dir, strings.Join(cfgLines, "\n"), strings.Join(lines, "\n"))
		if err := os.WriteFile(filepath.Join(s.dir, "zoo.cfg"), []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Registered first: a server that fails to start must not leave the
	// ones already running behind.
	t.Cleanup(func() {
		for _, s := range e.Servers {
			e.Kill(s)
		}
		if t.Failed() {
			for _, s := range e.Servers {
				b, _ := os.ReadFile(filepath.Join(s.dir, "server.log"))
				if len(b) > 6000 {
					b = b[len(b)-6000:]
				}
				t.Logf("server %d log tail:\n%s", s.ID, b)
			}
		}
	})
	for _, s := range e.Servers {
		e.start(s, jvmProps)
	}
	e.Leader()
	return e
}

func (e *Ensemble) start(s *Server, jvmProps []string) {
	log, err := os.OpenFile(filepath.Join(s.dir, "server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		e.t.Fatal(err)
	}
	args := append([]string{"-XX:-UsePerfData", "-Xmx192m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"}, jvmProps...)
	// netty-codec is missing from the jar's manifest Class-Path; quorum
	// TLS (sslQuorum=true) needs it: without it the election listener
	// dies with a NoClassDefFoundError on the first TLS connection, unlogged.
	args = append(args, "-cp", s.dir+":"+Jar+":/usr/share/java/slf4j-simple.jar:/usr/share/java/netty-codec.jar",
		"org.apache.zookeeper.server.quorum.QuorumPeerMain", filepath.Join(s.dir, "zoo.cfg"))
	s.cmd = testproc.Command(e.java, args...)
	s.cmd.Stdout, s.cmd.Stderr = log, log
	if err := testproc.Start(e.t, s.cmd); err != nil {
		e.t.Fatal(err)
	}
	s.done = make(chan struct{})
	go func() { _ = s.cmd.Wait(); log.Close(); close(s.done) }()
}

// DataDir is s's dataDir (its myid, zoo.cfg and version-2 directory).
func (s *Server) DataDir() string { return s.dir }

// Kill kills s (SIGKILL) and waits for it to exit.
func (e *Ensemble) Kill(s *Server) {
	if s.cmd == nil {
		return
	}
	testproc.Kill(s.cmd)
	<-s.done
	s.cmd = nil
}

// Restart starts s again, on its data dir, after Kill.
func (e *Ensemble) Restart(s *Server) {
	e.t.Helper()
	if s.cmd != nil {
		e.t.Fatalf("zktest: server %d is running", s.ID)
	}
	e.start(s, e.jvmProps)
}

// QuorumAddrs are the Servers' quorum ports, what an observer dials.
func (e *Ensemble) QuorumAddrs() []string {
	var out []string
	for _, s := range e.Servers {
		out = append(out, s.QuorumAddr)
	}
	return out
}

// ClientAddrs are the running Servers' client addresses.
func (e *Ensemble) ClientAddrs() []string {
	var out []string
	for _, s := range e.Servers {
		if s.cmd != nil {
			out = append(out, s.ClientAddr)
		}
	}
	return out
}

// Leader waits until a running server says it leads and the others
// follow, and returns it.
func (e *Ensemble) Leader() *Server {
	e.t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		var lead *Server
		ok := true
		for _, s := range e.Servers {
			if s.cmd == nil {
				continue
			}
			switch fourletter.Field(fourletter.Ask(s.ClientAddr, "srvr"), "Mode: ") {
			case "leader":
				lead = s
			case "follower":
			default:
				ok = false
			}
		}
		if ok && lead != nil {
			return lead
		}
		time.Sleep(100 * time.Millisecond)
	}
	e.t.Fatal("the ZooKeeper ensemble elected no leader")
	return nil
}

// LastZxid is the zxid a server reports in srvr.
func (e *Ensemble) LastZxid(s *Server) int64 {
	z := fourletter.Field(fourletter.Ask(s.ClientAddr, "srvr"), "Zxid: ")
	v, err := strconv.ParseInt(strings.TrimPrefix(z, "0x"), 16, 64)
	if err != nil {
		e.t.Fatalf("srvr of server %d: zxid %q", s.ID, z)
	}
	return v
}

// Sessions are the sessions server s tracks, read from its dump. A
// session whose expiry ZooKeeper moves to the next bucket while dump
// walks the buckets is missing from that dump (ExpiryQueue.dump copies
// the bucket keys, then reads each bucket), so Sessions takes the union
// of three dumps a little apart; callers must not close sessions
// meanwhile.
func (e *Ensemble) Sessions(s *Server) map[int64]bool {
	e.t.Helper()
	sessions := map[int64]bool{}
	for i := range 3 {
		if i > 0 {
			time.Sleep(50 * time.Millisecond)
		}
		out := fourletter.Ask(s.ClientAddr, "dump")
		if !strings.HasPrefix(out, "SessionTracker dump:") {
			e.t.Fatalf("dump of server %d: %q", s.ID, out)
		}
		head, _, _ := strings.Cut(out, "ephemeral nodes dump")
		for _, f := range strings.Fields(head) {
			if h, ok := strings.CutPrefix(strings.TrimSuffix(f, ","), "0x"); ok {
				id, err := strconv.ParseUint(h, 16, 64)
				if err != nil {
					e.t.Fatalf("dump of server %d: session %q: %v", s.ID, f, err)
				}
				sessions[int64(id)] = true
			}
		}
	}
	return sessions
}
