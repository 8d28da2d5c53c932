package main

import (
	"bufio"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/zkraft/zkraft/internal/cli/fourletter"
	"github.com/zkraft/zkraft/jute"
)

// watches has n sessions each set an exists watch on every one of nodes
// znodes (1,000,000 watches with -n 100 -nodes 10000), checks the count
// with wchs, and prints RSS and the live heap after a full collection
// before and after, per watch: zkraft's heap from its profile (-pprof),
// ZooKeeper's through jcmd, since a JVM's RSS shows the heap it reserved
// as much as what the watches use.
func watches(s *server, kind string, n, nodes int, pprofAddr string) error {
	time.Sleep(2 * time.Second) // ZooKeeper answers ruok before it takes sessions
	c, err := connect(s.addr)
	if err != nil {
		return err
	}
	defer c.nc.Close()
	creates := []jute.Record{&jute.CreateRequest{Path: "/w", ACL: openACL}}
	for i := 0; i < nodes; i++ {
		creates = append(creates, &jute.CreateRequest{Path: fmt.Sprintf("/w/n%d", i), Data: []byte("v"), ACL: openACL})
	}
	if err := c.pipeline(jute.OpCreate, creates); err != nil {
		return err
	}
	time.Sleep(3 * time.Second)
	heap := func() int64 {
		if kind == "zookeeper" {
			return jvmHeapAfterGC(s.cmd.Process.Pid)
		}
		if pprofAddr == "" {
			return 0
		}
		v, _ := liveBytes(pprofAddr)
		return v
	}
	heapBase := heap()
	base, _ := s.mem()
	exists := make([]jute.Record, nodes)
	for i := range exists {
		exists[i] = &jute.PathWatchRequest{Path: fmt.Sprintf("/w/n%d", i), Watch: true}
	}
	clients := make([]*client, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i := range clients {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if clients[i], errs[i] = connect(s.addr); errs[i] == nil {
				if errs[i] = clients[i].pipeline(jute.OpExists, exists); errs[i] == nil {
					go clients[i].idle(10 * time.Second)
				}
			}
		}()
	}
	wg.Wait()
	defer func() {
		for _, c := range clients {
			if c != nil {
				c.nc.Close()
			}
		}
	}()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	time.Sleep(3 * time.Second)
	if got, want := fourletter.Field(fourletter.Ask(s.addr, "wchs"), "Total watches:"), strconv.Itoa(n*nodes); got != want {
		return fmt.Errorf("memprobe: wchs reports %q watches, want %s", got, want)
	}
	rss, _ := s.mem()
	w := float64(n * nodes)
	fmt.Printf("%d watches: RSS %.1f -> %.1f MiB, %.0f bytes per watch\n", n*nodes, float64(base)/mib, float64(rss)/mib, float64(rss-base)/w)
	if after := heap(); heapBase > 0 && after > 0 {
		fmt.Printf("after a collection: live heap %.1f -> %.1f MiB, %.0f bytes per watch\n", float64(heapBase)/mib, float64(after)/mib, float64(after-heapBase)/w)
	}
	return nil
}

var openACL = []jute.ACL{{Perms: 31, ID: jute.Id{Scheme: "world", ID: "anyone"}}}

// pipeline sends one request of op per body, all at once, and reads every
// reply, failing on any error reply.
func (c *client) pipeline(op jute.Op, bodies []jute.Record) error {
	done := make(chan error, 1)
	go func() {
		_ = c.nc.SetReadDeadline(time.Now().Add(5 * time.Minute))
		defer c.nc.SetReadDeadline(time.Time{})
		for range bodies {
			f, err := jute.ReadFrame(c.br, nil, 1<<20)
			if err != nil {
				done <- fmt.Errorf("memprobe: read: %w", err)
				return
			}
			var h jute.ReplyHeader
			if err := h.Decode(jute.NewReader(f)); err != nil || h.Err != jute.OK {
				done <- fmt.Errorf("memprobe: xid %d: error %d %v", h.Xid, h.Err, err)
				return
			}
		}
		done <- nil
	}()
	bw := bufio.NewWriterSize(c.nc, 64<<10)
	var w jute.Writer
	_ = c.nc.SetWriteDeadline(time.Now().Add(5 * time.Minute))
	for i, b := range bodies {
		w.Reset()
		at := jute.BeginFrame(&w)
		(&jute.RequestHeader{Xid: int32(i + 1), Type: op}).Encode(&w)
		b.Encode(&w)
		jute.EndFrame(&w, at)
		if _, err := bw.Write(w.Buf); err != nil {
			return fmt.Errorf("memprobe: write: %w", err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("memprobe: write: %w", err)
	}
	return <-done
}

var jvmUsedHeap = regexp.MustCompile(`used (\d+)K`)

// jvmHeapAfterGC is a JVM's used heap in bytes after a full GC (jcmd), 0
// if it cannot be read.
func jvmHeapAfterGC(pid int) int64 {
	p := strconv.Itoa(pid)
	_ = exec.Command("jcmd", p, "GC.run").Run()
	out, _ := exec.Command("jcmd", p, "GC.heap_info").Output()
	m := jvmUsedHeap.FindStringSubmatch(strings.TrimSpace(string(out)))
	if m == nil {
		return 0
	}
	v, _ := strconv.ParseInt(m[1], 10, 64)
	return v << 10
}
