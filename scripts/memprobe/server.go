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

	"github.com/zkraft/zkraft/internal/cli/fourletter"
	"github.com/zkraft/zkraft/internal/testing/testport"
)

// server is one standalone server process under measurement.
type server struct {
	addr string
	cmd  *exec.Cmd
}

// startServer starts a standalone member of kind ("zookeeper", or zkraft
// run from bin) in dir and waits until it answers ruok.
func startServer(kind, bin, dir string, extra []string) (*server, error) {
	port, err := testport.Free()
	if err != nil {
		return nil, fmt.Errorf("memprobe: free port: %w", err)
	}
	s := &server{addr: fmt.Sprintf("127.0.0.1:%d", port)}
	cfg := fmt.Sprintf("tickTime=2000\ndataDir=%s\nclientPort=%d\nclientPortAddress=127.0.0.1\n"+
		"maxClientCnxns=0\n4lw.commands.whitelist=*\nadmin.enableServer=false\n", dir, port)
	cfgPath := filepath.Join(dir, "zoo.cfg")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		return nil, fmt.Errorf("memprobe: %w", err)
	}
	var argv []string
	if kind == "zookeeper" {
		argv = []string{"java", "-XX:-UsePerfData", "-cp", "/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-api.jar",
			"org.apache.zookeeper.server.ZooKeeperServerMain", cfgPath}
	} else {
		argv = []string{bin, "server", "--config", cfgPath, "--log-level", "warn"}
	}
	argv = append(argv, extra...)
	log, err := os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		return nil, fmt.Errorf("memprobe: %w", err)
	}
	s.cmd = exec.Command(argv[0], argv[1:]...)
	s.cmd.Stdout, s.cmd.Stderr = log, log
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("memprobe: start %s: %w", argv[0], err)
	}
	go func() { _ = s.cmd.Wait(); log.Close() }()
	for start := time.Now(); fourletter.Ask(s.addr, "ruok") != "imok"; {
		if time.Since(start) > 60*time.Second {
			s.stop()
			return nil, fmt.Errorf("memprobe: %s not serving after a minute (see %s)", kind, log.Name())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return s, nil
}

func (s *server) stop() { _ = s.cmd.Process.Signal(syscall.SIGKILL) }

// mem returns the process's VmRSS and VmHWM (peak RSS) in bytes.
func (s *server) mem() (rss, hwm int64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		return 0, 0
	}
	kb := func(field string) int64 {
		f := strings.Fields(fourletter.Field(string(b), field))
		if len(f) == 0 {
			return 0
		}
		v, _ := strconv.ParseInt(f[0], 10, 64)
		return v << 10
	}
	return kb("VmRSS:"), kb("VmHWM:")
}
