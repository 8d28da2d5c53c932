package main

import (
	"github.com/urfave/cli/v2"
)

// snapshotCommand is `zkraft snapshot save | restore | inspect`, etcdutl's
// snapshot commands for an ensemble: save a consistent copy of a running
// member's tree, start a new ensemble from it, look inside it.
func snapshotCommand() *cli.Command {
	return &cli.Command{
		Name:  "snapshot",
		Usage: "save a running member's tree to a file, restore one into a new ensemble, inspect one",
		Subcommands: []*cli.Command{
			snapshotSaveCommand(),
			snapshotRestoreCommand(),
			snapshotInspectCommand(),
		},
	}
}
