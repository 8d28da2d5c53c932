package zklearner

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/internal/fourletter"
	"github.com/zkraft/zkraft/internal/testenv"
	"github.com/zkraft/zkraft/internal/testport"
)

const zookeeperJar = "/usr/share/java/zookeeper.jar"

// zkServer is one Apache ZooKeeper server of a test ensemble.
type zkServer struct {
	id         int
	clientAddr string
	quorumAddr string
	dir        string
	cmd        *exec.Cmd
	done       chan struct{}
}

// zkEnsemble is three ZooKeeper 3.8 servers (Debian's package) on
// loopback, each configured with observer as server.observerID.
type zkEnsemble struct {
	t          *testing.T
	servers    []*zkServer
	observerID int
	java       string
}

// startEnsemble starts the ensemble and waits for a leader. Without java
// or the jar the test is skipped, except in CI (CI=true), where that is a
// failure: .ci/run installs both. jvmProps are extra -D options.
func startEnsemble(t *testing.T, jvmProps ...string) *zkEnsemble {
	t.Helper()
	java, err := exec.LookPath("java")
	if err == nil {
		_, err = os.Stat(zookeeperJar)
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
	e := &zkEnsemble{t: t, observerID: 4, java: java}
	var lines []string
	root := t.TempDir()
	for id := 1; id <= 3; id++ {
		s := &zkServer{id: id, clientAddr: fmt.Sprintf("127.0.0.1:%d", port()), quorumAddr: fmt.Sprintf("127.0.0.1:%d", port()),
			dir: filepath.Join(root, strconv.Itoa(id))}
		lines = append(lines, fmt.Sprintf("server.%d=%s:%d;%s", id, s.quorumAddr, port(), s.clientAddr))
		e.servers = append(e.servers, s)
	}
	lines = append(lines, fmt.Sprintf("server.%d=127.0.0.1:%d:%d:observer", e.observerID, port(), port()))
	for _, s := range e.servers {
		if err := os.MkdirAll(s.dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(s.dir, "myid"), []byte(fmt.Sprintln(s.id)), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg := fmt.Sprintf("tickTime=500\ninitLimit=20\nsyncLimit=10\ndataDir=%s\nmaxClientCnxns=0\n"+
			"4lw.commands.whitelist=*\nadmin.enableServer=false\n%s\n", s.dir, strings.Join(lines, "\n"))
		if err := os.WriteFile(filepath.Join(s.dir, "zoo.cfg"), []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range e.servers {
		e.start(s, jvmProps)
	}
	t.Cleanup(func() {
		for _, s := range e.servers {
			e.kill(s)
		}
		if t.Failed() {
			for _, s := range e.servers {
				b, _ := os.ReadFile(filepath.Join(s.dir, "server.log"))
				if len(b) > 6000 {
					b = b[len(b)-6000:]
				}
				t.Logf("server %d log tail:\n%s", s.id, b)
			}
		}
	})
	e.leader()
	return e
}

func (e *zkEnsemble) start(s *zkServer, jvmProps []string) {
	log, err := os.OpenFile(filepath.Join(s.dir, "server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		e.t.Fatal(err)
	}
	args := append([]string{"-XX:-UsePerfData", "-Xmx192m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"}, jvmProps...)
	args = append(args, "-cp", s.dir+":"+zookeeperJar+":/usr/share/java/slf4j-simple.jar",
		"org.apache.zookeeper.server.quorum.QuorumPeerMain", filepath.Join(s.dir, "zoo.cfg"))
	s.cmd = exec.Command(e.java, args...)
	s.cmd.Stdout, s.cmd.Stderr = log, log
	if err := s.cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	s.done = make(chan struct{})
	go func() { _ = s.cmd.Wait(); log.Close(); close(s.done) }()
}

func (e *zkEnsemble) kill(s *zkServer) {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.done
	s.cmd = nil
}

// quorumAddrs are the servers' quorum ports, what an observer dials.
func (e *zkEnsemble) quorumAddrs() []string {
	var out []string
	for _, s := range e.servers {
		out = append(out, s.quorumAddr)
	}
	return out
}

// clientAddrs are the running servers' client addresses.
func (e *zkEnsemble) clientAddrs() []string {
	var out []string
	for _, s := range e.servers {
		if s.cmd != nil {
			out = append(out, s.clientAddr)
		}
	}
	return out
}

// leader waits until a running server says it leads and the others
// follow, and returns it.
func (e *zkEnsemble) leader() *zkServer {
	e.t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		var lead *zkServer
		ok := true
		for _, s := range e.servers {
			if s.cmd == nil {
				continue
			}
			switch fourletter.Field(fourletter.Ask(s.clientAddr, "srvr"), "Mode: ") {
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

// lastZxid is the zxid a server reports in srvr.
func (e *zkEnsemble) lastZxid(s *zkServer) int64 {
	z := fourletter.Field(fourletter.Ask(s.clientAddr, "srvr"), "Zxid: ")
	v, err := strconv.ParseInt(strings.TrimPrefix(z, "0x"), 16, 64)
	if err != nil {
		e.t.Fatalf("srvr of server %d: zxid %q", s.id, z)
	}
	return v
}
