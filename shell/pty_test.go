package shell

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/zkraft/zkraft/internal/testing/tcpproxy"
)

// ptySession drives "zkraft shell" on a pseudo-terminal, as a user would.
// github.com/creack/pty is the standard Go pty package; line editing is only
// enabled on a real terminal, so it cannot be tested through pipes.
type ptySession struct {
	t    *testing.T
	cmd  *exec.Cmd
	tty  *os.File
	mu   sync.Mutex
	buf  bytes.Buffer
	seen int // offset up to which expect has consumed output
	done chan struct{}
}

func startPTY(t *testing.T, addr, histFile string) *ptySession {
	t.Helper()
	cmd := exec.Command(os.Args[0], "shell", "-server", addr, "--history-file", histFile)
	cmd.Env = append(os.Environ(), execEnv+"=1", "TZ=UTC", "TERM=xterm")
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 200})
	if err != nil {
		t.Fatalf("start on pty: %v", err)
	}
	s := &ptySession{t: t, cmd: cmd, tty: tty, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		b := make([]byte, 4096)
		for {
			n, err := tty.Read(b)
			s.mu.Lock()
			s.buf.Write(b[:n])
			s.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		tty.Close()
	})
	return s
}

// expect waits until want appears in output not yet consumed.
func (s *ptySession) expect(want string) {
	s.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		s.mu.Lock()
		out := s.buf.String()
		s.mu.Unlock()
		if i := strings.Index(out[s.seen:], want); i >= 0 {
			s.seen += i + len(want)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.t.Fatalf("timed out waiting for %q; output after consumed part:\n%q", want, s.buf.String()[s.seen:])
}

func (s *ptySession) send(keys string) {
	s.t.Helper()
	if _, err := s.tty.Write([]byte(keys)); err != nil {
		s.t.Fatalf("write to pty: %v", err)
	}
}

// wait waits for the shell to exit and returns its status.
func (s *ptySession) wait() int {
	s.t.Helper()
	errc := make(chan error, 1)
	go func() { errc <- s.cmd.Wait() }()
	select {
	case <-errc:
		return s.cmd.ProcessState.ExitCode()
	case <-time.After(15 * time.Second):
		s.t.Fatal("shell did not exit")
		return -1
	}
}

func TestInteractivePTY(t *testing.T) {
	addr := testServer(t)
	resetRoot(t, addr, "/t_pty")
	t.Cleanup(func() { resetRoot(t, addr, "/t_pty") })
	hist := filepath.Join(t.TempDir(), "history")
	proxy := tcpproxy.Start(t, addr)

	s := startPTY(t, proxy.Addr(), hist)
	s.expect("Welcome to ZooKeeper!")
	s.expect("JLine support is enabled")
	s.expect("[zk: " + proxy.Addr() + "(")
	s.expect(") 0] ")
	s.send("create /t_pty\r")
	s.expect("Created /t_pty")
	s.expect("[zk: " + proxy.Addr() + "(CONNECTED) 1] ")
	s.send("create /t_pty/alpha-node 1\r")
	s.expect("Created /t_pty/alpha-node")
	s.expect("(CONNECTED) 2] ")

	// Command completion: "getAl<TAB>" has one match.
	s.send("getAl\t")
	s.expect("getAllChildrenNumber ")
	s.send("/t_pty\r")
	s.expect("\n1\r\n")
	s.expect("(CONNECTED) 3] ")

	// Path completion asks the server for the children of /t_pty.
	s.send("get /t_pty/al\t")
	s.expect("get /t_pty/alpha-node")
	s.send("\r")
	s.expect("\n1\r\n")
	s.expect("(CONNECTED) 4] ")

	// Connection loss and recovery are announced plainly, besides zkCli's
	// WATCHER:: events.
	// The prompt is printed again after such asynchronous output.
	proxy.Cut()
	s.expect("Connection to " + proxy.Addr() + " lost; reconnecting...")
	s.expect("WatchedEvent state:Disconnected type:None path:null")
	s.expect("(CONNECTING) 4] ")
	s.expect("Reconnected to " + proxy.Addr() + " (session 0x")
	s.expect("WatchedEvent state:SyncConnected type:None path:null")
	s.expect("(CONNECTED) 4] ")

	// History: Up recalls the previous line.
	s.send("\x1b[A")
	s.expect("get /t_pty/alpha-node")
	s.send("\x15") // Ctrl-U clears the line
	s.send("quit\r")
	if code := s.wait(); code != 0 {
		t.Errorf("quit: exit %d", code)
	}

	b, err := os.ReadFile(hist)
	if err != nil {
		t.Fatalf("history file: %v", err)
	}
	for _, want := range []string{"create /t_pty", "getAllChildrenNumber /t_pty", "get /t_pty/alpha-node", "quit"} {
		if !strings.Contains(string(b), want+"\n") {
			t.Errorf("history file lacks %q:\n%s", want, b)
		}
	}

	// A new session sees the persisted history.
	s2 := startPTY(t, addr, hist)
	s2.expect(") 0] ")
	s2.send("\x1b[A")
	s2.expect("quit")
	s2.send("\x1b[A")
	s2.expect("get /t_pty/alpha-node")
	s2.send("\r")
	s2.expect("\n1\r\n")
	s2.send("\x04") // Ctrl-D on an empty line exits
	if code := s2.wait(); code != 0 {
		t.Errorf("ctrl-d: exit %d", code)
	}
}
