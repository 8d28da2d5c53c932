// Command writepath says where a replicated write's time goes on this
// machine (issue 40): it starts a three-member zkraft ensemble on
// loopback with stage tracing on (internal/base/stagetrace), drives it
// with `zkraft bench --workload write` at a low concurrency, and prints,
// for the median write, when it passed each stage on the leader and on
// the quickest follower, beside the floor: one append+fsync of 256
// bytes in the members' directory and one loopback TCP round trip.
//
//	go run ./scripts/writepath -zkraft bin/zkraft             # 1 in flight, through the leader
//	go run ./scripts/writepath -zkraft bin/zkraft -via follower -inflight 4
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/zkraft/zkraft/bench"
	"github.com/zkraft/zkraft/internal/cli/fourletter"
	"github.com/zkraft/zkraft/internal/testing/benchfloor"
)

func main() {
	bin := flag.String("zkraft", "bin/zkraft", "zkraft binary (server and bench)")
	via := flag.String("via", "leader", "the member the client talks to: leader or follower")
	inflight := flag.Int("inflight", 1, "requests in flight (one per session)")
	duration := flag.Duration("duration", 8*time.Second, "measured time")
	keep := flag.Bool("keep", false, "keep the members' directory and trace files")
	flag.Parse()
	if err := run(*bin, *via, *inflight, *duration, *keep); err != nil {
		fmt.Fprintln(os.Stderr, "writepath:", err)
		os.Exit(1)
	}
}

func run(bin, via string, inflight int, duration time.Duration, keep bool) error {
	dir, err := os.MkdirTemp("", "writepath-")
	if err != nil {
		return err
	}
	if keep {
		fmt.Println("members' directory:", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	floor, err := benchfloor.Measure(dir, 1000)
	if err != nil {
		return err
	}
	ens, err := startEnsemble(bin, dir)
	defer ens.stop()
	if err != nil {
		return err
	}
	target, err := ens.pick(via)
	if err != nil {
		return err
	}
	res, err := runBench(bin, ens.clientAddrs[target], inflight, duration)
	if err != nil {
		return err
	}
	ens.stop()
	time.Sleep(200 * time.Millisecond) // the last marks drain every 100 ms
	traces := make([][]mark, len(ens.traceFiles))
	for i, f := range ens.traceFiles {
		if traces[i], err = readTrace(f); err != nil {
			return err
		}
	}
	rep := analyze(traces, ens.leader, target)
	fmt.Printf("%d in flight through the %s (member %d), %s measured: %.0f ops/s, p50 %.3f ms, p99 %.3f ms\n",
		inflight, via, target+1, duration, res.OpsPerSec, res.P50Ms, res.P99Ms)
	fmt.Printf("%s\n", floor)
	fmt.Printf("bench p50 / floor: %.2fx; / the shared-disk floor: %.2fx\n\n",
		res.P50Ms/benchfloor.Ms(floor.Total()), res.P50Ms/benchfloor.Ms(floor.SharedTotal()))
	fmt.Print(rep.table())
	return nil
}

// benchResult is what the table needs of `zkraft bench -o json`.
type benchResult struct {
	OpsPerSec    float64
	P50Ms, P99Ms float64
}

// runBench runs the write workload against addr and reads its JSON result.
func runBench(bin, addr string, inflight int, duration time.Duration) (benchResult, error) {
	cmd := exec.Command(bin, "bench", "--server", addr, "--workload", "write", "--sessions", fmt.Sprint(inflight),
		"--inflight", "1", "--duration", duration.String(), "--warmup", "2s", "--keys", "100", "--no-progress", "-o", "json")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return benchResult{}, fmt.Errorf("zkraft bench: %w", err)
	}
	var doc bench.Result
	if err := json.Unmarshal(out, &doc); err != nil {
		return benchResult{}, fmt.Errorf("zkraft bench output: %w: %s", err, out)
	}
	for _, o := range doc.Ops {
		if o.Op == "setData" {
			return benchResult{o.OpsPerSec, o.P50Ms, o.P99Ms}, nil
		}
	}
	return benchResult{}, fmt.Errorf("zkraft bench output has no setData: %s", out)
}

// ensemble is three members started with --peers on free loopback ports.
type ensemble struct {
	cmds        []*exec.Cmd
	clientAddrs []string
	traceFiles  []string
	leader      int
}

func startEnsemble(bin, dir string) (*ensemble, error) {
	ports, err := freePorts(6)
	if err != nil {
		return &ensemble{}, err
	}
	peers := make([]string, 3)
	for i := range peers {
		peers[i] = fmt.Sprintf("%d=127.0.0.1:%d", i+1, ports[3+i])
	}
	e := &ensemble{}
	for i := range 3 {
		addr := fmt.Sprintf("127.0.0.1:%d", ports[i])
		trace := filepath.Join(dir, fmt.Sprintf("stages.%d", i+1))
		logf, err := os.Create(filepath.Join(dir, fmt.Sprintf("member%d.log", i+1)))
		if err != nil {
			return e, err
		}
		cmd := exec.Command(bin, "server", "--id", fmt.Sprint(i+1), "--peers", strings.Join(peers, ","),
			"--client-addr", addr, "--data-dir", filepath.Join(dir, fmt.Sprintf("data%d", i+1)))
		cmd.Env = append(os.Environ(), "ZKRAFT_STAGE_TRACE="+trace)
		cmd.Stdout, cmd.Stderr = logf, logf
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			return e, err
		}
		e.cmds = append(e.cmds, cmd)
		e.clientAddrs = append(e.clientAddrs, addr)
		e.traceFiles = append(e.traceFiles, trace)
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		for i, a := range e.clientAddrs {
			if fourletter.Field(fourletter.Ask(a, "srvr"), "Mode: ") == "leader" {
				e.leader = i
				return e, nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return e, fmt.Errorf("no leader within 30 s (logs in %s)", dir)
}

// pick is the member the client uses.
func (e *ensemble) pick(via string) (int, error) {
	switch via {
	case "leader":
		return e.leader, nil
	case "follower":
		return (e.leader + 1) % 3, nil
	}
	return 0, fmt.Errorf("-via %q: leader or follower", via)
}

// stop ends the members (SIGTERM, then SIGKILL after 5 s).
func (e *ensemble) stop() {
	for _, c := range e.cmds {
		_ = c.Process.Signal(syscall.SIGTERM)
	}
	for _, c := range e.cmds {
		done := make(chan struct{})
		go func() { _ = c.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = c.Process.Kill()
			<-done
		}
	}
	e.cmds = nil
}

// freePorts are n loopback ports nothing listened on a moment ago.
func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	ports := make([]int, n)
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	return ports, nil
}
