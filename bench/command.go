package bench

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/zkraft/zkraft/internal/cli/cliflags"
)

// Command returns the `bench` subcommand.
func Command() *cli.Command {
	return &cli.Command{
		Name:  "bench",
		Usage: "load-test a ZooKeeper-compatible server (zkraft or Apache ZooKeeper)",
		Description: "Workloads: read (getData), write (setData), mixed (--read-ratio), create-delete,\n" +
			"ephemeral-churn (session open, ephemeral creates, close), watch-fanout (--watchers\n" +
			"sessions watch one znode; time until all are notified), populate (create --nodes znodes),\n" +
			"idle-sessions (hold --sessions sessions that only ping, to measure a server's cost per client).\n" +
			"Setup is not measured; the " + "--root subtree is deleted afterwards unless --keep.",
		Flags: append([]cli.Flag{
			cliflags.Server("127.0.0.1:2181", "host:port[,host:port...]; sessions are spread round robin"),
			&cli.StringFlag{Name: "workload", Value: "read", Usage: strings.Join(workloadNames, "|")},
			&cli.IntFlag{Name: "sessions", Value: 16, Usage: "concurrent sessions, one TCP connection each (ephemeral-churn: concurrent workers; watch-fanout uses --watchers)"},
			&cli.IntFlag{Name: "inflight", Value: 32, Usage: "requests outstanding per session"},
			&cli.IntFlag{Name: "value-size", Value: 100, Usage: "bytes per znode value"},
			&cli.IntFlag{Name: "keys", Value: 1000, Usage: "read/write/mixed: number of znodes"},
			&cli.DurationFlag{Name: "duration", Value: 10 * time.Second, Usage: "measured time"},
			&cli.DurationFlag{Name: "warmup", Value: 2 * time.Second, Usage: "load before measuring"},
			&cli.Float64Flag{Name: "read-ratio", Value: 0.9, Usage: "mixed: fraction of reads"},
			&cli.IntFlag{Name: "watchers", Value: 100, Usage: "watch-fanout: watcher sessions"},
			&cli.IntFlag{Name: "nodes", Value: 100000, Usage: "populate: znodes to create"},
			&cli.StringFlag{Name: "shape", Value: "flat", Usage: "populate: flat (directories of 1000 leaves) or realistic (apps with subtrees of depth 2-6, one directory of 50,000+ children; exactly --nodes znodes under <root>/tree)"},
			&cli.IntFlag{Name: "ephemerals", Value: 4, Usage: "ephemeral-churn: ephemerals per session"},
			&cli.DurationFlag{Name: "session-timeout", Value: 10 * time.Second, Usage: "requested session timeout"},
			&cli.StringFlag{Name: "root", Value: "/zkraft-bench", Usage: "znode subtree the benchmark owns"},
			&cli.BoolFlag{Name: "keep", Usage: "do not delete --root afterwards"},
			&cli.Int64Flag{Name: "seed", Usage: "random seed for key choice (0: from the clock)"},
			&cli.BoolFlag{Name: "no-progress", Usage: "no live progress line"},
			&cli.StringFlag{Name: "cpuprofile", Usage: "write the client's CPU profile to this file (is the client the bottleneck?)"},
			&cli.BoolFlag{Name: "worker", Hidden: true, Usage: "serve a load class's fleet requests on stdin (started by the load classes, e.g. scripts/overload)"},
		}, append(cliflags.Timeout(5*time.Second, "TCP connect + handshake limit", "connect-timeout"),
			cliflags.Output("a table, or json: the result as one JSON object")...)...),
		Action: action,
	}
}

// action runs the benchmark described by the flags.
func action(cc *cli.Context) error {
	if cc.Bool("worker") {
		return serveWorker(cc.Context, os.Stdin, os.Stdout)
	}
	cfg := Config{
		Workload:       cc.String("workload"),
		Sessions:       cc.Int("sessions"),
		Inflight:       cc.Int("inflight"),
		ValueSize:      cc.Int("value-size"),
		Keys:           cc.Int("keys"),
		Duration:       cc.Duration("duration"),
		Warmup:         cc.Duration("warmup"),
		ReadRatio:      cc.Float64("read-ratio"),
		Watchers:       cc.Int("watchers"),
		Nodes:          cc.Int("nodes"),
		Shape:          cc.String("shape"),
		Ephemerals:     cc.Int("ephemerals"),
		SessionTimeout: cc.Duration("session-timeout"),
		ConnectTimeout: cliflags.TimeoutValue(cc, "connect-timeout"),
		Root:           cc.String("root"),
		Keep:           cc.Bool("keep"),
		Seed:           cc.Int64("seed"),
	}
	for _, s := range strings.Split(cc.String("server"), ",") {
		if s = strings.TrimSpace(s); s != "" {
			cfg.Servers = append(cfg.Servers, s)
		}
	}
	if cfg.Seed == 0 {
		cfg.Seed = time.Now().UnixNano()
	}
	if path := cc.String("cpuprofile"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			return fmt.Errorf("cpuprofile: %w", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("cpuprofile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	asJSON, err := cliflags.JSON(cc)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(cc.Context, os.Interrupt)
	defer stop()
	go func() { // the first interrupt ends the measurement (cleanup still runs); a second one kills
		<-ctx.Done()
		stop()
	}()
	var progress *Progress
	if !cc.Bool("no-progress") {
		progress = NewProgress(os.Stderr, IsTerminal(os.Stderr))
	}
	res, err := Run(ctx, cfg, progress, os.Stderr)
	if res != nil {
		var werr error
		if asJSON {
			werr = res.WriteJSON(cc.App.Writer)
		} else {
			werr = res.WriteTable(cc.App.Writer)
		}
		if werr != nil {
			return werr
		}
	}
	if err != nil {
		return err
	}
	if ctx.Err() != nil {
		return fmt.Errorf("bench: interrupted: %w", context.Cause(ctx))
	}
	return nil
}
