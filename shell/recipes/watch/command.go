package watch

import (
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/urfave/cli/v2"

	"github.com/zkraft/zkraft/internal/cli/cliflags"
	"github.com/zkraft/zkraft/internal/zookeeper/watchconn"
)

// ContextDial opens a session with the command line's --server and
// --auth, passing its events to onEvent.
type ContextDial func(c *cli.Context, sessionTimeout time.Duration, onEvent func(zk.Event)) (*zk.Conn, error)

// Command is "zkraft watch PATH": every change under PATH with its zxid,
// as etcdctl watch prints a key's, including those made while
// disconnected. server is the binary's --server flag; dial opens the
// session the watcher reads on.
func Command(server cli.Flag, dial ContextDial) *cli.Command {
	flags := []cli.Flag{server, cliflags.Auth("")}
	flags = append(flags, cliflags.Timeout(10*time.Second, "the sessions' timeout, and the bound on connecting")...)
	flags = append(flags, cliflags.Output("how events are printed: text lines or json {type, path, zxid, data, away}")...)
	flags = append(flags, &cli.BoolFlag{Name: "recursive", Aliases: []string{"r"}, Usage: "follow every descendant of PATH (a persistent recursive watch), not only PATH and its children list"})
	return &cli.Command{
		Name: "watch", Usage: "print every change under a znode with its zxid, like etcdctl watch",
		ArgsUsage: "PATH",
		Description: "Prints one line per change, TYPE PATH ZXID, until SIGINT or SIGTERM. It holds a ZooKeeper\n" +
			"persistent watch on PATH (addWatch), so every change is printed while connected, in zxid\n" +
			"order: NodeCreated, NodeDataChanged, NodeDeleted of PATH and NodeChildrenChanged when its\n" +
			"children list changes; with --recursive NodeCreated, NodeDataChanged and NodeDeleted of PATH\n" +
			"and every descendant. After a reconnect (to the next --server member) it reports what\n" +
			"changed meanwhile, in zxid order, marked \"(while away)\" (\"away\":true in JSON).",
		Flags: flags, Action: func(c *cli.Context) error { return run(c, dial) },
	}
}

func run(c *cli.Context, dial ContextDial) error {
	if c.NArg() != 1 {
		return cli.Exit("zkraft watch: want one PATH", 1)
	}
	asJSON, err := cliflags.JSON(c)
	if err != nil {
		return cli.Exit(err.Error(), 1)
	}
	creds, err := cliflags.Credentials(c)
	if err != nil {
		return cli.Exit("zkraft watch: "+err.Error(), 1)
	}
	auth := make([]watchconn.Credential, 0, len(creds))
	for _, cr := range creds {
		auth = append(auth, watchconn.Credential{Scheme: cr.Scheme, Auth: []byte(cr.Cred)})
	}
	var servers []string
	for _, a := range strings.Split(c.String("server"), ",") {
		if a = strings.TrimSpace(a); a != "" {
			servers = append(servers, a)
		}
	}
	err = Run(Options{
		Dial:    func(d time.Duration) (*zk.Conn, error) { return dial(c, d, nil) },
		Servers: servers, Auth: auth,
		Path: c.Args().First(), Recursive: c.Bool("recursive"), SessionTimeout: cliflags.TimeoutValue(c),
		JSON: asJSON, Stdout: c.App.Writer, Stderr: c.App.ErrWriter,
	})
	if err != nil {
		return cli.Exit("zkraft watch: "+err.Error(), 1)
	}
	return nil
}
