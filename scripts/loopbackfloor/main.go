// Command loopbackfloor measures what the watch fan-out workload's message
// pattern costs on this machine with no coordination service at all: three
// minimal echo server processes on loopback and one client holding
// -conns connections spread over them, sending one small frame on every
// connection and waiting for every echo, round after round. That is the
// arm phase of a fan-out round (100 getData with a watch on 100 sessions),
// and a lower bound for any server written on the same kernel: it reports
// the rounds per second and the CPU time of the servers and the client per
// round.
//
//	go run ./scripts/loopbackfloor -conns 100 -duration 5s
package main

import (
	"bufio"
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
	conns := flag.Int("conns", 100, "client connections (spread over the three servers)")
	size := flag.Int("size", 64, "bytes per message")
	dur := flag.Duration("duration", 5*time.Second, "measured time")
	base := flag.Int("port", 35001, "first of the three server ports")
	flag.Parse()
	if *serve != "" {
		if err := echo(*serve, *size); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	if err := run(*conns, *size, *dur, *base); err != nil {
		fmt.Fprintln(os.Stderr, "loopbackfloor:", err)
		os.Exit(1)
	}
}

// echo serves one goroutine per connection that writes back every message.
func echo(addr string, size int) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	for {
		c, err := ln.Accept()
		if err != nil {
			return err
		}
		go func() {
			defer c.Close()
			br := bufio.NewReader(c)
			buf := make([]byte, size)
			for {
				if _, err := io.ReadFull(br, buf); err != nil {
					return
				}
				if _, err := c.Write(buf); err != nil {
					return
				}
			}
		}()
	}
}

func run(n, size int, dur time.Duration, base int) error {
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
		p := exec.Command(self, "-serve", addr, "-size", fmt.Sprint(size))
		p.Stderr = os.Stderr
		if err := p.Start(); err != nil {
			return err
		}
		procs = append(procs, p)
		addrs = append(addrs, addr)
	}
	cs := make([]net.Conn, n)
	for i := range cs {
		var err error
		for try := 0; try < 100; try++ {
			if cs[i], err = net.Dial("tcp", addrs[i%3]); err == nil {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err != nil {
			return err
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
	round := func() {
		wg.Add(n)
		for _, k := range kick {
			k <- struct{}{}
		}
		wg.Wait()
	}
	for t := time.Now(); time.Since(t) < time.Second; {
		round() // warm-up
	}
	srv0, cli0 := serversCPU(procs), selfCPU()
	start, rounds := time.Now(), 0
	for time.Since(start) < dur {
		round()
		rounds++
	}
	el := time.Since(start)
	srv, cli := serversCPU(procs)-srv0, selfCPU()-cli0
	fmt.Printf("%d connections over 3 echo servers, %d B each way: %d rounds in %v\n", n, size, rounds, el.Round(time.Millisecond))
	fmt.Printf("%.0f rounds/s, %.3f ms per round; CPU per round: servers %.3f ms, client %.3f ms\n",
		float64(rounds)/el.Seconds(), el.Seconds()*1e3/float64(rounds),
		srv.Seconds()*1e3/float64(rounds), cli.Seconds()*1e3/float64(rounds))
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
