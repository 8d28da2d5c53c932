package main

import (
	"fmt"
	"io"
	"net"

	"github.com/urfave/cli/v2"

	"github.com/zkraft/zkraft/ensemble"
	"github.com/zkraft/zkraft/internal/zookeeper/importer"
	"github.com/zkraft/zkraft/server"
	"github.com/zkraft/zkraft/znode"
)

// importCommand carries an Apache ZooKeeper server's data over: stop
// ZooKeeper, run this on every member with the zoo.cfg zkraft will serve
// with, then start zkraft. With ZooKeeper's own zoo.cfg the state is read
// from its dataDir (and dataLogDir) and zkraft's files go next to it.
func importCommand() *cli.Command {
	return &cli.Command{
		Name:      "import-zookeeper",
		Usage:     "start a member from a stopped Apache ZooKeeper server's data (snapshot and transaction logs)",
		ArgsUsage: " ",
		Description: "Reads ZooKeeper's newest snapshot and the transaction logs after it and writes the tree, " +
			"with every znode's data, ACL and Stat and the open sessions, as this member's starting state. " +
			"Run it on every member, each with its own ZooKeeper data, before zkraft's first start there; members " +
			"that differ by their last transactions take the first leader's state. Sessions keep their ids and passwords: clients that " +
			"reconnect within their timeout keep their sessions and ephemeral nodes.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "config", Usage: "the zoo.cfg zkraft will serve with; its dataDir and dataLogDir are the default --from and --from-log-dir"},
			&cli.StringFlag{Name: "from", Usage: "ZooKeeper's dataDir (the directory holding version-2)"},
			&cli.StringFlag{Name: "from-log-dir", Usage: "ZooKeeper's dataLogDir, when it is not the dataDir"},
			&cli.StringFlag{Name: "data-dir", Value: "./zkraft-data", Usage: "this member's data directory (must hold no zkraft state yet)"},
			&cli.StringFlag{Name: "data-log-dir", Usage: "this member's log directory, when not the data directory (zoo.cfg dataLogDir; must hold no zkraft state yet)"},
			&cli.BoolFlag{Name: "extended-types", Usage: "accepted for the zoo.cfg's sake: TTL nodes are imported either way (extendedTypesEnabled decides what the server's clients may create)"},
			&cli.StringFlag{Name: "id", Usage: "this member's server id (else dataDir/myid when there are peers)"},
			&cli.StringFlag{Name: "peers", Usage: "ensemble members: 1=host:port,2=host:port[:observer],... (zoo.cfg server.N)"},
			&cli.StringFlag{Name: "log-level", Value: "warn", Usage: "debug, info, warn or error"},
		},
		Action: runImport,
	}
}

func runImport(c *cli.Context) error {
	log, err := newLogger(c.String("log-level"), "console")
	if err != nil {
		return err
	}
	defer func() { _ = log.Sync() }()
	st := server.DefaultConfig()
	from, logDir := c.String("from"), c.String("from-log-dir")
	if path := c.String("config"); path != "" {
		values, err := st.ApplyZooFile(path, nil)
		if err != nil {
			return err
		}
		if from == "" {
			from = st.DataDir
		}
		if logDir == "" {
			logDir = values["dataLogDir"]
		}
	}
	if c.IsSet("config") {
		// The zoo.cfg's client port must be free: a ZooKeeper still serving
		// there would go on writing what this import cannot see.
		if err := portFree(st.ClientAddr); err != nil {
			return fmt.Errorf("%s is in use (is ZooKeeper still running? stop it first): %w", st.ClientAddr, err)
		}
	}
	if err := st.ApplyFlags(c); err != nil {
		return err
	}
	if err := st.ResolveMembers(c); err != nil {
		return err
	}
	if from == "" {
		return fmt.Errorf("--from (ZooKeeper's dataDir) or --config is required")
	}
	// A zkraft serving (or another import writing) these directories must
	// not have them written under it.
	unlock, err := server.LockDirs(st)
	if err != nil {
		return fmt.Errorf("import-zookeeper: %w", err)
	}
	defer unlock()
	res, err := importer.Load(from, logDir, znode.Options{ExtendedTypes: st.ExtendedTypes})
	if err != nil {
		return err
	}
	// ZooKeeper's membership is not the new ensemble's, whose first
	// leader writes its own.
	res.Tree.ResetConfig()
	err = ensemble.Seed(ensemble.Config{
		ID: st.ServerID, DataDir: st.DataDir, LogDir: st.DataLogDir, Peers: st.Peers(), Logger: log,
	}, res.Tree, uint64(max(res.LastZxid, 1)))
	if err != nil {
		return err
	}
	report(c.App.Writer, res, st.DataDir)
	return nil
}

// report prints what was carried over.
func report(w io.Writer, res *importer.Result, dataDir string) {
	snap := res.Snapshot
	if snap == "" {
		snap = "(none: the logs replayed onto an empty tree)"
	}
	stats := res.Tree.Stats()
	fmt.Fprintf(w, "snapshot        %s\n", snap)
	fmt.Fprintf(w, "logs            %d files, %d transactions replayed, %d skipped (errors)\n", len(res.Logs), res.Replayed, res.Skipped)
	fmt.Fprintf(w, "znodes          %d (%d bytes of paths and data)\n", stats.Nodes, stats.DataSize)
	fmt.Fprintf(w, "sessions        %d\n", len(res.Tree.Sessions()))
	fmt.Fprintf(w, "last zxid       %#x (zkraft goes on from %#x)\n", res.LastZxid, res.LastZxid+1)
	if res.Settled > 0 {
		fmt.Fprintf(w, "already held    %d changes the fuzzy snapshot held before its zxid (their replay changed nothing):\n", res.Settled)
		for _, c := range res.Conflicts {
			fmt.Fprintf(w, "                %s\n", c)
		}
	}
	if res.NotApplied > 0 {
		fmt.Fprintf(w, "NOT APPLIED     %d logged changes ZooKeeper applies that this tree refused (it differs from ZooKeeper's there):\n", res.NotApplied)
		for _, c := range res.Unapplied {
			fmt.Fprintf(w, "                %s\n", c)
		}
	}
	if n := len(res.DeadEphemerals); n > 0 {
		fmt.Fprintf(w, "dead ephemerals %d the snapshot held for sessions closed since (deleted, as ZooKeeper does on loading)\n", n)
	}
	fmt.Fprintf(w, "written to      %s\n", dataDir)
}

// portFree reports whether addr can be listened on now.
func portFree(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return ln.Close()
}
