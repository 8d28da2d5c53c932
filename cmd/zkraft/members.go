package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/urfave/cli/v2"
)

// membersCommand is the operators' view of ensemble membership, spoken over
// the client protocol (getData /zookeeper/config and reconfig), so it works
// against zkraft and Apache ZooKeeper alike.
func membersCommand() *cli.Command {
	connFlags := []cli.Flag{
		serverFlag(),
		&cli.StringFlag{Name: "auth", Usage: "digest credentials user:password (reconfig needs the super user)"},
	}
	return &cli.Command{
		Name:  "members",
		Usage: "list, add or remove ensemble members",
		Subcommands: []*cli.Command{
			{Name: "list", Usage: "print /zookeeper/config", Flags: connFlags, Action: membersList},
			{
				Name: "add", Usage: "add members: server.N=host:peerPort:electionPort[:observer][;clientPort] ...",
				ArgsUsage: "SERVER_LINE...",
				Flags:     append(connFlags, &cli.Int64Flag{Name: "version", Value: -1, Usage: "expected config version (-1 = any)"}),
				Action: func(c *cli.Context) error {
					return membersChange(c, c.Args().Slice(), nil)
				},
			},
			{
				Name: "remove", Usage: "remove members by server id", ArgsUsage: "ID...",
				Flags: append(connFlags, &cli.Int64Flag{Name: "version", Value: -1, Usage: "expected config version (-1 = any)"}),
				Action: func(c *cli.Context) error {
					return membersChange(c, nil, c.Args().Slice())
				},
			},
		},
	}
}

// serverFlag is the --server list the ensemble commands take.
func serverFlag() cli.Flag {
	return &cli.StringFlag{Name: "server", Value: "127.0.0.1:2181", Usage: "host:port[,host:port...]"}
}

type silentLogger struct{}

func (silentLogger) Printf(string, ...interface{}) {}

func dialMembers(c *cli.Context) (*zk.Conn, error) {
	conn, events, err := zk.Connect(strings.Split(c.String("server"), ","), 10*time.Second, zk.WithLogger(silentLogger{}))
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	deadline := time.After(10 * time.Second)
	for conn.State() != zk.StateHasSession {
		select {
		case <-events:
		case <-deadline:
			conn.Close()
			return nil, fmt.Errorf("connect to %s: no session", c.String("server"))
		}
	}
	if a := c.String("auth"); a != "" {
		if err := conn.AddAuth("digest", []byte(a)); err != nil {
			conn.Close()
			return nil, fmt.Errorf("auth: %w", err)
		}
	}
	return conn, nil
}

func membersList(c *cli.Context) error {
	conn, err := dialMembers(c)
	if err != nil {
		return err
	}
	defer conn.Close()
	data, _, err := conn.Get("/zookeeper/config")
	if err != nil {
		return fmt.Errorf("get /zookeeper/config: %w", err)
	}
	if len(data) == 0 {
		fmt.Fprintln(c.App.Writer, "standalone (no ensemble configuration)")
		return nil
	}
	fmt.Fprintln(c.App.Writer, strings.TrimSpace(string(data)))
	return nil
}

func membersChange(c *cli.Context, joining, leaving []string) error {
	if len(joining) == 0 && len(leaving) == 0 {
		return fmt.Errorf("nothing to change")
	}
	for _, line := range joining {
		// The server parses them too, but ZooKeeper's format (an
		// election port) is checked here, before any connection.
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return fmt.Errorf("%q: want server.N=host:quorumPort:electionPort[:role][;clientAddr]", line)
		}
		if _, err := parseMemberLine(k, v); err != nil {
			return err
		}
	}
	conn, err := dialMembers(c)
	if err != nil {
		return err
	}
	defer conn.Close()
	if len(leaving) > 0 {
		if err := checkLeaving(conn, leaving); err != nil {
			return err
		}
	}
	if _, err := conn.IncrementalReconfig(joining, leaving, c.Int64("version")); err != nil {
		return fmt.Errorf("reconfig: %w", err)
	}
	data, _, err := conn.Get("/zookeeper/config")
	if err != nil {
		return fmt.Errorf("get /zookeeper/config: %w", err)
	}
	fmt.Fprintln(c.App.Writer, strings.TrimSpace(string(data)))
	return nil
}

// checkLeaving refuses to remove an id that is not a member: the reconfig
// would succeed, change nothing and still make a new config version.
func checkLeaving(conn *zk.Conn, leaving []string) error {
	data, _, err := conn.Get("/zookeeper/config")
	if err != nil {
		return fmt.Errorf("get /zookeeper/config: %w", err)
	}
	members := map[string]bool{}
	var ids []string
	for _, line := range strings.Split(string(data), "\n") {
		if k, _, ok := strings.Cut(strings.TrimSpace(line), "="); ok && strings.HasPrefix(k, "server.") {
			id := strings.TrimPrefix(k, "server.")
			members[id] = true
			ids = append(ids, id)
		}
	}
	for _, id := range leaving {
		if !members[id] {
			return fmt.Errorf("server %s is not a member (members: %s)", id, strings.Join(ids, ", "))
		}
	}
	return nil
}
