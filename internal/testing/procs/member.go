package procs

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"os/exec"

	"github.com/zkraft/zkraft/internal/cli/fourletter"
	"github.com/zkraft/zkraft/internal/testing/testproc"
)

// Member is one zkraft server process started from a zoo.cfg: a member
// of a test ensemble, or a follower of a ZooKeeper ensemble.
type Member struct {
	ID         int
	ClientAddr string
	AdminAddr  string // its AdminServer
	CfgPath    string
	LogPath    string
	LogLevel   string   // --log-level; "" is warn
	LogFormat  string   // --log-format; "" is console
	Env        []string // added to the test's environment (GOGC=...)
	Flags      []string // more flags of zkraft server
	// Bin is the zkraft binary to start; "" is this checkout's (Binary).
	Bin string
	// Cmd is the running (or last) process; exited is closed once it has
	// been waited for.
	Cmd    *exec.Cmd
	exited chan struct{}
}

// Start starts m's process (again, after Kill or Stop), logging to
// LogPath; the process is killed when the test ends.
func (m *Member) Start(t testing.TB) {
	t.Helper()
	logf, err := os.OpenFile(m.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	level := m.LogLevel
	if level == "" {
		level = "warn"
	}
	args := []string{"server", "--config", m.CfgPath, "--log-level", level}
	if m.LogFormat != "" {
		args = append(args, "--log-format", m.LogFormat)
	}
	args = append(args, m.Flags...)
	bin := m.Bin
	if bin == "" {
		bin = Binary(t)
	}
	cmd := testproc.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if m.Env != nil {
		cmd.Env = append(os.Environ(), m.Env...)
	}
	if err := testproc.Start(t, cmd); err != nil {
		logf.Close()
		t.Fatal(err)
	}
	exited := make(chan struct{})
	m.Cmd, m.exited = cmd, exited
	go func() { _ = cmd.Wait(); logf.Close(); close(exited) }()
}

// Kill kills m (SIGKILL) and returns once its process is gone, so that
// its ports and data directory are free for a restart.
func (m *Member) Kill() {
	m.Signal(syscall.SIGKILL)
	m.Wait()
}

// Signal sends sig to m's process (SIGSTOP, SIGCONT, SIGTERM...).
func (m *Member) Signal(sig syscall.Signal) {
	if m.Cmd != nil && m.Cmd.Process != nil {
		_ = m.Cmd.Process.Signal(sig)
	}
}

// Wait returns once m's process has exited.
func (m *Member) Wait() {
	if m.exited != nil {
		<-m.exited
	}
}

// Exited reports whether m's process has exited.
func (m *Member) Exited() bool {
	select {
	case <-m.exited:
		return true
	default:
		return false
	}
}

// Stop sends m SIGTERM and waits until its process is gone.
func (m *Member) Stop(t testing.TB) {
	t.Helper()
	m.Signal(syscall.SIGTERM)
	select {
	case <-m.exited:
	case <-time.After(20 * time.Second):
		t.Fatalf("server %d did not exit on SIGTERM; its goroutines then:\n%s", m.ID, m.dumpStacks())
	}
}

// Pid is m's process id.
func (m *Member) Pid() int { return m.Cmd.Process.Pid }

// DataDir is the directory of m's zoo.cfg, its dataDir.
func (m *Member) DataDir() string { return filepath.Dir(m.CfgPath) }

// Log is m's log so far.
func (m *Member) Log() string {
	b, _ := os.ReadFile(m.LogPath)
	return string(b)
}

// Mode is m's "Mode: " in srvr (leader, follower, observer, standalone),
// or "" when it does not answer as a serving member.
func (m *Member) Mode() string {
	for _, line := range strings.Split(fourletter.Ask(m.ClientAddr, "srvr"), "\n") {
		if v, ok := strings.CutPrefix(line, "Mode: "); ok {
			return v
		}
	}
	return ""
}

// DynamicMembers, among StartEnsemble's extra lines (a zoo.cfg comment),
// puts the server lines in a dynamic config file that zoo.cfg names, as
// ZooKeeper 3.5+ does once reconfig is enabled.
const DynamicMembers = "# members in dynamicConfigFile"

// StartEnsemble starts size members from zoo.cfg files holding extra,
// and returns once every one serves.
func StartEnsemble(t testing.TB, size int, extra ...string) []*Member {
	t.Helper()
	return StartPreparedEnsemble(t, size, nil, extra...)
}

// StartPreparedEnsemble is StartEnsemble with prepare run on each member
// once its zoo.cfg and myid are written, before it starts.
func StartPreparedEnsemble(t testing.TB, size int, prepare func(*Member), extra ...string) []*Member {
	t.Helper()
	root := t.TempDir()
	var lines []string
	members := make([]*Member, size)
	for i := range members {
		members[i] = &Member{ID: i + 1, ClientAddr: FreeAddr(t), AdminAddr: FreeAddr(t)}
		lines = append(lines, fmt.Sprintf("server.%d=%s:0;%s", i+1, FreeAddr(t), members[i].ClientAddr))
	}
	// Registered before any starts: a member that fails to start must not
	// leave the ones already running behind, and the logs of a failed
	// test are shown once all are stopped.
	t.Cleanup(func() {
		for _, m := range members {
			if m.Cmd != nil {
				m.Kill()
			}
		}
		if t.Failed() {
			for _, m := range members {
				t.Logf("member %d log:\n%s", m.ID, Tail(m.Log(), 40))
			}
		}
	})
	for _, m := range members {
		dir := filepath.Join(root, fmt.Sprint(m.ID))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "myid"), []byte(fmt.Sprintf("%d\n", m.ID)), 0o644); err != nil {
			t.Fatal(err)
		}
		// syncLimit=20 ticks of 500ms give the 10s election timeout of the
		// usual zoo.cfg (electionTimeout): a machine running every
		// package's tests at once deposed leaders mid-test when it was a
		// fraction of a second (a session create lost with its leader).
		adminHost, adminPort, _ := strings.Cut(m.AdminAddr, ":")
		memberLines := strings.Join(lines, "\n")
		if slices.Contains(extra, DynamicMembers) {
			dyn := filepath.Join(dir, "zoo.cfg.dynamic.100000000")
			if err := os.WriteFile(dyn, []byte(memberLines+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			memberLines = "dynamicConfigFile=" + dyn
		}
		cfg := fmt.Sprintf("tickTime=500\ninitLimit=10\nsyncLimit=20\ndataDir=%s\nmaxClientCnxns=0\n4lw.commands.whitelist=*\n"+
			"admin.serverAddress=%s\nadmin.serverPort=%s\n%s\n%s\n",
			dir, adminHost, adminPort, strings.Join(extra, "\n"), memberLines)
		m.CfgPath = filepath.Join(dir, "zoo.cfg")
		m.LogPath = filepath.Join(dir, "zkraft.log")
		if err := os.WriteFile(m.CfgPath, []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		if prepare != nil {
			prepare(m)
		}
		m.Start(t)
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, m := range members {
		for m.Mode() == "" {
			if m.Exited() {
				t.Fatalf("member %d exited:\n%s", m.ID, Tail(m.Log(), 20))
			}
			if time.Now().After(deadline) {
				t.Fatalf("member %d not serving", m.ID)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return members
}

// LeaderOf waits up to 20 s for a member other than except to say it
// leads, and returns it.
func LeaderOf(t testing.TB, members []*Member, except *Member) *Member {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		for _, m := range members {
			if m != except && m.Mode() == "leader" {
				return m
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("no leader")
	return nil
}

// KillAll kills every member at once (SIGKILL to all, then waits for
// all).
func KillAll(members []*Member) {
	for _, m := range members {
		m.Signal(syscall.SIGKILL)
	}
	for _, m := range members {
		m.Wait()
	}
}

// ClientAddrs lists the members' client addresses.
func ClientAddrs(members []*Member) []string {
	addrs := make([]string, 0, len(members))
	for _, m := range members {
		addrs = append(addrs, m.ClientAddr)
	}
	return addrs
}
