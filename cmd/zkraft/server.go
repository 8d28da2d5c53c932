package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/zkraft/zkraft/server"
)

// serverCommand is `zkraft server`: its flags are the settings table's
// (package server), and it runs what they and zoo.cfg describe.
func serverCommand() *cli.Command {
	return &cli.Command{
		Name:      "server",
		Usage:     "serve the ZooKeeper client protocol (defaults: 127.0.0.1:2181, ./zkraft-data)",
		ArgsUsage: "[zoo.cfg]",
		Description: "A zoo.cfg given as the argument, the way zkServer.sh hands it to ZooKeeper, is read as\n" +
			"--config is; flags given override its keys.",
		Flags:  serverFlags(),
		Action: runServer,
	}
}

// serverFlags binds the settings table's flags to urfave/cli, each under
// its topic; --config comes first, outside the groups.
func serverFlags() []cli.Flag {
	flags := []cli.Flag{&cli.StringFlag{Name: "config", Usage: "a ZooKeeper zoo.cfg to read"}}
	for _, f := range server.FlagSpecs() {
		switch f.Kind {
		case server.FlagBool:
			flags = append(flags, &cli.BoolFlag{Name: f.Name, Usage: f.Usage, Category: f.Topic})
		case server.FlagInt:
			n, _ := strconv.ParseInt(f.Value, 0, 64)
			flags = append(flags, &cli.IntFlag{Name: f.Name, Value: int(n), Usage: f.Usage, Category: f.Topic})
		case server.FlagUint:
			n, _ := strconv.ParseUint(f.Value, 0, 64)
			flags = append(flags, &cli.UintFlag{Name: f.Name, Value: uint(n), Usage: f.Usage, Category: f.Topic})
		default:
			flags = append(flags, &cli.StringFlag{Name: f.Name, Value: f.Value, Usage: f.Usage, Category: f.Topic})
		}
	}
	return flags
}

// runServer reads the configuration (zoo.cfg, then the flags given) and
// serves until SIGINT or SIGTERM.
func runServer(c *cli.Context) error {
	log, err := newLogger(c.String("log-level"), c.String("log-format"))
	if err != nil {
		return err
	}
	defer func() { _ = log.Sync() }()
	path, err := configPath(c)
	if err != nil {
		return err
	}
	cfg, err := server.Load(path, c, log)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sig)
	go func() {
		if s, ok := <-sig; ok {
			cancel(fmt.Errorf("signal %s", s))
		}
	}()
	return server.Run(ctx, cfg, log)
}

// configPath is the zoo.cfg to read: --config, or the one argument, as
// zkServer.sh passes it to QuorumPeerMain.
func configPath(c *cli.Context) (string, error) {
	flag := c.String("config")
	switch arg := c.Args().First(); {
	case c.NArg() == 0:
		return flag, nil
	case c.NArg() > 1:
		return "", fmt.Errorf("server: %d arguments: it takes one, a zoo.cfg (or --config)", c.NArg())
	case flag != "" && flag != arg:
		return "", fmt.Errorf("server: zoo.cfg %q and --config %q: give one", arg, flag)
	default:
		return arg, nil
	}
}
