package main

import (
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/zkraft/zkraft/ensemble/storage"
	"github.com/zkraft/zkraft/server"
)

// rejoinCommand is the one-command recovery of a member whose log or
// snapshots are damaged (it refuses to start naming the file and offset):
// the damaged files are moved aside, never deleted, and the member
// catches up from its peers at its next start (README "Recovering a
// member").
func rejoinCommand() *cli.Command {
	return &cli.Command{
		Name:  "rejoin",
		Usage: "recover a stopped member whose Raft log or snapshots are damaged: move them aside so it catches up from its peers",
		Description: "Moves raft.db, raft.journal and snapshots/ into damaged-<time>/ beside them (nothing is deleted) and\n" +
			"writes a fresh raft.db holding only the member's Raft term and vote. myid and the configuration stay.\n" +
			"Start the member as usual afterwards: the leader sends it the log or a snapshot. The rest of the\n" +
			"ensemble must have a quorum. Stop the member first.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "config", Usage: "the member's zoo.cfg"},
			&cli.StringFlag{Name: "data-dir", Usage: "the member's data directory (else zoo.cfg dataDir)"},
			&cli.StringFlag{Name: "data-log-dir", Usage: "the member's log directory (else zoo.cfg dataLogDir)"},
		},
		Action: runRejoin,
	}
}

func runRejoin(c *cli.Context) error {
	st := server.DefaultConfig()
	st.DataDir = ""
	if path := c.String("config"); path != "" {
		if _, err := st.ApplyZooFile(path, nil); err != nil {
			return err
		}
		if len(st.Members) == 0 {
			return fmt.Errorf("rejoin: %s lists no ensemble members: a standalone server has no peers to catch up from", path)
		}
	}
	if c.IsSet("data-dir") {
		st.DataDir = c.String("data-dir")
	}
	if c.IsSet("data-log-dir") {
		st.DataLogDir = c.String("data-log-dir")
	}
	if st.DataDir == "" {
		return fmt.Errorf("rejoin: give the member's --config or --data-dir")
	}
	// A running member's log must not be moved from under it.
	unlock, err := server.LockDirs(st)
	if err != nil {
		return fmt.Errorf("rejoin: %w", err)
	}
	defer unlock()
	res, err := storage.PrepareRejoin(st.DataDir, st.DataLogDir, time.Now())
	if err != nil {
		return fmt.Errorf("rejoin: %w", err)
	}
	w := c.App.Writer
	for _, m := range res.Moved {
		fmt.Fprintf(w, "moved aside: %s\n", m)
	}
	vote := "no vote"
	if res.VoteKept {
		vote = "its vote"
	}
	fmt.Fprintf(w, "fresh raft.db with term %d and %s\n", res.Term, vote)
	for _, warning := range res.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warning)
	}
	fmt.Fprintln(w, "start the member as usual: it catches up from its peers (the damaged files stay where they were moved)")
	return nil
}
