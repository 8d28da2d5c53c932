// Command loopbackfloor measures what a benchmark workload's message
// pattern costs on this machine with no coordination service at all: three
// minimal echo server processes on loopback (each writes back whatever it
// reads) and one client, reporting the CPU time of the servers and of the
// client per round or cycle: a lower bound for any server written on the
// same kernel.
//
// -pattern fanout (the default) is the arm phase of a watch fan-out round:
// the client holds -conns connections spread over the servers, sends one
// small frame on every connection and waits for every echo, round after
// round (100 getData with a watch on 100 sessions).
//
// -pattern churn is an ephemeral-churn cycle without the replicated writes:
// -workers clients each dial a server, exchange one frame (the handshake),
// then send -frames frames in one write and wait for their echo (the
// creates and the closeSession), and close the connection, cycle after
// cycle.
//
// -pattern fsync has no servers: it appends -size bytes to a file in -dir
// and fdatasyncs it, over and over, and reports the wall and CPU time of
// one such group commit (each member of an ensemble pays one per batch of
// writes it logs).
//
//	go run ./scripts/loopbackfloor -conns 100 -duration 5s
//	go run ./scripts/loopbackfloor -pattern churn -workers 16 -frames 5
//	go run ./scripts/loopbackfloor -pattern fsync -size 2000 -dir .
package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

func main() {
	serve := flag.String("serve", "", "internal: run one echo server on this address")
	pattern := flag.String("pattern", "fanout", "message pattern: fanout, churn or fsync")
	conns := flag.Int("conns", 100, "fanout: client connections (spread over the three servers)")
	workers := flag.Int("workers", 16, "churn: concurrent workers")
	frames := flag.Int("frames", 5, "churn: frames sent in one write after the handshake")
	size := flag.Int("size", 64, "bytes per message (fsync: per write)")
	dir := flag.String("dir", os.TempDir(), "fsync: directory of the file written")
	dur := flag.Duration("duration", 5*time.Second, "measured time")
	base := flag.Int("port", 35001, "first of the three server ports")
	flag.Parse()
	var err error
	switch {
	case *serve != "":
		err = echo(*serve)
	case *pattern == "fanout":
		err = withServers(*base, func(addrs []string) (func(), error) { return fanout(addrs, *conns, *size) }, *dur, "round")
	case *pattern == "churn":
		err = withServers(*base, func(addrs []string) (func(), error) { return churn(addrs, *workers, *frames, *size) }, *dur, "cycle")
	case *pattern == "fsync":
		err = fsyncCost(*dir, *size, *dur)
	default:
		err = fmt.Errorf("unknown -pattern %q", *pattern)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "loopbackfloor:", err)
		os.Exit(1)
	}
}

// echo listens on addr and serves it (serveEcho).
func echo(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return serveEcho(ln)
}

// serveEcho serves one goroutine per connection that writes back whatever
// one read returns.
func serveEcho(ln net.Listener) error {
	for {
		c, err := ln.Accept()
		if err != nil {
			return err
		}
		go func() {
			defer c.Close()
			buf := make([]byte, 64<<10)
			for {
				n, err := c.Read(buf)
				if err != nil {
					return
				}
				if _, err := c.Write(buf[:n]); err != nil {
					return
				}
			}
		}()
	}
}

// withServers starts the three echo servers, builds the pattern (a
// function running one round or cycle), runs it for a second of warm-up
// and then for dur, and prints the rate and the CPU per unit.
func withServers(base int, build func(addrs []string) (func(), error), dur time.Duration, unit string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	var addrs []string
	var procs []*exec.Cmd
	defer func() {
		for _, p := range procs {
			_ = p.Process.Kill()
			_ = p.Wait()
		}
	}()
	for i := 0; i < 3; i++ {
		addr := fmt.Sprintf("127.0.0.1:%d", base+i)
		p := exec.Command(self, "-serve", addr)
		p.Stderr = os.Stderr
		if err := p.Start(); err != nil {
			return err
		}
		procs = append(procs, p)
		addrs = append(addrs, addr)
	}
	for _, a := range addrs { // wait until each listens
		c, err := dialRetry(a)
		if err != nil {
			return err
		}
		c.Close()
	}
	once, err := build(addrs)
	if err != nil {
		return err
	}
	for t := time.Now(); time.Since(t) < time.Second; {
		once() // warm-up
	}
	srv0, cli0 := serversCPU(procs), selfCPU()
	start, units := time.Now(), 0
	for time.Since(start) < dur {
		once()
		units++
	}
	el := time.Since(start)
	srv, cli := serversCPU(procs)-srv0, selfCPU()-cli0
	fmt.Printf("%d %ss in %v: %.0f %ss/s, %.3f ms per %s\n", units, unit, el.Round(time.Millisecond),
		float64(units)/el.Seconds(), unit, el.Seconds()*1e3/float64(units), unit)
	fmt.Printf("CPU per %s: servers %.1f µs, client %.1f µs\n", unit,
		srv.Seconds()*1e6/float64(units), cli.Seconds()*1e6/float64(units))
	return nil
}

// dialRetry dials addr, retrying for two seconds while the server starts.
func dialRetry(addr string) (net.Conn, error) {
	var err error
	for try := 0; try < 100; try++ {
		var c net.Conn
		if c, err = net.Dial("tcp", addr); err == nil {
			return c, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil, err
}

// fanout returns one arm-phase round: a frame out and its echo back on
// each of n connections at once.
func fanout(addrs []string, n, size int) (func(), error) {
	fmt.Printf("fanout: %d connections over 3 echo servers, %d B each way\n", n, size)
	cs := make([]net.Conn, n)
	for i := range cs {
		var err error
		if cs[i], err = dialRetry(addrs[i%3]); err != nil {
			return nil, err
		}
	}
	var wg sync.WaitGroup
	kick := make([]chan struct{}, n)
	for i := range cs {
		kick[i] = make(chan struct{}, 1)
		go func(c net.Conn, kick chan struct{}) {
			buf := make([]byte, size)
			for range kick {
				if _, err := c.Write(buf); err == nil {
					_, _ = io.ReadFull(c, buf)
				}
				wg.Done()
			}
		}(cs[i], kick[i])
	}
	return func() {
		wg.Add(n)
		for _, k := range kick {
			k <- struct{}{}
		}
		wg.Wait()
	}, nil
}

// churn returns a function that waits for one completed cycle; workers
// run cycles concurrently (churnCycle), each on the next server in turn. A
// failed cycle is not counted; its worker retries after 10 ms.
func churn(addrs []string, workers, frames, size int) (func(), error) {
	fmt.Printf("churn: %d workers over 3 echo servers; per cycle a connection, one %d B frame each way, then %d in one write and back\n",
		workers, size, frames)
	done := make(chan struct{}, workers)
	for w := 0; w < workers; w++ {
		go func(w int) {
			first, batch := make([]byte, size), make([]byte, size*frames)
			for i := 0; ; i++ {
				if err := churnCycle(addrs[(w+i)%3], first, batch); err != nil {
					time.Sleep(10 * time.Millisecond)
					continue
				}
				done <- struct{}{}
			}
		}(w)
	}
	return func() { <-done }, nil
}

// churnCycle dials addr, sends first and reads its echo, sends batch in
// one write and reads its echo, and closes the connection.
func churnCycle(addr string, first, batch []byte) error {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	for _, msg := range [][]byte{first, batch} {
		if _, err := c.Write(msg); err != nil {
			return err
		}
		if _, err := io.ReadFull(c, msg); err != nil {
			return err
		}
	}
	return nil
}

// fsyncCost appends size bytes to a file in dir and fdatasyncs it, for
// dur, and prints the wall and CPU time per write and sync.
func fsyncCost(dir string, size int, dur time.Duration) error {
	f, err := os.CreateTemp(dir, "loopbackfloor-*.dat")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	buf := make([]byte, size)
	cpu0, start, n := selfCPU(), time.Now(), 0
	for time.Since(start) < dur {
		if _, err := f.Write(buf); err != nil {
			return err
		}
		if err := syscall.Fdatasync(int(f.Fd())); err != nil {
			return err
		}
		n++
	}
	el, cpu := time.Since(start), selfCPU()-cpu0
	fmt.Printf("fsync: %d writes of %d B, each followed by fdatasync, in %s (%s)\n", n, size, el.Round(time.Millisecond), dir)
	fmt.Printf("per write+fdatasync: %.1f µs wall, %.1f µs CPU of this process (the block layer's kernel threads not counted)\n",
		el.Seconds()*1e6/float64(n), cpu.Seconds()*1e6/float64(n))
	return nil
}

// serversCPU sums the user and system time of the server processes.
func serversCPU(procs []*exec.Cmd) time.Duration {
	var t time.Duration
	for _, p := range procs {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.Process.Pid))
		if err != nil {
			continue
		}
		// Fields after the command name (which ends with ')'): utime is the
		// 12th, stime the 13th, in clock ticks (100 per second on Linux).
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) < 13 {
			continue
		}
		var u, s int64
		fmt.Sscan(f[11], &u)
		fmt.Sscan(f[12], &s)
		t += time.Duration(u+s) * 10 * time.Millisecond
	}
	return t
}

// selfCPU is this process's user and system time.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
