package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/urfave/cli/v2"

	"github.com/zkraft/zkraft/internal/cli/cliflags"
	"github.com/zkraft/zkraft/server"
)

// membersCommand is the operators' view of ensemble membership, spoken over
// the client protocol (getData /zookeeper/config and reconfig), so it works
// against zkraft and Apache ZooKeeper alike.
func membersCommand() *cli.Command {
	// connFlags are each subcommand's own flags (values are not shared).
	connFlags := func(more ...cli.Flag) []cli.Flag {
		flags := []cli.Flag{
			serverFlag(),
			cliflags.Auth("credentials, scheme:credential (digest:super:password; user:password alone is digest): reconfig needs the super user's"),
		}
		flags = append(flags, cliflags.Timeout(10*time.Second, "limit on connecting and on the session")...)
		return append(flags, more...)
	}
	return &cli.Command{
		Name:  "members",
		Usage: "list, add or remove ensemble members",
		Subcommands: []*cli.Command{
			{
				Name: "list", Usage: "print /zookeeper/config", Action: membersList,
				Flags: connFlags(cliflags.Output("the config as text, or json: {version, members: [{id, server}]}")...),
			},
			{
				Name: "add", Usage: "add members: server.N=host:peerPort:electionPort[:observer][;clientPort] ...",
				ArgsUsage: "SERVER_LINE...",
				Flags:     connFlags(&cli.Int64Flag{Name: "version", Value: -1, Usage: "expected config version (-1 = any)"}),
				Action: func(c *cli.Context) error {
					return membersChange(c, c.Args().Slice(), nil)
				},
			},
			{
				Name: "remove", Usage: "remove members by server id", ArgsUsage: "ID...",
				Flags: connFlags(&cli.Int64Flag{Name: "version", Value: -1, Usage: "expected config version (-1 = any)"}),
				Action: func(c *cli.Context) error {
					return membersChange(c, nil, c.Args().Slice())
				},
			},
		},
	}
}

// serverFlag is the --server list the ensemble commands take.
func serverFlag() cli.Flag { return cliflags.Server("127.0.0.1:2181", "") }

type silentLogger struct{}

func (silentLogger) Printf(string, ...interface{}) {}

// dialMembers opens a session on --server within --timeout and adds the
// credentials of $ZKRAFT_AUTH and --auth.
func dialMembers(c *cli.Context) (*zk.Conn, error) {
	return dialSession(c, cliflags.TimeoutValue(c), nil)
}

// dialSession opens a session of the given timeout on --server, waiting
// as long for it, and adds the credentials of $ZKRAFT_AUTH and --auth;
// onEvent, when not nil, gets the connection's events.
func dialSession(c *cli.Context, timeout time.Duration, onEvent func(zk.Event)) (*zk.Conn, error) {
	creds, err := cliflags.Credentials(c)
	if err != nil {
		return nil, err
	}
	conn, events, err := zk.Connect(splitAddrs(c.String("server")), timeout, zk.WithLogger(silentLogger{}), zk.WithEventCallback(onEvent))
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	deadline := time.After(timeout)
	for conn.State() != zk.StateHasSession {
		select {
		case <-events:
		case <-deadline:
			conn.Close()
			return nil, fmt.Errorf("connect to %s: no session", c.String("server"))
		}
	}
	for _, cr := range creds {
		if err := conn.AddAuth(cr.Scheme, []byte(cr.Cred)); err != nil {
			conn.Close()
			return nil, fmt.Errorf("auth %s: %w", cr.Scheme, err)
		}
	}
	return conn, nil
}

// reconfigAuthHint says where a reconfig refused for want of credentials
// finds them.
const reconfigAuthHint = "reconfig needs the super user's credentials: give them with --auth digest:super:PASSWORD or $" + cliflags.AuthEnv

func membersList(c *cli.Context) error {
	asJSON, err := cliflags.JSON(c)
	if err != nil {
		return err
	}
	conn, err := dialMembers(c)
	if err != nil {
		return err
	}
	defer conn.Close()
	data, _, err := conn.Get("/zookeeper/config")
	if err != nil {
		return fmt.Errorf("get /zookeeper/config: %w", err)
	}
	if asJSON {
		return writeMembersJSON(c.App.Writer, data)
	}
	if len(data) == 0 {
		fmt.Fprintln(c.App.Writer, "standalone (no ensemble configuration)")
		return nil
	}
	fmt.Fprintln(c.App.Writer, strings.TrimSpace(string(data)))
	return nil
}

// memberJSON is one server line of members list -o json.
type memberJSON struct {
	ID     string `json:"id"`
	Server string `json:"server"` // host:quorumPort:electionPort[:role][;clientAddr]
}

// writeMembersJSON prints /zookeeper/config as one JSON object: its
// version and its server lines (none when standalone).
func writeMembersJSON(w io.Writer, data []byte) error {
	out := struct {
		Version string       `json:"version,omitempty"`
		Members []memberJSON `json:"members"`
	}{Members: []memberJSON{}}
	for _, line := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
		switch {
		case !ok:
		case k == "version":
			out.Version = v
		case strings.HasPrefix(k, "server."):
			out.Members = append(out.Members, memberJSON{ID: strings.TrimPrefix(k, "server."), Server: v})
		}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return fmt.Errorf("encode json: %w", err)
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
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
		if _, err := server.ParseMemberLine(k, v); err != nil {
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
		if errors.Is(err, zk.ErrNoAuth) {
			return fmt.Errorf("reconfig: %w: %s", err, reconfigAuthHint)
		}
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
