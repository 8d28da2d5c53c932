package main

import (
	"github.com/urfave/cli/v2"
)

// snapshotCommand is `zkraft snapshot save | restore | inspect |
// export-zookeeper`, etcdutl's snapshot commands for an ensemble: save a
// consistent copy of a running member's tree, start a new ensemble from
// it, look inside it, hand it to Apache ZooKeeper.
func snapshotCommand() *cli.Command {
	return &cli.Command{
		Name:  "snapshot",
		Usage: "save a running member's tree to a file, restore one into a new ensemble, inspect one, hand one to ZooKeeper",
		Subcommands: []*cli.Command{
			snapshotSaveCommand(),
			snapshotRestoreCommand(),
			snapshotInspectCommand(),
			snapshotExportCommand(),
		},
	}
}
