package main

import (
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/urfave/cli/v2"

	"github.com/zkraft/zkraft/internal/cli/cliflags"
	"github.com/zkraft/zkraft/shell/recipes/watch"
)

// watchCommand is "zkraft watch PATH": every change under PATH with its
// zxid, as etcdctl watch prints a key's, including those made while
// disconnected.
func watchCommand() *cli.Command {
	flags := []cli.Flag{serverFlag(), cliflags.Auth("")}
	flags = append(flags, cliflags.Timeout(10*time.Second, "the session's timeout, and the bound on connecting")...)
	flags = append(flags, cliflags.Output("how events are printed: text lines or json {type, path, zxid, data, away}")...)
	flags = append(flags, &cli.BoolFlag{Name: "recursive", Aliases: []string{"r"}, Usage: "follow every descendant of PATH, not only PATH and its children list"})
	return &cli.Command{
		Name: "watch", Usage: "print every change under a znode with its zxid, like etcdctl watch",
		ArgsUsage: "PATH",
		Description: "Prints one line per change, TYPE PATH ZXID (NodeCreated, NodeDataChanged, NodeDeleted),\n" +
			"until SIGINT or SIGTERM. Without --recursive it follows PATH and the creation and deletion\n" +
			"of its children. After a reconnect or a new session it reports what changed meanwhile,\n" +
			"in zxid order, marked \"(while away)\" (\"away\":true in JSON).",
		Flags: flags, Action: runWatch,
	}
}

func runWatch(c *cli.Context) error {
	if c.NArg() != 1 {
		return cli.Exit("zkraft watch: want one PATH", 1)
	}
	asJSON, err := cliflags.JSON(c)
	if err != nil {
		return cli.Exit(err.Error(), 1)
	}
	err = watch.Run(watch.Options{
		Dial: func(d time.Duration, onEvent func(zk.Event)) (*zk.Conn, error) { return dialSession(c, d, onEvent) },
		Path: c.Args().First(), Recursive: c.Bool("recursive"), SessionTimeout: cliflags.TimeoutValue(c),
		JSON: asJSON, Stdout: c.App.Writer, Stderr: c.App.ErrWriter,
	})
	if err != nil {
		return cli.Exit("zkraft watch: "+err.Error(), 1)
	}
	return nil
}
