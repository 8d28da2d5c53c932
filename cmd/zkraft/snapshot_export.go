package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/zkraft/zkraft/internal/zookeeper/snapfile"
	"github.com/zkraft/zkraft/server"
)

func snapshotExportCommand() *cli.Command {
	return &cli.Command{
		Name:      "export-zookeeper",
		Usage:     "write a saved snapshot FILE into a stopped Apache ZooKeeper server's data directory (the way back)",
		ArgsUsage: "FILE",
		Description: "Checks FILE (written by zkraft snapshot save) and writes the ZooKeeper snapshot it holds as\n" +
			"dataDir/version-2/snapshot.<zxid in hex>, the file ZooKeeper 3.5+ loads when it starts. Run it on\n" +
			"every ZooKeeper server with the same FILE, then start them. The data directories must hold no\n" +
			"ZooKeeper state (no snapshot.* or log.* in version-2, no currentEpoch or acceptedEpoch): ZooKeeper\n" +
			"would load its own newer snapshot or replay its old logs over this one. Every znode keeps its data,\n" +
			"ACL and Stat. Sessions are kept by id and timeout; ZooKeeper checks a resuming client's password\n" +
			"against its own (derived from the session id), so sessions zkraft created expire when their clients\n" +
			"reconnect, and sessions ZooKeeper created before a migration to zkraft resume.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "config", Usage: "the ZooKeeper server's zoo.cfg (dataDir, dataLogDir)"},
			&cli.StringFlag{Name: "data-dir", Usage: "ZooKeeper's dataDir (instead of --config)"},
			&cli.StringFlag{Name: "data-log-dir", Usage: "ZooKeeper's dataLogDir, when set (checked to hold no logs)"},
		},
		Action: snapshotExport,
	}
}

func snapshotExport(c *cli.Context) error {
	if c.NArg() != 1 {
		return fmt.Errorf("snapshot export-zookeeper: want one FILE, got %d arguments", c.NArg())
	}
	path := c.Args().First()
	dataDir, logDir := c.String("data-dir"), c.String("data-log-dir")
	if cfgPath := c.String("config"); cfgPath != "" {
		values, err := server.ZooValues(cfgPath)
		if err != nil {
			return err
		}
		if dataDir == "" {
			dataDir = values["dataDir"]
		}
		if logDir == "" {
			logDir = values["dataLogDir"]
		}
	}
	if dataDir == "" {
		return fmt.Errorf("snapshot export-zookeeper: name ZooKeeper's data directory: --config zoo.cfg or --data-dir")
	}
	for _, dir := range []string{dataDir, logDir} {
		if err := checkNoZooKeeperState(dir); err != nil {
			return err
		}
	}
	f, err := snapfile.Read(path)
	if err != nil {
		return err
	}
	if f.Kind != snapfile.KindZkraft {
		return fmt.Errorf("snapshot export-zookeeper: %s is already an Apache ZooKeeper snapshot: copy it as it is", path)
	}
	snapDir := filepath.Join(dataDir, "version-2")
	if err := os.MkdirAll(snapDir, 0o755); err != nil {
		return fmt.Errorf("snapshot export-zookeeper: %w", err)
	}
	target := filepath.Join(snapDir, "snapshot."+strconv.FormatInt(int64(f.Meta.Zxid), 16))
	if err := writeDurably(target, f.Body); err != nil {
		return fmt.Errorf("snapshot export-zookeeper: %w", err)
	}
	out := c.App.Writer
	fmt.Fprintf(out, "exported        %s\n", path)
	fmt.Fprintf(out, "zxid            %s (ZooKeeper goes on from %s)\n", f.Meta.Zxid, f.Meta.Zxid+1)
	fmt.Fprintf(out, "znodes          %d\n", f.Meta.Znodes)
	fmt.Fprintf(out, "sessions        %d (kept by id and timeout; zkraft's own expire when their clients reconnect)\n", f.Meta.Sessions)
	fmt.Fprintf(out, "written to      %s\n", target)
	return nil
}

// checkNoZooKeeperState refuses a ZooKeeper data or log directory that
// holds a server's state: a snapshot or log in version-2 (ZooKeeper
// loads its newest snapshot and replays the logs after it) or the epoch
// files of a quorum member (an epoch older than the snapshot's zxid
// stops it).
func checkNoZooKeeperState(dir string) error {
	if dir == "" {
		return nil
	}
	var found []string
	for _, name := range []string{"currentEpoch", "acceptedEpoch"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			found = append(found, name)
		}
	}
	entries, err := os.ReadDir(filepath.Join(dir, "version-2"))
	if err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("snapshot export-zookeeper: %w", err)
	}
	for _, e := range entries {
		if n := e.Name(); strings.HasPrefix(n, "snapshot.") || strings.HasPrefix(n, "log.") || strings.HasPrefix(n, "currentEpoch") || strings.HasPrefix(n, "acceptedEpoch") {
			found = append(found, filepath.Join("version-2", n))
		}
	}
	if len(found) == 0 {
		return nil
	}
	if len(found) > 5 {
		found = append(found[:5], "...")
	}
	return fmt.Errorf("snapshot export-zookeeper: %s holds ZooKeeper state (%s): move it away first, "+
		"ZooKeeper would start from it instead", filepath.Clean(dir), strings.Join(found, ", "))
}

// writeDurably writes b to path through a temporary file beside it,
// fsynced and renamed into place, so path is whole or absent.
func writeDurably(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
