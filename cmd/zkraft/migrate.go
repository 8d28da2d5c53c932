package main

import (
	"context"
	"fmt"
	"io"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"
	"go.uber.org/zap"

	"github.com/zkraft/zkraft/internal/zookeeper/learner"
	"github.com/zkraft/zkraft/server"
	"github.com/zkraft/zkraft/znode"
)

// migrateCommand groups the commands of a live migration from a running
// Apache ZooKeeper ensemble.
func migrateCommand() *cli.Command {
	return &cli.Command{
		Name:        "migrate",
		Usage:       "move a running Apache ZooKeeper ensemble's data to zkraft",
		Subcommands: []*cli.Command{followCommand(), cutoverCommand()},
	}
}

// followCommand follows a running ZooKeeper ensemble as one of its
// Observers and reports how closely its tree matches.
func followCommand() *cli.Command {
	return &cli.Command{
		Name:      "follow",
		Usage:     "follow a running ZooKeeper ensemble as its Observer, checking that zkraft holds the same tree",
		ArgsUsage: " ",
		Description: "Reads a zoo.cfg written as for a ZooKeeper Observer (the ensemble's server.N lines, this server's own\n" +
			"server.M=host:port:port:observer line, peerType=observer, dataDir holding myid), connects to the ZooKeeper\n" +
			"leader's quorum port, syncs (DIFF, SNAP or TRUNC) and applies every committed transaction at ZooKeeper's zxid\n" +
			"and time, following leader changes, until SIGINT or SIGTERM. It logs its progress and, with --check-digests,\n" +
			"compares its tree's digest with the one ZooKeeper 3.6+ stamps on every transaction. On exit it saves the\n" +
			"followed tree in dataDir/" + server.FollowState + ", and starts from it the next time, so the leader syncs it by DIFF.\n" +
			"It serves no clients.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "config", Required: true, Usage: "the observer's zoo.cfg"},
			&cli.StringFlag{Name: "id", Usage: "this observer's server id (else dataDir/myid)"},
			&cli.StringFlag{Name: "jaas-config", Usage: "the JAAS file whose QuorumLearner section logs in to the leader (quorum.auth.learnerRequireSasl)"},
			&cli.StringFlag{Name: "krb5-conf", Usage: "the Kerberos configuration for a Krb5LoginModule QuorumLearner (as -Djava.security.krb5.conf; default " + server.DefaultKrb5Conf + ")"},
			&cli.BoolFlag{Name: "check-digests", Usage: "compare the tree's digest with each transaction's (walks the tree per transaction)"},
			&cli.DurationFlag{Name: "status-interval", Value: 10 * time.Second, Usage: "how often to log the followed zxid"},
			&cli.StringFlag{Name: "log-level", Value: "info", Usage: "debug, info, warn or error"},
			&cli.StringFlag{Name: "log-format", Value: "console", Usage: "console or json"},
		},
		Action: runFollow,
	}
}

func runFollow(c *cli.Context) error {
	// Caught from the start: a signal while the saved tree loads ends the
	// follow as one later does, not the process.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	log, err := newLogger(c.String("log-level"), c.String("log-format"))
	if err != nil {
		return err
	}
	defer func() { _ = log.Sync() }()
	cfg, dataDir, err := followConfig(c, log)
	if err != nil {
		return err
	}
	unlock, err := server.LockDir(dataDir)
	if err != nil {
		return fmt.Errorf("migrate follow: %w", err)
	}
	defer unlock()
	statePath := filepath.Join(dataDir, server.FollowState)
	b, err := server.OpenObserver(cfg, statePath, log)
	if err != nil {
		return err
	}
	l := b.Learner()
	done := make(chan struct{})
	go func() { _ = l.Run(ctx); close(done) }()
	tick := time.NewTicker(c.Duration("status-interval"))
	defer tick.Stop()
	for running := true; running; {
		select {
		case <-done:
			running = false
		case <-tick.C:
			logFollowStatus(log, l.Status())
		}
	}
	st := l.Status()
	logFollowStatus(log, st)
	if err := server.SaveFollowing(l, statePath); err != nil {
		return err
	}
	printFollowSummary(c.App.Writer, l, cfg.CheckDigests)
	return followOutcome(st)
}

// followOutcome fails a follow whose tree was seen to differ from
// ZooKeeper's: a digest that differed, or a committed change the tree
// refused (each logged as a warning).
func followOutcome(st learner.Status) error {
	if st.DigestMismatches > 0 {
		return fmt.Errorf("migrate follow: %d of %d transactions' digests differed from ZooKeeper's", st.DigestMismatches, st.DigestsChecked)
	}
	if st.NotApplied > 0 {
		return fmt.Errorf("migrate follow: %d changes ZooKeeper committed were not applied (see the warnings)", st.NotApplied)
	}
	return nil
}

// followConfig builds the learner's configuration from the observer's
// zoo.cfg: ZooKeeper's voting servers are the addresses to try, this
// server's line must be an observer's (a participant's would be counted
// in ZooKeeper's quorum), and initLimit and syncLimit give the timeouts.
func followConfig(c *cli.Context, log *zap.Logger) (_ learner.Config, dataDir string, _ error) {
	st := server.DefaultConfig()
	if _, err := st.ApplyZooFile(c.String("config"), log); err != nil {
		return learner.Config{}, "", err
	}
	if c.IsSet("id") {
		id, err := server.ParseMyID(c.String("id"))
		if err != nil {
			return learner.Config{}, "", fmt.Errorf("--id: %w", err)
		}
		st.SetID(id)
	}
	if err := st.ResolveMembers(c); err != nil {
		return learner.Config{}, "", err
	}
	st.JAASConfig = c.String("jaas-config")
	st.Krb5Conf = c.String("krb5-conf")
	cfg, err := server.LearnerConfig(st, c.String("config"), log)
	if err != nil {
		return learner.Config{}, "", err
	}
	cfg.CheckDigests = c.Bool("check-digests")
	return cfg, st.DataDir, nil
}

func logFollowStatus(log *zap.Logger, st learner.Status) {
	log.Info("following", zap.String("leader", st.Leader), zap.Bool("synced", st.Synced),
		zap.String("zxid", fmt.Sprintf("%#x", st.LastZxid)), zap.Int("applied", st.Applied), zap.Int("syncs", st.Syncs),
		zap.String("lastSync", string(st.LastSync)), zap.Int("digestsChecked", st.DigestsChecked),
		zap.Int("digestMismatches", st.DigestMismatches), zap.Int("notApplied", st.NotApplied))
}

// printFollowSummary prints what was followed.
func printFollowSummary(w io.Writer, l *learner.Learner, digests bool) {
	st := l.Status()
	var stats znode.Stats
	var sessions int
	l.Read(func(t *znode.Tree) { stats, sessions = t.Stats(), len(t.Sessions()) })
	fmt.Fprintf(w, "last zxid       %#x\n", st.LastZxid)
	fmt.Fprintf(w, "syncs           %d (last: %s)\n", st.Syncs, st.LastSync)
	fmt.Fprintf(w, "applied         %d transactions\n", st.Applied)
	if st.NotApplied > 0 {
		fmt.Fprintf(w, "NOT APPLIED     %d changes ZooKeeper committed (see the warnings): the tree differs from ZooKeeper's\n", st.NotApplied)
	}
	fmt.Fprintf(w, "znodes          %d (%d bytes of paths and data)\n", stats.Nodes, stats.DataSize)
	fmt.Fprintf(w, "sessions        %d\n", sessions)
	if digests {
		fmt.Fprintf(w, "digests         %d checked, %d differed\n", st.DigestsChecked, st.DigestMismatches)
	}
}
