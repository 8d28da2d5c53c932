package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/zkraft/zkraft/internal/fourletter"
	"github.com/zkraft/zkraft/internal/testport"
)

// member is one server process of an ensemble under test.
type member struct {
	id         int
	clientAddr string
	dir        string
	argv       []string
	cmd        *exec.Cmd
}

// ensemble is three members of one implementation on loopback.
type ensemble struct {
	name    string
	members []*member
}

// freePort returns a free loopback port below the ephemeral range
// (internal/testport), so a client connection cannot take it before the
// member binds.
func freePort() int {
	p, err := testport.Free()
	if err != nil {
		panic(err)
	}
	return p
}

// newEnsemble writes zoo.cfg and myid for size members; kind is "zookeeper",
// or any other name for zkraft members run from zkraftBin ("zkraft", or
// "baseline" for an A/B of two builds). All use the same tickTime,
// syncLimit and fsync on.
func newEnsemble(kind, root, zkraftBin string, size int) *ensemble {
	e := &ensemble{name: kind}
	var lines []string
	for i := 1; i <= size; i++ {
		m := &member{id: i, clientAddr: fmt.Sprintf("127.0.0.1:%d", freePort()), dir: filepath.Join(root, kind, fmt.Sprint(i))}
		lines = append(lines, fmt.Sprintf("server.%d=127.0.0.1:%d:%d;%s", i, freePort(), freePort(), m.clientAddr))
		e.members = append(e.members, m)
	}
	for _, m := range e.members {
		must(os.MkdirAll(m.dir, 0o755))
		must(os.WriteFile(filepath.Join(m.dir, "myid"), []byte(fmt.Sprintln(m.id)), 0o644))
		cfg := fmt.Sprintf("tickTime=2000\ninitLimit=10\nsyncLimit=5\ndataDir=%s\nmaxClientCnxns=0\n"+
			"4lw.commands.whitelist=*\nadmin.enableServer=false\nforceSync=yes\nsnapCount=100000\n%s\n",
			m.dir, strings.Join(lines, "\n"))
		cfgPath := filepath.Join(m.dir, "zoo.cfg")
		must(os.WriteFile(cfgPath, []byte(cfg), 0o644))
		if kind == "zookeeper" {
			m.argv = []string{"java", "-XX:-UsePerfData", "-Xms512m", "-cp", m.dir + ":/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-nop.jar",
				"org.apache.zookeeper.server.quorum.QuorumPeerMain", cfgPath}
		} else {
			m.argv = []string{zkraftBin, "server", "--config", cfgPath, "--log-level", "warn"}
		}
	}
	return e
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

func (m *member) start() {
	log, err := os.OpenFile(filepath.Join(m.dir, "server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	must(err)
	m.cmd = exec.Command(m.argv[0], m.argv[1:]...)
	m.cmd.Stdout, m.cmd.Stderr = log, log
	m.cmd.SysProcAttr = memberProcAttr()
	must(m.cmd.Start())
	go func() { _ = m.cmd.Wait(); log.Close() }()
}

func (m *member) kill() {
	if m.cmd != nil && m.cmd.Process != nil {
		_ = m.cmd.Process.Signal(syscall.SIGKILL)
		time.Sleep(100 * time.Millisecond)
	}
}

func (e *ensemble) start() {
	for _, m := range e.members {
		m.start()
	}
}

func (e *ensemble) stop() {
	for _, m := range e.members {
		m.kill()
	}
}

func (e *ensemble) servers() string {
	var addrs []string
	for _, m := range e.members {
		addrs = append(addrs, m.clientAddr)
	}
	return strings.Join(addrs, ",")
}

// waitServing waits until every member reports a mode and the leader one
// at least minNodes znodes; it returns how long that took.
func (e *ensemble) waitServing(limit time.Duration, minNodes int) (time.Duration, error) {
	start := time.Now()
	for {
		ready := true
		for _, m := range e.members {
			if ok, _, _ := m.serving(minNodes); !ok {
				ready = false
				break
			}
		}
		if ready {
			return time.Since(start), nil
		}
		if time.Since(start) > limit {
			return 0, fmt.Errorf("%s not serving after %v%s", e.name, limit, e.notServing(minNodes))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (e *ensemble) leader() *member {
	for _, m := range e.members {
		if fourletter.Field(fourletter.Ask(m.clientAddr, "srvr"), "Mode: ") == "leader" {
			return m
		}
	}
	return nil
}

// cpuTime is the CPU time (user+system) all members have used so far.
func (e *ensemble) cpuTime() time.Duration {
	var total time.Duration
	tick := 100 // USER_HZ on Linux
	for _, m := range e.members {
		if m.cmd == nil || m.cmd.Process == nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", m.cmd.Process.Pid))
		if err != nil {
			continue
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
		ut, _ := strconv.Atoi(f[11])
		st, _ := strconv.Atoi(f[12])
		total += time.Duration(ut+st) * time.Second / time.Duration(tick)
	}
	return total
}

// stealTime is the CPU time the hypervisor has given to other guests
// since boot, over all CPUs; 0 where /proc/stat is not available.
func stealTime() time.Duration {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	return parseSteal(string(b))
}

// parseSteal reads the steal column of /proc/stat's "cpu" line (in
// USER_HZ ticks); 0 when it is missing.
func parseSteal(stat string) time.Duration {
	line, _, _ := strings.Cut(stat, "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0
	}
	steal, _ := strconv.Atoi(f[8])
	return time.Duration(steal) * time.Second / 100
}

// rss is a member's resident set size in bytes: all of it (VmRSS) and its
// anonymous part (RssAnon: heap and stacks, what the process itself holds,
// as opposed to file pages it has mapped, such as bolt's mmap of the Raft
// log, which the kernel reclaims like any page cache).
func (m *member) rss() (total, anon int64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", m.cmd.Process.Pid))
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

// serving asks m (srvr) whether it serves with a quorum and at least
// minNodes znodes, and returns its mode and znode count.
func (m *member) serving(minNodes int) (ok bool, mode string, n int) {
	out := fourletter.Ask(m.clientAddr, "srvr")
	mode = fourletter.Field(out, "Mode: ")
	n, _ = strconv.Atoi(fourletter.Field(out, "Node count: "))
	return mode != "" && mode != "read-only" && n >= minNodes, mode, n
}

// notServing describes the members that do not serve (at least minNodes
// znodes), each with the end of its log, for the error of a run that
// could not start.
func (e *ensemble) notServing(minNodes int) string {
	var b strings.Builder
	for _, m := range e.members {
		ok, mode, n := m.serving(minNodes)
		if ok {
			continue
		}
		fmt.Fprintf(&b, "\nmember %d (%s): mode %q, %d znodes; its log ends:\n%s", m.id, m.clientAddr, mode, n, logTail(filepath.Join(m.dir, "server.log"), 20))
	}
	return b.String()
}

// logTail returns the last n lines of the file at path, or why not.
func logTail(path string, n int) string {
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
