// Command memprobe measures a standalone server's memory under two loads
// (issue 29): "flood", N clients pipelining getData of a 1 MB znode and
// never reading their replies (peak and final RSS, and how long another
// client waits meanwhile), "idle", N idle sessions (RSS per session), and
// "watches", N sessions each watching -nodes znodes (memory per watch).
//
//	go build -o /tmp/zkraft ./cmd/zkraft
//	go run ./scripts/memprobe -workload flood -n 8 -bin /tmp/zkraft
//	go run ./scripts/memprobe -workload idle -n 10000 -bin /tmp/zkraft
//	go run ./scripts/memprobe -workload idle -n 10000 -kind zookeeper
//	go run ./scripts/memprobe -workload watches -n 100 -nodes 10000 -bin /tmp/zkraft -pprof 127.0.0.1:6060
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime/debug"
	"sync"
	"time"

	"github.com/zkraft/zkraft/jute"
)

func main() {
	kind := flag.String("kind", "zkraft", `"zkraft" or "zookeeper" (the Debian package's jar)`)
	bin := flag.String("bin", "zkraft", "the zkraft binary")
	workload := flag.String("workload", "flood", `"flood", "idle" or "watches"`)
	n := flag.Int("n", 8, "clients")
	requests := flag.Int("requests", 2000, "getData requests per flooding client")
	nodes := flag.Int("nodes", 10000, "watches: znodes each session watches")
	hold := flag.Duration("hold", 15*time.Second, "how long the load is held")
	settle := flag.Duration("settle", 10*time.Second, "wait after the flooders close before the final RSS")
	pprofAddr := flag.String("pprof", "", "zkraft only: this --pprof-addr is given to the server, and idle also reports the heap in use and stacks after a collection")
	flag.Parse()
	// Further arguments go to the server (e.g. --pprof-addr 127.0.0.1:6060).
	debug.SetGCPercent(400)
	dir, err := os.MkdirTemp("", "memprobe")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(dir)
	extra := flag.Args()
	if *pprofAddr != "" {
		extra = append(extra, "--pprof-addr", *pprofAddr)
	}
	s, err := startServer(*kind, *bin, dir, extra)
	if err != nil {
		fail(err)
	}
	defer s.stop()
	switch *workload {
	case "flood":
		err = flood(s, *n, *requests, *hold, *settle)
	case "idle":
		err = idle(s, *n, *hold, *pprofAddr)
	case "watches":
		err = watches(s, *kind, *n, *nodes, *pprofAddr)
	default:
		err = fmt.Errorf("memprobe: unknown workload %q", *workload)
	}
	if err != nil {
		s.stop()
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}

const mib = 1 << 20

func flood(s *server, n, requests int, hold, settle time.Duration) error {
	time.Sleep(2 * time.Second) // ZooKeeper answers ruok before it takes sessions
	setup, err := connect(s.addr)
	if err != nil {
		return err
	}
	acl := []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "world", ID: "anyone"}}}
	for i, p := range []string{"/big", "/small"} {
		data := []byte("s")
		if p == "/big" {
			data = make([]byte, 1000000)
		}
		if h, err := setup.call(int32(i+1), jute.OpCreate, &jute.CreateRequest{Path: p, Data: data, ACL: acl}); err != nil || h.Err != jute.OK {
			return fmt.Errorf("memprobe: create %s: %v %v", p, h.Err, err)
		}
	}
	time.Sleep(time.Second)
	base, _ := s.mem()
	fmt.Printf("baseline RSS %.1f MiB\n", float64(base)/mib)
	var flooders []*client
	for i := 0; i < n; i++ {
		c, err := connect(s.addr)
		if err != nil {
			return err
		}
		flooders = append(flooders, c)
		go c.flood("/big", requests)
	}
	var worst time.Duration
	var failed error
	for start, xid := time.Now(), int32(10); time.Since(start) < hold; xid++ {
		t := time.Now()
		if h, err := setup.call(xid, jute.OpGetData, &jute.PathWatchRequest{Path: "/small"}); err != nil || h.Err != jute.OK {
			failed = fmt.Errorf("another client's getData: %v %v", h.Err, err)
			break
		}
		worst = max(worst, time.Since(t))
		time.Sleep(100 * time.Millisecond)
	}
	rss, hwm := s.mem()
	fmt.Printf("%d non-reading clients, %d getData of 1 MB each: RSS %.1f MiB, peak (VmHWM) %.1f MiB; another client's slowest getData %v",
		n, requests, float64(rss)/mib, float64(hwm)/mib, worst.Round(time.Millisecond))
	if failed != nil {
		fmt.Printf(" (%v)", failed)
	}
	fmt.Println()
	var wg sync.WaitGroup
	for _, c := range flooders {
		wg.Add(1)
		go func() { defer wg.Done(); c.nc.Close() }()
	}
	wg.Wait()
	time.Sleep(settle)
	rss, _ = s.mem()
	fmt.Printf("%v after they closed: RSS %.1f MiB\n", settle, float64(rss)/mib)
	return nil
}

func idle(s *server, n int, hold time.Duration, pprofAddr string) error {
	time.Sleep(2 * time.Second)
	var liveBase int64
	if pprofAddr != "" {
		var err error
		if liveBase, err = liveBytes(pprofAddr); err != nil {
			return err
		}
	}
	base, _ := s.mem()
	clients := make([]*client, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 32)
	for i := range clients {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			clients[i], errs[i] = connect(s.addr)
			if errs[i] == nil {
				go clients[i].idle(10 * time.Second)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	time.Sleep(hold)
	rss, _ := s.mem()
	fmt.Printf("%d idle sessions: RSS %.1f -> %.1f MiB, %.2f KiB per session\n",
		n, float64(base)/mib, float64(rss)/mib, float64(rss-base)/float64(n)/1024)
	if pprofAddr != "" {
		live, err := liveBytes(pprofAddr)
		if err != nil {
			return err
		}
		fmt.Printf("after a collection: heap in use + stacks %.1f -> %.1f MiB, %.2f KiB per session\n",
			float64(liveBase)/mib, float64(live)/mib, float64(live-liveBase)/float64(n)/1024)
	}
	for _, c := range clients {
		c.nc.Close()
	}
	return nil
}
