package e2e

import (
	"crypto/sha1"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zkraft/zkraft/internal/testing/testport"
	"github.com/zkraft/zkraft/internal/testing/testproc"
	"github.com/zkraft/zkraft/jute"
)

// Session timeout bounds of every server the suite starts: tickTime 2000
// gives ZooKeeper's defaults of 2x and 20x tickTime.
const (
	tickTimeMs          = 2000
	minSessionTimeoutMs = 2 * tickTimeMs
	maxSessionTimeoutMs = 20 * tickTimeMs
)

// startTimeout bounds how long a server may take to answer its first
// handshake: a ZooKeeper JVM among others starting on a machine that runs
// a second make test took more than 30 s.
const startTimeout = time.Minute

// ServerOptions tunes a server beyond the suite's defaults.
type ServerOptions struct {
	// Kind is the implementation to run; empty means the suite's target.
	Kind string
	// ZooCfg holds extra zoo.cfg lines ("snapCount=200"): appended to
	// ZooKeeper's zoo.cfg, and passed to zkraft with --config.
	ZooCfg []string
	// NoExtendedTypes leaves TTL nodes disabled (extendedTypesEnabled).
	NoExtendedTypes bool
	// ExtraArgs are appended to the zkraft command line (zkraft target only).
	ExtraArgs []string
	// JVMArgs are added to the JVM's flags (ZooKeeper target only).
	JVMArgs []string
	// ZKLog makes ZooKeeper log (slf4j-simple: INFO and above to its log
	// file) instead of discarding its log (ZooKeeper target only).
	ZKLog bool
}

// Server is one zkraft or ZooKeeper process on a fixed 127.0.0.1 port with a
// data directory that survives Kill and Restart.
type Server struct {
	// Addr is host:port of the client listener.
	Addr string
	// Kind is targetZkraft or targetZookeeper.
	Kind string

	dir     string // root of everything this server owns
	dataDir string
	logPath string
	port    int
	opts    ServerOptions

	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has been waited for
	werr error         // cmd.Wait's result, valid after done
	logf *os.File
}

// StartServer starts a dedicated server for t in a temp dir; it is stopped
// when t ends and its log is printed if t failed.
func StartServer(t *testing.T, opts ServerOptions) *Server {
	t.Helper()
	s, err := newServer(t.TempDir(), opts)
	if err != nil {
		t.Fatalf("new server: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Errorf("stop %s: %v", s.Kind, err)
		}
		if t.Failed() {
			t.Logf("server log %s, last lines:\n%s", s.LogPath(), s.LogTail(150))
		}
	})
	if err := s.Start(); err != nil {
		t.Fatalf("start %s: %v", s.Kind, err)
	}
	return s
}

// newServer prepares (but does not start) a server rooted at dir.
func newServer(dir string, opts ServerOptions) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	kind := opts.Kind
	if kind == "" {
		kind = target
	}
	s := &Server{
		Addr:    net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		Kind:    kind,
		dir:     dir,
		dataDir: filepath.Join(dir, "data"),
		logPath: filepath.Join(dir, "server.log"),
		port:    port,
		opts:    opts,
	}
	if err := os.MkdirAll(s.dataDir, 0o755); err != nil {
		return nil, err
	}
	return s, nil
}

// freePort returns a port that was free a moment ago, from below the
// ephemeral range (internal/testing/testport).
func freePort() (int, error) { return testport.Free() }

// superDigest is the --super-digest / superDigest value of every server.
func superDigest() string {
	h := sha1.Sum([]byte(superUser + ":" + superPassword))
	return superUser + ":" + base64.StdEncoding.EncodeToString(h[:])
}

// LogPath is the file that collects the server's stdout and stderr.
func (s *Server) LogPath() string { return s.logPath }

// LogTail returns up to the last n lines of the server log.
func (s *Server) LogTail(n int) string {
	b, err := os.ReadFile(s.logPath)
	if err != nil {
		return fmt.Sprintf("(no log: %v)\n", err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "")
}

// command builds the process for s.Kind.
func (s *Server) command() (*exec.Cmd, error) {
	switch s.Kind {
	case targetZkraft:
		level := os.Getenv("ZKRAFT_E2E_LOG_LEVEL")
		if level == "" {
			level = "info"
		}
		// zkraft's time flags are Go durations ("2s"); see TestCLIMillis
		// for the milliseconds form of the original CLI contract.
		args := []string{"server",
			"--client-addr", s.Addr,
			"--data-dir", s.dataDir,
			"--tick-time", (tickTimeMs * time.Millisecond).String(),
			"--container-check-interval", "1s",
			"--max-client-cnxns", "0", // as maxClientCnxns=0 in ZooKeeper's zoo.cfg
			"--super-digest", superDigest(),
			"--log-level", level,
		}
		if !s.opts.NoExtendedTypes {
			args = append(args, "--extended-types")
		}
		if len(s.opts.ZooCfg) > 0 {
			cfg := filepath.Join(s.dir, "zkraft-zoo.cfg")
			// A zoo.cfg turns the AdminServer on (0.0.0.0:8080) unless it says
			// otherwise, as ZooKeeper's does; tests listen on 127.0.0.1 only.
			text := "admin.enableServer=false\n" + strings.Join(s.opts.ZooCfg, "\n") + "\n"
			if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
				return nil, err
			}
			args = append(args, "--config", cfg)
		}
		args = append(args, s.opts.ExtraArgs...)
		return exec.Command(zkraftBin, args...), nil
	case targetZookeeper:
		confDir := filepath.Join(s.dir, "conf")
		if err := os.MkdirAll(confDir, 0o755); err != nil {
			return nil, err
		}
		cfg := fmt.Sprintf("tickTime=%d\ndataDir=%s\nclientPort=%d\nclientPortAddress=127.0.0.1\n"+
			"maxClientCnxns=0\n4lw.commands.whitelist=*\nadmin.enableServer=false\n",
			tickTimeMs, s.dataDir, s.port)
		for _, line := range s.opts.ZooCfg {
			cfg += line + "\n"
		}
		if err := os.WriteFile(filepath.Join(confDir, "zoo.cfg"), []byte(cfg), 0o644); err != nil {
			return nil, err
		}
		binding := slf4jNopJar
		if os.Getenv("ZKRAFT_E2E_ZK_LOG") == "1" || s.opts.ZKLog {
			binding = slf4jSimple
		}
		// C1 only and the serial collector, as zktest's servers and the
		// client JVMs: a test's short-lived server spends less CPU on
		// compiling and collecting (e2e: 80 -> 70 CPU-seconds alone).
		jvm := append([]string{noPerfData, "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"}, s.opts.JVMArgs...)
		return exec.Command(javaBin, append(jvm,
			"-Dzookeeper.extendedTypesEnabled="+strconv.FormatBool(!s.opts.NoExtendedTypes),
			"-Dznode.container.checkIntervalMs=1000",
			"-Dzookeeper.DigestAuthenticationProvider.superDigest="+superDigest(),
			"-cp", confDir+":"+zookeeperJar+":"+binding+":"+servletAPIJar+":"+strings.Join(nettyClientJars, ":"),
			"org.apache.zookeeper.server.quorum.QuorumPeerMain",
			filepath.Join(confDir, "zoo.cfg"),
		)...), nil
	}
	return nil, fmt.Errorf("unknown server kind %q", s.Kind)
}

// Start launches the process and waits until it answers a handshake.
func (s *Server) Start() error {
	if s.cmd != nil {
		return errors.New("server already running")
	}
	cmd, err := s.command()
	if err != nil {
		return err
	}
	logf, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	fmt.Fprintf(logf, "=== e2e: %s starting at %s: %s\n", s.Kind, time.Now().Format(time.RFC3339Nano), strings.Join(cmd.Args, " "))
	cmd.Stdout, cmd.Stderr = logf, logf
	// Die with the test binary, so a crashed run leaks no servers
	// (testproc: a group of its own, the parent-death signal).
	testproc.Prepare(cmd)
	if err := cmd.Start(); err != nil {
		logf.Close()
		return err
	}
	s.cmd, s.logf, s.done, s.werr = cmd, logf, make(chan struct{}), nil
	go func() {
		s.werr = cmd.Wait()
		close(s.done)
	}()
	if err := s.waitReady(startTimeout); err != nil {
		s.Kill()
		return err
	}
	return nil
}

// waitReady polls with a raw handshake (then closeSession) until the
// server answers one, the process exits or the timeout passes.
func (s *Server) waitReady(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		select {
		case <-s.done:
			return fmt.Errorf("%s exited during startup: %v", s.Kind, s.werr)
		default:
		}
		if last = probe(s.Addr); last == nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("%s not ready after %v: %v", s.Kind, timeout, last)
}

// probe opens a session on addr with a raw handshake and closes it again.
func probe(addr string) error {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	req := jute.ConnectRequest{TimeOut: minSessionTimeoutMs, Passwd: make([]byte, 16), HasReadOnly: true}
	if _, err := c.Write(frame(jute.Marshal(&req))); err != nil {
		return err
	}
	body, err := jute.ReadFrame(c, nil, jute.DefaultMaxBuffer)
	if err != nil {
		return err
	}
	var resp jute.ConnectResponse
	if err := jute.Unmarshal(body, &resp); err != nil {
		return err
	}
	if resp.SessionID == 0 || resp.TimeOut <= 0 {
		return fmt.Errorf("handshake refused: %+v", resp)
	}
	var w jute.Writer
	(&jute.RequestHeader{Xid: 1, Type: jute.OpCloseSession}).Encode(&w)
	if _, err := c.Write(frame(w.Buf)); err != nil {
		return err
	}
	_, err = jute.ReadFrame(c, nil, jute.DefaultMaxBuffer) // the closeSession reply
	return err
}

// frame prefixes payload with its 4-byte big-endian length.
func frame(payload []byte) []byte {
	var w jute.Writer
	at := jute.BeginFrame(&w)
	w.Raw(payload)
	jute.EndFrame(&w, at)
	return w.Buf
}

// Stop sends SIGTERM and waits for a clean exit (SIGKILL after 15 s, which
// is reported as an error). Stopping a stopped server is a no-op.
func (s *Server) Stop() error {
	if s.cmd == nil {
		return nil
	}
	defer s.reset()
	select {
	case <-s.done:
		// Not our doing: a crash, or a signal from outside the suite.
		return fmt.Errorf("%s had already exited before the harness stopped it: %v", s.Kind, s.werr)
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(15 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
		return fmt.Errorf("%s ignored SIGTERM for 15s; killed", s.Kind)
	}
	var ee *exec.ExitError
	if s.werr != nil && errors.As(s.werr, &ee) && s.Kind == targetZookeeper {
		// The JVM exits 143 on SIGTERM; that is a clean stop for ZooKeeper.
		if ee.ExitCode() == 143 || ee.ExitCode() == -1 {
			return nil
		}
	}
	if s.werr != nil {
		return fmt.Errorf("%s exited uncleanly after SIGTERM: %v", s.Kind, s.werr)
	}
	return nil
}

// Kill sends SIGKILL and waits for the process to die.
func (s *Server) Kill() {
	if s.cmd == nil {
		return
	}
	defer s.reset()
	testproc.Kill(s.cmd)
	<-s.done
}

// reset closes the log and forgets the exited process.
func (s *Server) reset() {
	fmt.Fprintf(s.logf, "=== e2e: %s stopped at %s: %v\n", s.Kind, time.Now().Format(time.RFC3339Nano), s.werr)
	s.logf.Close()
	s.cmd, s.logf = nil, nil
}

// Restart starts the server again on the same port and data dir.
func (s *Server) Restart() error { return s.Start() }

// Running reports whether the process is alive.
func (s *Server) Running() bool {
	if s.cmd == nil {
		return false
	}
	select {
	case <-s.done:
		return false
	default:
		return true
	}
}
