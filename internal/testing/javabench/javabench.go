// Package javabench runs JavaBench.java, a load generator built on Apache
// ZooKeeper's own Java client (asynchronous calls, as Kafka and HBase use
// it), for scripts/benchcompare: it compiles the program with javac against
// Debian's zookeeper.jar, runs it against an ensemble and turns what it
// prints into a bench.Result, with latencies in the histograms of package
// bench, so its rows read like `zkraft bench`'s.
//
// The JVM cannot outlive the run: it leads a process group of its own,
// gets SIGKILL when the program that started it dies (Linux), is killed
// with its group when the context ends, and halts by itself when its
// standard input closes or it overruns its time by two minutes.
package javabench

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/zkraft/zkraft/bench"
	"github.com/zkraft/zkraft/jute"
)

//go:embed JavaBench.java
var source []byte

// ClassPath is the Java client of Debian's libzookeeper-java.
var ClassPath = []string{"/usr/share/java/zookeeper.jar", "/usr/share/java/zookeeper-jute.jar",
	"/usr/share/java/slf4j-api.jar", "/usr/share/java/slf4j-nop.jar"}

// JVMFlags are the client JVM's options: a fixed heap and no perf data
// file; the JIT as an application's (C2 included).
var JVMFlags = []string{"-XX:-UsePerfData", "-Xms256m", "-Xmx256m"}

// Missing reports what the Java client needs and this machine lacks
// (javac, java, the jars), or nil.
func Missing() error {
	for _, tool := range []string{"javac", "java"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("javabench: %w", err)
		}
	}
	for _, jar := range ClassPath {
		if _, err := os.Stat(jar); err != nil {
			return fmt.Errorf("javabench: %w", err)
		}
	}
	return nil
}

// Compile writes JavaBench.java into dir and compiles it there; it
// returns the class path to run it with.
func Compile(ctx context.Context, dir string) ([]string, error) {
	src := filepath.Join(dir, "JavaBench.java")
	if err := os.WriteFile(src, source, 0o644); err != nil {
		return nil, fmt.Errorf("javabench: %w", err)
	}
	classes := filepath.Join(dir, "classes")
	cmd := exec.CommandContext(ctx, "javac", "-nowarn", "-proc:none", "-d", classes, "-cp", strings.Join(ClassPath, ":"), src)
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("javabench: javac: %w\n%s", err, out)
	}
	return append([]string{classes}, ClassPath...), nil
}

// Config is one run of the Java client.
type Config struct {
	Servers   []string // host:port of every member; each session picks one as the Java client does
	Workload  string   // read, write, mixed or create-delete
	Sessions  int
	Inflight  int // requests in flight per session
	Warmup    time.Duration
	Duration  time.Duration
	Root      string // znode the run creates and removes
	Keys      int
	ValueSize int
	ReadRatio float64 // mixed
}

// args is cfg as JavaBench's arguments.
func (cfg Config) args() []string {
	return []string{strings.Join(cfg.Servers, ","), cfg.Workload, strconv.Itoa(cfg.Sessions), strconv.Itoa(cfg.Inflight),
		strconv.FormatInt(cfg.Warmup.Milliseconds(), 10), strconv.FormatInt(cfg.Duration.Milliseconds(), 10),
		cfg.Root, strconv.Itoa(cfg.Keys), strconv.Itoa(cfg.ValueSize), strconv.FormatFloat(cfg.ReadRatio, 'f', -1, 64)}
}

// Run runs JavaBench with classPath (from Compile) and returns its
// result. The JVM is killed if ctx ends first or the run overruns
// warm-up plus duration by two minutes.
func Run(ctx context.Context, classPath []string, cfg Config) (*bench.Result, error) {
	ctx, cancel := context.WithTimeout(ctx, cfg.Warmup+cfg.Duration+2*time.Minute)
	defer cancel()
	args := append(append(append([]string(nil), JVMFlags...), "-cp", strings.Join(classPath, ":"), "JavaBench"), cfg.args()...)
	cmd := exec.Command("java", args...)
	cmd.SysProcAttr = procAttr()
	stdin, err := cmd.StdinPipe() // closed when this process ends: the JVM then halts
	if err != nil {
		return nil, fmt.Errorf("javabench: %w", err)
	}
	defer stdin.Close()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("javabench: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err = <-exited:
	case <-ctx.Done():
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
		err = ctx.Err()
	}
	if err != nil {
		return nil, fmt.Errorf("javabench %s: %w: %s", cfg.Workload, err, tail(stderr.String()))
	}
	res, err := Parse(&stdout)
	if err != nil {
		return nil, fmt.Errorf("javabench %s: %w: %s", cfg.Workload, err, tail(stderr.String()))
	}
	res.Workload, res.Servers, res.Sessions, res.Inflight = cfg.Workload, cfg.Servers, cfg.Sessions, cfg.Inflight
	res.ValueSize, res.Keys, res.Warmup = cfg.ValueSize, cfg.Keys, cfg.Warmup.Seconds()
	if cfg.Workload == "mixed" {
		res.ReadRatio = cfg.ReadRatio
	}
	return res, nil
}

// tail is the end of a JVM's standard error, for an error message.
func tail(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 2000 {
		s = "..." + s[len(s)-2000:]
	}
	return s
}

// op is the row name of every measured request of a JavaBench run.
const op = "java-async"

// Parse reads JavaBench's output into a Result with one row, op
// "java-async", whose latencies come from the ALL histogram and whose
// per-second p50/p99 come from the SEC lines; the JVM's CPU time in the
// measurement is the client's (ClientCPUSeconds). A run that did not end
// with DONE is an error.
func Parse(r io.Reader) (*bench.Result, error) {
	res := &bench.Result{Errors: map[string]int64{}}
	var all bench.HistSnapshot
	var secs []bench.LatencySecond
	var window time.Duration
	ready, done, sawAll := false, false, false
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<22)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		switch fields[0] {
		case "READY":
			ready = true
		case "SEC":
			if len(fields) < 2 {
				return nil, fmt.Errorf("javabench: %q: no second", sc.Text())
			}
			s, err := histogram(fields[2:])
			if err != nil {
				return nil, err
			}
			secs = append(secs, s.Second())
		case "ALL":
			s, err := histogram(fields[1:])
			if err != nil {
				return nil, err
			}
			all, sawAll = *s, true
		case "WINDOW":
			if len(fields) != 2 {
				return nil, fmt.Errorf("javabench: %q", sc.Text())
			}
			ns, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil || ns <= 0 {
				return nil, fmt.Errorf("javabench: window %q: %w", fields[1], errors.Join(err, errors.New("not positive")))
			}
			window = time.Duration(ns)
		case "CPU":
			if len(fields) != 2 {
				return nil, fmt.Errorf("javabench: %q", sc.Text())
			}
			ns, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("javabench: %q: %w", sc.Text(), err)
			}
			res.ClientCPUSeconds = time.Duration(ns).Seconds()
		case "ERROR":
			if len(fields) != 3 {
				return nil, fmt.Errorf("javabench: %q", sc.Text())
			}
			n, err := strconv.ParseInt(fields[2], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("javabench: %q: %w", sc.Text(), err)
			}
			res.Errors[codeName(fields[1])] += n
		case "DONE":
			done = true
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("javabench: %w", err)
	}
	switch {
	case !ready:
		return nil, errors.New("javabench: the client never got ready")
	case !done || !sawAll || window == 0:
		return nil, errors.New("javabench: the run did not finish")
	}
	row := bench.Summarize(op, &all, window)
	row.PerSecond = secs
	if len(res.Errors) > 0 {
		row.Errors = res.Errors
	}
	res.Ops, res.Seconds = []bench.OpStats{row}, window.Seconds()
	return res, nil
}

// histogram reads "ns:count" pairs into a snapshot.
func histogram(pairs []string) (*bench.HistSnapshot, error) {
	var h bench.Histogram
	for _, p := range pairs {
		a, b, ok := strings.Cut(p, ":")
		ns, err1 := strconv.ParseInt(a, 10, 64)
		n, err2 := strconv.ParseUint(b, 10, 64)
		if !ok || err1 != nil || err2 != nil || ns < 0 {
			return nil, fmt.Errorf("javabench: histogram entry %q", p)
		}
		h.RecordN(ns, n)
	}
	s := &bench.HistSnapshot{}
	h.Snapshot(s)
	return s, nil
}

// codeName names a KeeperException code as `zkraft bench` names errors
// ("-4 connection loss"); anything else is kept as it is.
func codeName(code string) string {
	n, err := strconv.ParseInt(code, 10, 32)
	if err != nil {
		return code
	}
	c := jute.ErrCode(n)
	return fmt.Sprintf("%d %s", n, strings.TrimPrefix(c.Error(), "zk: "))
}
