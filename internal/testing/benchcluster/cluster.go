// Package benchcluster runs ensembles of server processes on loopback for
// the measurements of `make bench` and `make overload` and for the load
// tests: three (or Size) members of zkraft, or of Apache ZooKeeper 3.8
// from Debian's package, with the same zoo.cfg (tickTime 2000, syncLimit
// 5, fsync on), each member in a process group of its own that gets
// SIGKILL when the process that started it dies, so no ensemble outlives
// its run.
package benchcluster

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/zkraft/zkraft/internal/cli/fourletter"
	"github.com/zkraft/zkraft/internal/testing/testport"
)

// ZooKeeper is the Config.Name that runs Apache ZooKeeper members; any
// other name runs zkraft from Config.Bin.
const ZooKeeper = "zookeeper"

// Config describes an ensemble.
type Config struct {
	// Name is "zookeeper" for Apache ZooKeeper, or a name for zkraft
	// members ("zkraft", "baseline" for an A/B of two builds); it also
	// names the ensemble's directory under Root.
	Name string
	Root string // parent directory of the ensemble's directory
	Bin  string // the zkraft binary (not used for ZooKeeper)
	Size int    // members
	// Settings are zoo.cfg lines ("key=value") that replace the default
	// line of the same key or are added.
	Settings []string
	// JVMFlags are more java options for ZooKeeper members (-D...).
	JVMFlags []string
	// Pprof makes zkraft members serve Go's profiles on a free port
	// (Member.PprofAddr).
	Pprof bool
	// Admin makes zkraft members serve the AdminServer on a free port
	// (Member.AdminAddr), e.g. for `zkraft snapshot save`.
	Admin bool
	// LogLevel is zkraft members' --log-level (default warn).
	LogLevel string
}

// defaultSettings are every member's zoo.cfg lines before Settings.
var defaultSettings = []string{
	"tickTime=2000", "initLimit=10", "syncLimit=5", "maxClientCnxns=0",
	"4lw.commands.whitelist=*", "admin.enableServer=false", "forceSync=yes", "snapCount=100000",
}

// Member is one server process of an ensemble.
type Member struct {
	ID         int
	ClientAddr string
	PprofAddr  string // "" unless Config.Pprof (zkraft only)
	AdminAddr  string // "" unless Config.Admin (zkraft only)
	Dir        string // data directory, zoo.cfg and server.log
	argv       []string
	cmd        *exec.Cmd
	exited     chan struct{} // closed once cmd has been waited for
}

// Ensemble is the members of one implementation on loopback.
type Ensemble struct {
	Name    string
	Members []*Member
}

// IsZooKeeper reports whether the members are Apache ZooKeeper's.
func (e *Ensemble) IsZooKeeper() bool { return e.Name == ZooKeeper }

// New writes zoo.cfg and myid for cfg.Size members under
// cfg.Root/cfg.Name; nothing runs until Start. Ports come from
// internal/testing/testport, below the ephemeral range, so a client connection
// cannot take one before the member binds it.
func New(cfg Config) (*Ensemble, error) {
	if cfg.Size < 1 {
		return nil, fmt.Errorf("benchcluster: %d members", cfg.Size)
	}
	e := &Ensemble{Name: cfg.Name}
	var servers []string
	for i := 1; i <= cfg.Size; i++ {
		ports, err := freePorts(3)
		if err != nil {
			return nil, err
		}
		m := &Member{ID: i, ClientAddr: fmt.Sprintf("127.0.0.1:%d", ports[0]), Dir: filepath.Join(cfg.Root, cfg.Name, strconv.Itoa(i))}
		servers = append(servers, fmt.Sprintf("server.%d=127.0.0.1:%d:%d;%s", i, ports[1], ports[2], m.ClientAddr))
		if cfg.Pprof && cfg.Name != ZooKeeper {
			p, err := testport.Addr()
			if err != nil {
				return nil, fmt.Errorf("benchcluster: %w", err)
			}
			m.PprofAddr = p
		}
		if cfg.Admin && cfg.Name != ZooKeeper {
			p, err := testport.Addr()
			if err != nil {
				return nil, fmt.Errorf("benchcluster: %w", err)
			}
			m.AdminAddr = p
		}
		e.Members = append(e.Members, m)
	}
	settings := mergeSettings(defaultSettings, cfg.Settings)
	for _, m := range e.Members {
		if err := os.MkdirAll(m.Dir, 0o755); err != nil {
			return nil, fmt.Errorf("benchcluster: %w", err)
		}
		if err := os.WriteFile(filepath.Join(m.Dir, "myid"), []byte(fmt.Sprintln(m.ID)), 0o644); err != nil {
			return nil, fmt.Errorf("benchcluster: %w", err)
		}
		lines := append([]string{"dataDir=" + m.Dir}, settings...)
		cfgPath := filepath.Join(m.Dir, "zoo.cfg")
		if err := os.WriteFile(cfgPath, []byte(strings.Join(append(lines, servers...), "\n")+"\n"), 0o644); err != nil {
			return nil, fmt.Errorf("benchcluster: %w", err)
		}
		if cfg.Name == ZooKeeper {
			// Its log (slf4j-simple, on stderr into server.log) at WARN
			// unless JVMFlags set -Dorg.slf4j.simpleLogger.defaultLogLevel.
			m.argv = append(append([]string{"java", "-XX:-UsePerfData", "-Xms512m", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
				"-Dorg.slf4j.simpleLogger.showDateTime=true", "-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS"}, cfg.JVMFlags...),
				"-cp", m.Dir+":/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-simple.jar",
				"org.apache.zookeeper.server.quorum.QuorumPeerMain", cfgPath)
		} else {
			level := cfg.LogLevel
			if level == "" {
				level = "warn"
			}
			m.argv = []string{cfg.Bin, "server", "--config", cfgPath, "--log-level", level}
			if m.PprofAddr != "" {
				m.argv = append(m.argv, "--pprof-addr", m.PprofAddr)
			}
			if m.AdminAddr != "" {
				m.argv = append(m.argv, "--admin-addr", m.AdminAddr)
			}
		}
	}
	return e, nil
}

// freePorts draws n ports from internal/testing/testport.
func freePorts(n int) ([]int, error) {
	ports := make([]int, n)
	for i := range ports {
		p, err := testport.Free()
		if err != nil {
			return nil, fmt.Errorf("benchcluster: %w", err)
		}
		ports[i] = p
	}
	return ports, nil
}

// mergeSettings returns base with each line of over replacing base's line
// of the same key, and over's other lines appended.
func mergeSettings(base, over []string) []string {
	key := func(line string) string { k, _, _ := strings.Cut(line, "="); return strings.TrimSpace(k) }
	out := slices.Clone(base)
	for _, line := range over {
		if i := slices.IndexFunc(out, func(b string) bool { return key(b) == key(line) }); i >= 0 {
			out[i] = line
		} else {
			out = append(out, line)
		}
	}
	return out
}

// Start starts the member's process, its output appended to server.log.
func (m *Member) Start() error {
	log, err := os.OpenFile(filepath.Join(m.Dir, "server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("benchcluster: %w", err)
	}
	cmd := exec.Command(m.argv[0], m.argv[1:]...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = memberProcAttr()
	if err := cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("benchcluster: start member %d: %w", m.ID, err)
	}
	exited := make(chan struct{})
	m.cmd, m.exited = cmd, exited
	go func() { _ = cmd.Wait(); log.Close(); close(exited) }()
	return nil
}

// Kill sends SIGKILL to the member's process group and waits (a few
// seconds at most) until the process is gone.
func (m *Member) Kill() {
	if m.cmd == nil || m.cmd.Process == nil {
		return
	}
	killGroup(m.cmd.Process.Pid)
	select {
	case <-m.exited:
	case <-time.After(5 * time.Second):
	}
}

// Running reports whether the member's process is alive.
func (m *Member) Running() bool {
	if m.exited == nil {
		return false
	}
	select {
	case <-m.exited:
		return false
	default:
		return true
	}
}

// Pid is the member's process id (0 before Start).
func (m *Member) Pid() int {
	if m.cmd == nil || m.cmd.Process == nil {
		return 0
	}
	return m.cmd.Process.Pid
}

// Start starts every member.
func (e *Ensemble) Start() error {
	for _, m := range e.Members {
		if err := m.Start(); err != nil {
			e.Stop()
			return err
		}
	}
	return nil
}

// Stop kills every member.
func (e *Ensemble) Stop() {
	for _, m := range e.Members {
		m.Kill()
	}
}

// Addrs are the members' client addresses.
func (e *Ensemble) Addrs() []string {
	addrs := make([]string, len(e.Members))
	for i, m := range e.Members {
		addrs[i] = m.ClientAddr
	}
	return addrs
}

// Servers is Addrs joined by commas, as `zkraft bench --server` takes them.
func (e *Ensemble) Servers() string { return strings.Join(e.Addrs(), ",") }

// WaitServing waits until every running member reports a mode other than
// read-only and the leader at least minNodes znodes; it returns how long
// that took.
func (e *Ensemble) WaitServing(limit time.Duration, minNodes int) (time.Duration, error) {
	start := time.Now()
	for {
		ready := true
		for _, m := range e.Members {
			if ok, _, _ := m.Serving(minNodes); !ok && m.Running() {
				ready = false
				break
			}
		}
		if ready {
			return time.Since(start), nil
		}
		if time.Since(start) > limit {
			return 0, fmt.Errorf("%s not serving after %v%s", e.Name, limit, e.notServing(minNodes))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Leader is the member that reports itself leader, or nil.
func (e *Ensemble) Leader() *Member {
	for _, m := range e.Members {
		if m.Running() && fourletter.Field(fourletter.Ask(m.ClientAddr, "srvr"), "Mode: ") == "leader" {
			return m
		}
	}
	return nil
}

// CPUTime is the CPU time (user+system) the running members have used.
func (e *Ensemble) CPUTime() time.Duration {
	var total time.Duration
	for _, m := range e.Members {
		total += m.CPUTime()
	}
	return total
}

// CPUTime is the CPU time (user+system) the member has used, from
// /proc/<pid>/stat; 0 when it cannot be read.
func (m *Member) CPUTime() time.Duration {
	if !m.Running() {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", m.Pid()))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	ut, _ := strconv.Atoi(f[11])
	st, _ := strconv.Atoi(f[12])
	return time.Duration(ut+st) * time.Second / 100 // USER_HZ on Linux
}

// RSS is the member's resident set size in bytes: all of it (VmRSS) and
// its anonymous part (RssAnon: heap and stacks, what the process itself
// holds, as opposed to file pages it has mapped, such as bolt's mmap of
// the Raft log, which the kernel reclaims like any page cache); 0 when
// the process is gone.
func (m *Member) RSS() (total, anon int64) {
	if !m.Running() {
		return 0, 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", m.Pid()))
	if err != nil {
		return 0, 0
	}
	kb := func(field string) int64 {
		f := strings.Fields(fourletter.Field(string(b), field))
		if len(f) == 0 {
			return 0
		}
		v, _ := strconv.ParseInt(f[0], 10, 64)
		return v * 1024
	}
	return kb("VmRSS:"), kb("RssAnon:")
}

// Serving asks m (srvr) whether it serves with a quorum and at least
// minNodes znodes, and returns its mode and znode count.
func (m *Member) Serving(minNodes int) (ok bool, mode string, n int) {
	out := fourletter.Ask(m.ClientAddr, "srvr")
	mode = fourletter.Field(out, "Mode: ")
	n, _ = strconv.Atoi(fourletter.Field(out, "Node count: "))
	return mode != "" && mode != "read-only" && n >= minNodes, mode, n
}

// LogPath is the member's server.log.
func (m *Member) LogPath() string { return filepath.Join(m.Dir, "server.log") }

// notServing describes the members that do not serve (at least minNodes
// znodes), each with the end of its log, for the error of a run that
// could not start.
func (e *Ensemble) notServing(minNodes int) string {
	var b strings.Builder
	for _, m := range e.Members {
		ok, mode, n := m.Serving(minNodes)
		if ok {
			continue
		}
		fmt.Fprintf(&b, "\nmember %d (%s): mode %q, %d znodes; its log ends:\n%s", m.ID, m.ClientAddr, mode, n, LogTail(m.LogPath(), 20))
	}
	return b.String()
}

// LogTail returns the last n lines of the file at path, or why not.
func LogTail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// killGroup sends SIGKILL to the process group led by pid: the member
// and anything it started (memberProcAttr gives it a group of its own).
func killGroup(pid int) { _ = syscall.Kill(-pid, syscall.SIGKILL) }

// ZooKeeperMissing says what is missing to run ZooKeeper members (java
// and Debian's jars), or nil.
func ZooKeeperMissing() error {
	var missing []string
	if _, err := exec.LookPath("java"); err != nil {
		missing = append(missing, "java")
	}
	for _, jar := range []string{"/usr/share/java/zookeeper.jar", "/usr/share/java/slf4j-simple.jar"} {
		if _, err := os.Stat(jar); err != nil {
			missing = append(missing, jar)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("benchcluster: missing %v", missing)
	}
	return nil
}

// ProcessesUnder returns the command lines, by pid, of the processes
// (other than this one) whose command line mentions dir: every member's
// names its zoo.cfg there, so that a test can check that none outlived
// its run.
func ProcessesUnder(dir string) map[int]string {
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	out := map[int]string{}
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		if err != nil || pid == os.Getpid() {
			continue
		}
		if cmd := strings.ReplaceAll(string(b), "\x00", " "); strings.Contains(cmd, dir) {
			out[pid] = cmd
		}
	}
	return out
}
