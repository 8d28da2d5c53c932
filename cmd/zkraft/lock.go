package main

import (
	"os"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/urfave/cli/v2"

	"github.com/zkraft/zkraft/internal/cli/cliflags"
	"github.com/zkraft/zkraft/shell/recipes/lock"
)

// lockCommand is "zkraft lock NAME [-- CMD ...]": the lock recipe,
// shared with Curator's InterProcessMutex and kazoo's Lock.
func lockCommand() *cli.Command {
	flags := []cli.Flag{serverFlag(), cliflags.Auth("")}
	flags = append(flags, cliflags.Timeout(0, "give up when the lock is not acquired within this (0: wait for ever)")...)
	flags = append(flags, cliflags.Output("how the fencing token is printed: text or json {path, node, token}")...)
	flags = append(flags,
		&cli.GenericFlag{Name: "session-timeout", Value: &cliflags.Duration{D: 10 * time.Second}, Usage: "session timeout, and the bound on connecting"},
		&cli.GenericFlag{Name: "grace", Value: &cliflags.Duration{D: 10 * time.Second}, Usage: "time CMD has between SIGTERM and SIGKILL once the session is lost"})
	return &cli.Command{
		Name: "lock", Usage: "run a command while holding a lock (ZooKeeper's lock recipe, shared with Curator and kazoo)",
		ArgsUsage: "NAME [-- CMD ARGS...]",
		Description: "Acquires the lock on the znode path NAME, then runs CMD with $" + lock.TokenEnv + " set and\n" +
			"exits with its status; without CMD holds the lock until stdin closes or a signal arrives.\n" +
			"The fencing token is printed (on stderr when CMD runs, else on stdout). Exit status: CMD's,\n" +
			"1 on errors, 75 when --timeout passed first, 70 when the session was lost (CMD then got\n" +
			"SIGTERM, and SIGKILL after --grace). Write -- before CMD: its options are its own.",
		Flags: flags, Action: runLock,
	}
}

func runLock(c *cli.Context) error {
	args := c.Args().Slice()
	if len(args) == 0 {
		return cli.Exit("zkraft lock: want NAME [-- CMD ARGS...]", lock.ExitFailed)
	}
	if len(args) > 1 && args[1] == "--" {
		args = append(args[:1], args[2:]...)
	}
	asJSON, err := cliflags.JSON(c)
	if err != nil {
		return cli.Exit(err.Error(), lock.ExitFailed)
	}
	status, err := lock.Run(lock.Options{
		Dial: func(d time.Duration, onEvent func(zk.Event)) (*zk.Conn, error) { return dialSession(c, d, onEvent) },
		Path: args[0], Cmd: args[1:], JSON: asJSON,
		Timeout: cliflags.TimeoutValue(c), SessionTimeout: c.Generic("session-timeout").(*cliflags.Duration).D,
		Grace: c.Generic("grace").(*cliflags.Duration).D,
		Stdin: os.Stdin, Stdout: c.App.Writer, Stderr: c.App.ErrWriter,
	})
	if err != nil {
		return cli.Exit("zkraft lock: "+err.Error(), status)
	}
	if status != 0 {
		return cli.Exit("", status)
	}
	return nil
}
