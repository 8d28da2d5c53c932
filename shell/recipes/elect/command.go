package elect

import (
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/urfave/cli/v2"

	"github.com/zkraft/zkraft/internal/cli/cliflags"
	"github.com/zkraft/zkraft/shell/recipes/lock"
)

// ContextDial opens a session with the command line's --server and
// --auth, passing its events to onEvent.
type ContextDial func(c *cli.Context, sessionTimeout time.Duration, onEvent func(zk.Event)) (*zk.Conn, error)

// Command is "zkraft elect NAME [PROPOSAL] [-- CMD ...]": the leader
// election recipe, shared with Curator's LeaderLatch and kazoo's
// Election. server is the binary's --server flag; dial opens sessions.
func Command(server cli.Flag, dial ContextDial) *cli.Command {
	flags := []cli.Flag{server, cliflags.Auth("")}
	flags = append(flags, cliflags.Timeout(0, "give up when not elected within this (0: wait for ever)")...)
	flags = append(flags, cliflags.Output("how the leader is printed: text or json {path, node, proposal, token}")...)
	flags = append(flags,
		&cli.GenericFlag{Name: "session-timeout", Value: &cliflags.Duration{D: 10 * time.Second}, Usage: "session timeout, and the bound on connecting"},
		&cli.GenericFlag{Name: "grace", Value: &cliflags.Duration{D: 10 * time.Second}, Usage: "time CMD has between SIGTERM and SIGKILL once the session is lost"},
		&cli.BoolFlag{Name: "listen", Usage: "do not campaign: print the leader's proposal, then each change of leader"},
		&cli.BoolFlag{Name: "kazoo", Usage: "name this candidate's node as kazoo's Election does (default: as Curator's LeaderLatch does)"})
	return &cli.Command{
		Name: "elect", Usage: "run a command while leader (ZooKeeper's election recipe, shared with Curator and kazoo)",
		ArgsUsage: "NAME [PROPOSAL] [-- CMD ARGS...]",
		Description: "Campaigns on the znode path NAME with PROPOSAL (default HOST:PID) as the node's data; once\n" +
			"elected runs CMD with $" + lock.TokenEnv + " set, gives up leadership when it ends and exits with\n" +
			"its status; without CMD leads until stdin closes or a signal arrives. \"elected\" and the fencing\n" +
			"token are printed (on stderr when CMD runs, else on stdout). Exit status: CMD's, 1 on errors,\n" +
			"75 when --timeout passed first, 70 when the session was lost (CMD then got SIGTERM, and SIGKILL\n" +
			"after --grace). --listen prints the leader's proposal and each change, and does not campaign.\n" +
			"Write -- before CMD: its options are its own.",
		Flags: flags, Action: func(c *cli.Context) error { return run(c, dial) },
	}
}

func run(c *cli.Context, dialContext ContextDial) error {
	args, cmd := c.Args().Slice(), []string(nil)
	if i := slices.Index(args, "--"); i >= 0 {
		args, cmd = args[:i], args[i+1:]
	}
	if len(args) == 0 || len(args) > 2 || (c.Bool("listen") && (len(args) > 1 || cmd != nil)) {
		return cli.Exit("zkraft elect: want NAME [PROPOSAL] [-- CMD ARGS...], or --listen NAME", lock.ExitFailed)
	}
	asJSON, err := cliflags.JSON(c)
	if err != nil {
		return cli.Exit(err.Error(), lock.ExitFailed)
	}
	dial := func(d time.Duration, onEvent func(zk.Event)) (*zk.Conn, error) { return dialContext(c, d, onEvent) }
	sessionTimeout := c.Generic("session-timeout").(*cliflags.Duration).D
	var status int
	if c.Bool("listen") {
		status, err = Listen(ListenOptions{Dial: dial, Path: args[0], SessionTimeout: sessionTimeout, JSON: asJSON, Stdout: c.App.Writer})
	} else {
		host, _ := os.Hostname()
		proposal := fmt.Sprintf("%s:%d", host, os.Getpid())
		if len(args) == 2 {
			proposal = args[1]
		}
		status, err = Campaign(Options{
			Dial: dial, Path: args[0], Proposal: proposal, Cmd: cmd, Kazoo: c.Bool("kazoo"), JSON: asJSON,
			Timeout: cliflags.TimeoutValue(c), SessionTimeout: sessionTimeout, Grace: c.Generic("grace").(*cliflags.Duration).D,
			Stdin: os.Stdin, Stdout: c.App.Writer, Stderr: c.App.ErrWriter,
		})
	}
	if err != nil {
		return cli.Exit("zkraft elect: "+err.Error(), status)
	}
	if status != 0 {
		return cli.Exit("", status)
	}
	return nil
}
