package javabench

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/ensemble"
	"github.com/zkraft/zkraft/internal/testing/testenv"
	"github.com/zkraft/zkraft/internal/testing/testmember"
	"github.com/zkraft/zkraft/session"
	"github.com/zkraft/zkraft/znode"
)

// The class path of JavaBench compiled once for the test binary (javac
// takes seconds), in a directory removed when the tests end.
var (
	compileOnce sync.Once
	classPath   []string
	compileErr  error
	compileDir  string
)

// compiled returns JavaBench's class path, compiling it on first use.
func compiled(t *testing.T) []string {
	t.Helper()
	compileOnce.Do(func() {
		if compileDir, compileErr = os.MkdirTemp("", "javabench-test-"); compileErr == nil {
			classPath, compileErr = Compile(context.Background(), compileDir)
		}
	})
	if compileErr != nil {
		t.Fatal(compileErr)
	}
	return classPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if compileDir != "" {
		os.RemoveAll(compileDir)
	}
	os.Exit(code)
}

// TestJavaClientAgainstZkraft compiles JavaBench with javac and runs it
// for a second against a zkraft server (in this process), for mixed
// (getData and setData) and create-delete: every run ends with measured
// requests, a latency per second, no errors, and the client's znodes gone.
func TestJavaClientAgainstZkraft(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: compiles and runs Java")
	}
	testenv.Require(t, Missing())
	ctx := context.Background()
	cp := compiled(t)
	_, _, addr := testmember.Start(t, znode.Options{}, func(n *ensemble.Node) *session.Server {
		return session.New(session.Config{TickTime: testmember.TickTime}, n)
	})
	for _, wl := range []string{"mixed", "create-delete"} {
		res, err := Run(ctx, cp, Config{Servers: []string{addr}, Workload: wl, Sessions: 2, Inflight: 4,
			Warmup: 300 * time.Millisecond, Duration: time.Second, Root: "/javabench", Keys: 10, ValueSize: 100, ReadRatio: 0.9})
		if err != nil {
			t.Fatal(err)
		}
		row := res.Ops[0]
		if row.Ops == 0 || row.P50Ms <= 0 || row.P99Ms < row.P50Ms || len(row.PerSecond) != 1 || res.TotalErrors() != 0 || res.ClientCPUSeconds <= 0 {
			t.Fatalf("%s: %+v, errors %v", wl, row, res.Errors)
		}
		if res.Workload != wl || res.Sessions != 2 || res.Inflight != 4 {
			t.Fatalf("%s: result %+v", wl, res)
		}
		t.Logf("%s: %d ops, p50 %.3f ms, p99 %.3f ms", wl, row.Ops, row.P50Ms, row.P99Ms)
	}
	c, _, err := zk.Connect([]string{addr}, 10*time.Second, zk.WithLogger(quiet{}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if ok, _, err := c.Exists("/javabench"); err != nil || ok {
		t.Fatalf("/javabench left behind: %v, %v", ok, err)
	}
}

// TestRunKillsAnOverrunningJVM: a JVM still running when the context ends
// is killed and the run is an error (here: no server to connect to).
func TestRunKillsAnOverrunningJVM(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs Java")
	}
	testenv.Require(t, Missing())
	cp := compiled(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_, err := Run(ctx, cp, Config{Servers: []string{"127.0.0.1:1"}, Workload: "write", Sessions: 1, Inflight: 1,
		Warmup: time.Second, Duration: time.Second, Root: "/javabench", Keys: 1})
	if err == nil || !strings.Contains(err.Error(), "deadline") {
		t.Fatalf("a run without a server: %v", err)
	}
}

type quiet struct{}

func (quiet) Printf(string, ...interface{}) {}
