package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/zkraft/zkraft/internal/testing/testenv"
	"github.com/zkraft/zkraft/internal/testing/testproc"
)

// startZkraft builds ./cmd/zkraft of this module and runs it on a free
// 127.0.0.1 port for the duration of the test. It returns the address.
func startZkraft(t *testing.T) string {
	t.Helper()
	addr, _ := startZkraftBin(t)
	return addr
}

// startZkraftBin is startZkraft that also returns the binary it built.
func startZkraftBin(t *testing.T) (addr, bin string) {
	t.Helper()
	addr, bin, _ = startZkraftProc(t)
	return addr, bin
}

// startZkraftProc is startZkraftBin that also returns the server's
// process.
func startZkraftProc(t *testing.T) (addr, bin string, srv *exec.Cmd) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs a zkraft server subprocess")
	}
	dir := t.TempDir()
	bin = filepath.Join(dir, "zkraft")
	// go test puts its own GOROOT/bin first on PATH.
	args := append([]string{"build", "-o", bin}, testenv.BuildFlags()...)
	build := exec.Command("go", append(args, "./cmd/zkraft")...)
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build zkraft: %v\n%s", err, out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr = ln.Addr().String()
	ln.Close()
	var logs bytes.Buffer
	srv = exec.Command(bin, "server", "--client-addr", addr, "--data-dir", filepath.Join(dir, "data"),
		"--max-client-cnxns", "0", "--log-level", "warn")
	srv.Stdout, srv.Stderr = &logs, &logs
	if err := testproc.Start(t, srv); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = srv.Process.Kill()
		_ = srv.Wait()
		if t.Failed() {
			t.Logf("server log:\n%s", logs.String())
		}
	})
	deadline := time.Now().Add(15 * time.Second)
	for {
		c, err := dial(context.Background(), dialOptions{addr: addr, timeout: 10 * time.Second, dialWait: time.Second, inflight: 1})
		if err == nil {
			_ = c.Close(time.Second, classNone)
			return addr, bin, srv
		}
		if time.Now().After(deadline) {
			t.Fatalf("server at %s not ready: %v", addr, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// checkResult asserts a run is sane: something measured, no errors, no
// problems, monotone percentiles, and JSON that parses back.
func checkResult(t *testing.T, res *Result, want ...string) {
	t.Helper()
	var table bytes.Buffer
	if err := res.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", table.String())
	if n := res.TotalErrors(); n != 0 {
		t.Errorf("%d errors: %v", n, res.Errors)
	}
	if len(res.Problems) != 0 {
		t.Errorf("problems: %v", res.Problems)
	}
	if res.Seconds <= 0 {
		t.Errorf("measured %v s", res.Seconds)
	}
	rows := map[string]OpStats{}
	for _, o := range res.Ops {
		rows[o.Op] = o
		if !(o.P50Ms > 0 && o.P50Ms <= o.P99Ms && o.P99Ms <= o.P999Ms && o.P999Ms <= o.MaxMs) {
			t.Errorf("%s: percentiles not monotone: p50 %v p99 %v p99.9 %v max %v", o.Op, o.P50Ms, o.P99Ms, o.P999Ms, o.MaxMs)
		}
	}
	for _, op := range want {
		if rows[op].Ops == 0 || rows[op].OpsPerSec <= 0 {
			t.Errorf("no %s ops measured", op)
		}
	}
	var js bytes.Buffer
	if err := res.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back Result
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatalf("JSON does not parse: %v\n%s", err, js.String())
	}
	if back.Workload != res.Workload || len(back.Ops) != len(res.Ops) || strings.Count(js.String(), "\n") != 1 {
		t.Errorf("JSON round trip differs or is not one line: %s", js.String())
	}
}

func TestWorkloadsAgainstZkraft(t *testing.T) {
	addr := startZkraft(t)
	cases := []struct {
		workload string
		want     []string
	}{
		{"read", []string{"getData"}},
		{"write", []string{"setData"}},
		{"mixed", []string{"getData", "setData"}},
		{"create-delete", []string{"create", "delete"}},
		{"ephemeral-churn", []string{"connect", "create", "closeSession", "session-cycle"}},
		{"watch-fanout", []string{"fanout-round", "watch-event", "watch-arm", "setData"}},
		{"populate", []string{"create"}},
	}
	for _, tc := range cases {
		t.Run(tc.workload, func(t *testing.T) {
			cfg := Config{
				Servers: []string{addr}, Workload: tc.workload, Sessions: 4, Inflight: 8, ValueSize: 64,
				Keys: 200, Duration: time.Second, Warmup: 200 * time.Millisecond, ReadRatio: 0.5,
				Watchers: 10, Nodes: 2500, Ephemerals: 3, SessionTimeout: 10 * time.Second,
				Root: "/zkraft-bench-test", Seed: 1,
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var logs, prog bytes.Buffer
			res, err := Run(ctx, cfg, NewProgress(&prog, false), &logs)
			t.Logf("log:\n%s%s", logs.String(), prog.String())
			if err != nil {
				t.Fatal(err)
			}
			checkResult(t, res, tc.want...)
			// The client's own CPU over the measurement (here it includes
			// the in-process server's), in the JSON and the table.
			var table bytes.Buffer
			if err := res.WriteTable(&table); err != nil {
				t.Fatal(err)
			}
			if res.ClientCPUSeconds <= 0 || !strings.Contains(table.String(), "client CPU: ") {
				t.Errorf("client CPU %v s, table:\n%s", res.ClientCPUSeconds, table.String())
			}
			if tc.workload == "populate" && !strings.Contains(fmt.Sprint(res.Notes), "2500 leaves") {
				t.Errorf("populate notes: %v", res.Notes)
			}
			if !strings.Contains(logs.String(), "cleanup: deleted") {
				t.Errorf("no cleanup reported")
			}
		})
	}
	t.Run("idle-sessions", func(t *testing.T) {
		cfg := Config{
			Servers: []string{addr}, Workload: "idle-sessions", Sessions: 40, Inflight: 1, ValueSize: 1,
			Keys: 1, Duration: 1500 * time.Millisecond, Warmup: 0, Watchers: 1, Nodes: 1, Ephemerals: 1,
			SessionTimeout: 10 * time.Second, Root: "/zkraft-bench-test", Seed: 1,
		}
		type outcome struct {
			res *Result
			err error
		}
		done := make(chan outcome, 1)
		go func() {
			res, err := Run(context.Background(), cfg, nil, io.Discard)
			done <- outcome{res, err}
		}()
		// While it runs, the server holds every session (and the admin one).
		held := 0
		for deadline := time.Now().Add(10 * time.Second); held < 41 && time.Now().Before(deadline); {
			held = aliveConnections(t, addr)
			time.Sleep(20 * time.Millisecond)
		}
		o := <-done
		if o.err != nil {
			t.Fatal(o.err)
		}
		if held < 41 {
			t.Errorf("the server held at most %d connections, want 41", held)
		}
		if len(o.res.Ops) != 0 || len(o.res.Notes) != 0 || len(o.res.Problems) != 0 {
			t.Errorf("an idle run reports ops %v, notes %v, problems %v", o.res.Ops, o.res.Notes, o.res.Problems)
		}
	})
	t.Run("command", func(t *testing.T) {
		var out bytes.Buffer
		app := &cli.App{Name: "zkraft", Writer: &out, Commands: []*cli.Command{Command()}}
		err := app.Run([]string{"zkraft", "bench", "--server", addr + "," + addr, "--workload", "mixed",
			"--sessions", "3", "--inflight", "4", "--keys", "50", "--duration", "1s", "--warmup", "0s",
			"--root", "/zkraft-bench-test", "-o", "json", "--timeout", "5s", "--no-progress"})
		if err != nil {
			t.Fatal(err)
		}
		var res Result
		if err := json.Unmarshal(out.Bytes(), &res); err != nil {
			t.Fatalf("stdout is not one JSON result: %v\n%s", err, out.String())
		}
		if len(res.Servers) != 2 || res.Sessions != 3 || res.Keys != 50 {
			t.Errorf("flags not applied: %+v", res)
		}
		checkResult(t, &res, "getData", "setData")
	})
	// Nothing is left behind.
	c, err := dial(context.Background(), dialOptions{addr: addr, timeout: 10 * time.Second, dialWait: time.Second, inflight: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(time.Second, classNone)
	levels, err := listTree(context.Background(), c, "/zkraft-bench-test")
	if err != nil {
		t.Fatal(err)
	}
	if len(levels) != 1 {
		t.Errorf("cleanup left %d levels under the root", len(levels)-1)
	}
}

func TestConfigValidate(t *testing.T) {
	good := Config{Servers: []string{"127.0.0.1:1"}, Workload: "read", Sessions: 1, Inflight: 1, Keys: 1,
		Duration: time.Second, Watchers: 1, Nodes: 1, SessionTimeout: 10 * time.Second, Root: "/b"}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, mut := range map[string]func(c *Config){
		"workload": func(c *Config) { c.Workload = "nope" },
		"sessions": func(c *Config) { c.Sessions = 0 },
		"root":     func(c *Config) { c.Root = "/" },
		"system":   func(c *Config) { c.Root = "/zookeeper/x" },
		"ratio":    func(c *Config) { c.ReadRatio = 2 },
		"servers":  func(c *Config) { c.Servers = nil },
	} {
		c := good
		mut(&c)
		if c.Validate() == nil {
			t.Errorf("%s: invalid config accepted", name)
		}
	}
}

// aliveConnections asks the server (srvr, the one four-letter word allowed
// by default) how many client connections it has.
func aliveConnections(t *testing.T, addr string) int {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Write([]byte("srvr")); err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(c)
	for _, line := range strings.Split(string(out), "\n") {
		var n int
		if _, err := fmt.Sscanf(line, "Connections: %d", &n); err == nil {
			return n - 1 // not this one
		}
	}
	t.Fatalf("no connection count in srvr output:\n%s", out)
	return 0
}
