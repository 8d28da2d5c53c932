// Command watchmem measures what a server pays in memory for watches:
// it starts a standalone zkraft and a standalone Apache ZooKeeper side by
// side, creates -nodes znodes, has -sessions sessions each set an exists
// watch on every one of them (1,000,000 watches by default), checks the
// count with the wchs four-letter word, and prints each server's resident
// memory before and after, per watch, and the live heap after a full GC
// (ZooKeeper's through jcmd, zkraft's from its heap profile), since a
// JVM's RSS reflects the heap it has reserved as much as what the watches
// use.
//
//	go run ./scripts/watchmem -zkraft bin/zkraft
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/zkraft/zkraft/internal/fourletter"
	"github.com/zkraft/zkraft/jute"
)

func main() {
	bin := flag.String("zkraft", "bin/zkraft", "zkraft binary")
	nodes := flag.Int("nodes", 10000, "znodes to watch")
	sessions := flag.Int("sessions", 100, "sessions, each watching every znode")
	skipZK := flag.Bool("no-zookeeper", false, "measure zkraft only")
	flag.Parse()
	root, err := os.MkdirTemp("", "watchmem")
	must(err)
	defer func() {
		if os.Getenv("WATCHMEM_KEEP") == "" {
			os.RemoveAll(root)
		}
	}()
	servers := []*server{newServer("zkraft", root, *bin)}
	if !*skipZK {
		servers = append(servers, newServer("zookeeper", root, ""))
	}
	fmt.Printf("| server | RSS before | RSS with %d watches | per watch | heap after GC before → after |\n|---|---|---|---|---|\n", *nodes**sessions)
	for _, s := range servers {
		s.start()
		row, err := measure(s, *nodes, *sessions)
		s.stop()
		must(err)
		fmt.Println(row)
	}
}

// server is one standalone server process.
type server struct {
	name, addr, dir string
	pprof           string // zkraft's pprof address
	argv            []string
	cmd             *exec.Cmd
}

func newServer(kind, root, bin string) *server {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(err)
	addr := l.Addr().String()
	l.Close()
	s := &server{name: kind, addr: addr, dir: filepath.Join(root, kind)}
	must(os.MkdirAll(s.dir, 0o700))
	_, port, _ := strings.Cut(addr, ":")
	cfg := filepath.Join(s.dir, "zoo.cfg")
	must(os.WriteFile(cfg, []byte(fmt.Sprintf("tickTime=2000\ndataDir=%s\nclientPort=%s\nclientPortAddress=127.0.0.1\nmaxClientCnxns=0\nmaxSessionTimeout=600000\n4lw.commands.whitelist=*\nadmin.enableServer=false\n", s.dir, port)), 0o600))
	if kind == "zookeeper" {
		s.argv = []string{"java", "-XX:-UsePerfData", "-cp", "/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-simple.jar",
			"org.apache.zookeeper.server.ZooKeeperServerMain", cfg}
	} else {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		must(err)
		s.pprof = l.Addr().String()
		l.Close()
		s.argv = []string{bin, "server", "--config", cfg, "--log-level", "warn", "--pprof-addr", s.pprof}
	}
	return s
}

func (s *server) start() {
	log, err := os.Create(filepath.Join(s.dir, "server.log"))
	must(err)
	s.cmd = exec.Command(s.argv[0], s.argv[1:]...)
	s.cmd.Stdout, s.cmd.Stderr = log, log
	must(s.cmd.Start())
	deadline := time.Now().Add(time.Minute)
	for fourletter.Field(fourletter.Ask(s.addr, "srvr"), "Mode:") == "" {
		if time.Now().After(deadline) {
			must(fmt.Errorf("%s not serving on %s", s.name, s.addr))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (s *server) stop() { _ = s.cmd.Process.Kill(); _ = s.cmd.Wait() }

func measure(s *server, nodes, sessions int) (string, error) {
	c, err := dial(s.addr)
	if err != nil {
		return "", err
	}
	reqs := []request{{jute.OpCreate, &jute.CreateRequest{Path: "/w", ACL: open}}}
	for i := 0; i < nodes; i++ {
		reqs = append(reqs, request{jute.OpCreate, &jute.CreateRequest{Path: fmt.Sprintf("/w/n%d", i), Data: []byte("v"), ACL: open}})
	}
	if err := c.pipeline(reqs); err != nil {
		return "", err
	}
	time.Sleep(3 * time.Second)
	heapBefore := s.heapAfterGC()
	before := rss(s.cmd.Process.Pid)
	conns := make([]*rawConn, sessions)
	var wg sync.WaitGroup
	errs := make(chan error, sessions)
	watches := make([]request, nodes)
	for i := range watches {
		watches[i] = request{jute.OpExists, &jute.PathWatchRequest{Path: fmt.Sprintf("/w/n%d", i), Watch: true}}
	}
	for i := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := dial(s.addr)
			if err == nil {
				err = c.pipeline(watches)
			}
			conns[i] = c
			errs <- err
		}()
		if i%8 == 7 {
			wg.Wait()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return "", err
		}
	}
	time.Sleep(3 * time.Second)
	total := fourletter.Field(fourletter.Ask(s.addr, "wchs"), "Total watches:")
	if want := strconv.Itoa(nodes * sessions); strings.TrimSpace(total) != want {
		return "", fmt.Errorf("%s: wchs reports %q watches, want %s", s.name, total, want)
	}
	after := rss(s.cmd.Process.Pid)
	heapAfter := s.heapAfterGC()
	n := float64(nodes * sessions)
	heap := "—"
	if heapBefore > 0 && heapAfter > 0 {
		heap = fmt.Sprintf("%.1f → %.1f MiB (%.0f bytes per watch)", float64(heapBefore)/1024, float64(heapAfter)/1024, float64(heapAfter-heapBefore)*1024/n)
	}
	for _, c := range conns {
		c.nc.Close()
	}
	return fmt.Sprintf("| %s | %.1f MiB | %.1f MiB | %.0f bytes | %s |", s.name, float64(before)/1024, float64(after)/1024, float64(after-before)*1024/n, heap), nil
}

var (
	usedHeap  = regexp.MustCompile(`used (\d+)K`)
	heapAlloc = regexp.MustCompile(`# HeapAlloc = (\d+)`)
)

// heapAfterGC is the live heap in KiB after a full GC: a JVM's used heap
// (jcmd), or Go's HeapAlloc from zkraft's heap profile taken with gc=1.
func (s *server) heapAfterGC() int64 {
	if s.pprof != "" {
		resp, err := http.Get("http://" + s.pprof + "/debug/pprof/heap?gc=1&debug=1")
		if err != nil {
			return 0
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		m := heapAlloc.FindSubmatch(b)
		if m == nil {
			return 0
		}
		v, _ := strconv.ParseInt(string(m[1]), 10, 64)
		return v / 1024
	}
	pid := strconv.Itoa(s.cmd.Process.Pid)
	_ = exec.Command("jcmd", pid, "GC.run").Run()
	out, _ := exec.Command("jcmd", pid, "GC.heap_info").Output()
	m := usedHeap.FindSubmatch(out)
	if m == nil {
		return 0
	}
	v, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return v
}

// rss is a process's resident set in KiB.
func rss(pid int) int64 {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			return n
		}
	}
	return 0
}

var open = []jute.ACL{{Perms: 31, ID: jute.Id{Scheme: "world", ID: "anyone"}}}

type request struct {
	op   jute.Op
	body jute.Record
}

// rawConn is a session on a plain socket.
type rawConn struct {
	nc net.Conn
	br *bufio.Reader
}

func dial(addr string) (*rawConn, error) {
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	var w jute.Writer
	at := jute.BeginFrame(&w)
	(&jute.ConnectRequest{TimeOut: 600000, Passwd: make([]byte, 16)}).Encode(&w)
	jute.EndFrame(&w, at)
	if _, err := nc.Write(w.Buf); err != nil {
		return nil, err
	}
	c := &rawConn{nc: nc, br: bufio.NewReader(nc)}
	if _, err := jute.ReadFrame(c.br, nil, 1<<16); err != nil {
		return nil, err
	}
	return c, nil
}

// pipeline sends every request, in batches, reading replies as they come,
// and fails on any error reply.
func (c *rawConn) pipeline(reqs []request) error {
	done := make(chan error, 1)
	go func() {
		for range reqs {
			b, err := jute.ReadFrame(c.br, nil, 1<<20)
			if err != nil {
				done <- err
				return
			}
			var h jute.ReplyHeader
			if err := h.Decode(jute.NewReader(b)); err != nil {
				done <- err
				return
			}
			if h.Err != jute.OK {
				done <- fmt.Errorf("xid %d: error %d", h.Xid, h.Err)
				return
			}
		}
		done <- nil
	}()
	bw := bufio.NewWriterSize(c.nc, 64<<10)
	var w jute.Writer
	for i, r := range reqs {
		w.Reset()
		at := jute.BeginFrame(&w)
		(&jute.RequestHeader{Xid: int32(i + 1), Type: r.op}).Encode(&w)
		r.body.Encode(&w)
		jute.EndFrame(&w, at)
		if _, err := bw.Write(w.Buf); err != nil {
			return err
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return <-done
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "watchmem:", err)
		os.Exit(1)
	}
}
