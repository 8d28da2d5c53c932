//go:build linux

package listeners

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/internal/testing/testenv"
	"github.com/zkraft/zkraft/internal/testing/testport"
)

const (
	// fileLimit is the open file limit the server runs under (ulimit -n:
	// soft and hard, so that nothing raises it).
	fileLimit = 1024
	// perPort is how many connections the flood opens on each port: more
	// than the file limit, on every one.
	perPort = fileLimit + 100
	// floodFrom is where the flood comes from: another loopback address
	// than the ZooKeeper client's (127.0.0.1), so that the per-address
	// caps, which the flood fills, leave that client alone.
	floodFrom = "127.0.0.2"
	// idleMs is admin.idleTimeout and metricsProvider.idleTimeout,
	// lowered from 30 s so that the test runs in seconds. The client
	// port's first-frame timeout (10 s) and the member port's header
	// timeout (5 s) are the defaults.
	idleMs = 2000
	// held is how long a flood connection must have stayed open before
	// the server closed it to count as admitted and then dropped by a
	// timeout (a refused one is closed at once).
	held = time.Second
)

// TestFloodEveryListener floods the AdminServer, metrics, member and
// client ports of a zkraft process running under a 1024 file limit with
// more than 1024 connections each: HTTP requests declaring a 100-byte body
// that never comes (the audit's POST /console/api/login and GET
// /commands/ruok), and connections that send nothing. Before, the
// AdminServer held them forever, the process ran out of file descriptors,
// the next accept on the client port failed with EMFILE and zkraft exited.
// Now the process stays up, a ZooKeeper client connects and writes during
// and after the flood, every flood connection is closed by a cap at once
// or by a timeout, refusals are counted in zk_connection_rejected and
// logged once per interval, not once each.
func TestFloodEveryListener(t *testing.T) {
	requireFiles(t, 4*perPort+512)
	srv := startServer(t)
	// The line comes once every listener is up, which may be after the
	// ports the server was seen serving on (15 ms after, in one run).
	for deadline := time.Now().Add(10 * time.Second); !srv.logHas(`open file limit raised to the hard limit`, `"limit": 1024`); {
		if time.Now().After(deadline) {
			t.Errorf("the start-up log does not say the file limit and the caps:\n%s", srv.logTail(20))
			break
		}
		time.Sleep(20 * time.Millisecond)
	}

	start := time.Now()
	deadline := start.Add(35 * time.Second) // every flood connection is closed by then
	floods := []*flood{
		startFlood("admin", srv.admin, deadline, func(i int) string {
			if i%2 == 0 {
				return "POST /console/api/login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n"
			}
			return "GET /commands/ruok HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n"
		}),
		startFlood("metrics", srv.metrics, deadline, func(int) string {
			return "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n"
		}),
		startFlood("member", srv.member, deadline, func(int) string { return "" }),
		startFlood("client", srv.client, deadline, func(int) string { return "" }),
	}
	for _, f := range floods {
		f.dialed.Wait()
	}
	t.Logf("flood: %d connections opened in %v", 4*perPort, time.Since(start).Round(time.Millisecond))
	srv.mustRun(t)

	// During the flood (its admitted connections are still open).
	create(t, srv, "/during")
	if n := rejected(t, srv); n <= 0 {
		t.Errorf("zk_connection_rejected = %d during the flood, want > 0", n)
	}
	srv.mustRun(t)

	for _, f := range floods {
		f.watching.Wait()
	}
	t.Logf("flood: every connection ended after %v", time.Since(start).Round(time.Millisecond))
	srv.mustRun(t)
	for _, f := range floods {
		f.mu.Lock()
		t.Logf("%s: %d opened (%d dials failed: %v), %d closed at once, %d held then dropped, %d still open",
			f.name, f.opened, f.dialErrs, f.firstDialErr, f.quick, f.held, f.open)
		if f.opened <= fileLimit {
			t.Errorf("%s: the flood opened %d connections, want more than %d", f.name, f.opened, fileLimit)
		}
		if f.open > 0 {
			t.Errorf("%s: %d flood connections still open %v after the flood began", f.name, f.open, deadline.Sub(start))
		}
		if f.held == 0 {
			t.Errorf("%s: no flood connection was admitted and then dropped by a timeout", f.name)
		}
		f.mu.Unlock()
	}

	// After the flood.
	create(t, srv, "/after")
	n := rejected(t, srv)
	if n <= 0 {
		t.Errorf("zk_connection_rejected = %d after the flood, want > 0", n)
	}
	if body := httpGet(t, "http://"+srv.admin+"/commands/ruok"); !strings.Contains(body, `"error" : null`) {
		t.Errorf("the AdminServer's ruok after the flood: %q", body)
	}
	if body := httpGet(t, "http://"+srv.metrics+"/metrics"); !strings.Contains(body, "\nconnection_rejected ") {
		t.Errorf("/metrics after the flood has no connection_rejected")
	}
	// Refusals are logged once per interval, not once each.
	lines := srv.logCount("connection refused: too many connections", "too many connections from client")
	t.Logf("%d connections refused, %d log lines about them", n, lines)
	if lines > 40 {
		t.Errorf("%d log lines about %d refused connections: a log storm", lines, n)
	}
	srv.mustRun(t)
}

// requireFiles makes sure this test process may open n files (Go raises
// the soft limit to the hard one at start).
func requireFiles(t *testing.T, n uint64) {
	t.Helper()
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		t.Fatal(err)
	}
	if r.Cur < n {
		testenv.Require(t, fmt.Errorf("the flood needs %d open files in the test process; the limit is %d (hard %d)", n, r.Cur, r.Max))
	}
}

// server is a zkraft process under test.
type server struct {
	cmd     *exec.Cmd
	logPath string
	exited  chan struct{}
	werr    error // set before exited is closed

	client, admin, metrics, member string // host:port
}

// startServer starts zkraft under the low file limit, a member of a
// two-member ensemble whose other member (an observer) never starts: it
// leads alone, and has a member port to flood.
func startServer(t *testing.T) *server {
	t.Helper()
	dir := t.TempDir()
	var ports [7]int
	for i := range ports {
		p, err := testport.Free()
		if err != nil {
			t.Fatal(err)
		}
		ports[i] = p
	}
	s := &server{
		logPath: filepath.Join(dir, "zkraft.log"),
		exited:  make(chan struct{}),
		client:  fmt.Sprintf("127.0.0.1:%d", ports[0]),
		admin:   fmt.Sprintf("127.0.0.1:%d", ports[1]),
		metrics: fmt.Sprintf("127.0.0.1:%d", ports[2]),
		member:  fmt.Sprintf("127.0.0.1:%d", ports[3]),
	}
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(data, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "myid"), []byte("1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "zoo.cfg")
	text := fmt.Sprintf(`tickTime=200
initLimit=10
syncLimit=5
dataDir=%s
clientPortAddress=127.0.0.1
clientPort=%d
admin.serverAddress=127.0.0.1
admin.serverPort=%d
admin.idleTimeout=%d
metricsProvider.httpHost=127.0.0.1
metricsProvider.httpPort=%d
metricsProvider.idleTimeout=%d
4lw.commands.whitelist=*
server.1=127.0.0.1:%d:%d
server.2=127.0.0.1:%d:%d:observer
`, data, ports[0], ports[1], idleMs, ports[2], idleMs, ports[3], ports[4], ports[5], ports[6])
	if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(s.logPath)
	if err != nil {
		t.Fatal(err)
	}
	// ulimit -n sets the soft and the hard limit, so Go's runtime cannot
	// raise it in the server.
	s.cmd = exec.Command("sh", "-c", fmt.Sprintf(`ulimit -n %d || exit 97; exec "$0" server --config "$1"`, fileLimit), zkraftBin, cfg)
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	// Its own process group, killed whole in Cleanup; and it dies with
	// the test binary if that is killed first.
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := s.cmd.Start(); err != nil {
		logf.Close()
		t.Fatal(err)
	}
	go func() {
		s.werr = s.cmd.Wait()
		close(s.exited)
	}()
	t.Cleanup(func() {
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		select {
		case <-s.exited:
		case <-time.After(10 * time.Second):
			t.Errorf("zkraft (pid %d) did not die after SIGKILL", s.cmd.Process.Pid)
		}
		logf.Close()
		if t.Failed() {
			t.Logf("zkraft's log, last lines:\n%s", s.logTail(60))
		}
	})
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		s.mustRun(t)
		if out, err := fourLetter(s.client, "ruok"); err == nil && out == "imok" {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("zkraft does not answer ruok after 30 s:\n%s", s.logTail(40))
		}
	}
}

// mustRun fails the test at once if the process exited.
func (s *server) mustRun(t *testing.T) {
	t.Helper()
	select {
	case <-s.exited:
		t.Fatalf("zkraft exited (%v); its log, last lines:\n%s", s.werr, s.logTail(30))
	default:
	}
}

func (s *server) log() string {
	b, _ := os.ReadFile(s.logPath)
	return string(b)
}

func (s *server) logTail(n int) string {
	lines := strings.Split(strings.TrimRight(s.log(), "\n"), "\n")
	return strings.Join(lines[max(len(lines)-n, 0):], "\n")
}

// logHas reports whether one line of the log holds every part.
func (s *server) logHas(parts ...string) bool {
	for _, line := range strings.Split(s.log(), "\n") {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			return true
		}
	}
	return false
}

// logCount counts the log's lines holding any of texts.
func (s *server) logCount(texts ...string) int {
	n := 0
	for _, line := range strings.Split(s.log(), "\n") {
		for _, text := range texts {
			if strings.Contains(line, text) {
				n++
				break
			}
		}
	}
	return n
}

// fourLetter sends a four-letter word to the client port at addr and
// returns the answer.
func fourLetter(addr, word string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, word); err != nil {
		return "", err
	}
	b, err := io.ReadAll(c)
	return string(b), err
}

// rejected is mntr's zk_connection_rejected.
func rejected(t *testing.T, s *server) int64 {
	t.Helper()
	out, err := fourLetter(s.client, "mntr")
	if err != nil {
		t.Fatalf("mntr: %v", err)
	}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "zk_connection_rejected\t"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatalf("zk_connection_rejected %q: %v", v, err)
			}
			return n
		}
	}
	t.Fatalf("mntr has no zk_connection_rejected:\n%s", out)
	return 0
}

// create makes path with a fresh go-zookeeper session, retrying for up to
// 20 s (a session needs the member to lead).
func create(t *testing.T, s *server, path string) {
	t.Helper()
	c, _, err := zk.Connect([]string{s.client}, 10*time.Second, zk.WithLogInfo(false), zk.WithLogger(quiet{}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var last error
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		s.mustRun(t)
		_, last = c.Create(path, []byte("x"), 0, zk.WorldACL(zk.PermAll))
		if last == nil || errors.Is(last, zk.ErrNodeExists) {
			return
		}
	}
	t.Fatalf("create %s: %v", path, last)
}

// quiet is a go-zookeeper logger that says nothing.
type quiet struct{}

func (quiet) Printf(string, ...any) {}

func httpGet(t *testing.T, url string) string {
	t.Helper()
	hc := &http.Client{Timeout: 10 * time.Second}
	resp, err := hc.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return string(b)
}

// flood is one port's flood: perPort connections from floodFrom, each
// sending its payload and then nothing, watched until the server closes
// them.
type flood struct {
	name     string
	dialed   sync.WaitGroup // done once every connection is dialed
	watching sync.WaitGroup // done once every connection has ended

	mu           sync.Mutex
	opened       int
	dialErrs     int
	firstDialErr error
	quick        int // closed by the server within held: refused at once
	held         int // closed by the server after held: admitted, then timed out
	open         int // still open at the deadline
}

// startFlood opens perPort connections to addr in the background, 16 at
// a time; payload(i) is what the i-th sends. Each is watched until the
// server closes it or deadline passes.
func startFlood(name, addr string, deadline time.Time, payload func(i int) string) *flood {
	f := &flood{name: name}
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(floodFrom)}, Timeout: 5 * time.Second}
	var next atomic.Int64
	const dialers = 16
	f.dialed.Add(dialers)
	for range dialers {
		go func() {
			defer f.dialed.Done()
			for i := int(next.Add(1)) - 1; i < perPort; i = int(next.Add(1)) - 1 {
				c, err := d.Dial("tcp", addr)
				if err != nil {
					f.mu.Lock()
					if f.dialErrs++; f.firstDialErr == nil {
						f.firstDialErr = err
					}
					f.mu.Unlock()
					continue
				}
				opened := time.Now()
				if p := payload(i); p != "" {
					_ = c.SetWriteDeadline(opened.Add(5 * time.Second))
					_, _ = io.WriteString(c, p) // a refused connection may be closed already
				}
				f.mu.Lock()
				f.opened++
				f.mu.Unlock()
				f.watching.Add(1)
				go f.watch(c, opened, deadline)
			}
		}()
	}
	return f
}

// watch reads c (answers, if any) until the server closes it or deadline
// passes, and files it by how long it stayed open.
func (f *flood) watch(c net.Conn, opened, deadline time.Time) {
	defer f.watching.Done()
	defer c.Close()
	_ = c.SetReadDeadline(deadline)
	_, err := io.Copy(io.Discard, c)
	lasted := time.Since(opened)
	var ne net.Error
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		f.open++
	case lasted >= held:
		f.held++
	default:
		f.quick++
	}
}
