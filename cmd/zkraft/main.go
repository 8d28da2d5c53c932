// Command zkraft is a ZooKeeper-compatible coordination server replicated
// with Raft. `zkraft server` serves the ZooKeeper client protocol.
package main

import (
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/zkraft/zkraft/bench"
	"github.com/zkraft/zkraft/internal/base/buildinfo"
	"github.com/zkraft/zkraft/internal/cli/cliargs"
	"github.com/zkraft/zkraft/shell"
)

func main() {
	app := &cli.App{
		Name:     "zkraft",
		Usage:    "a ZooKeeper-compatible coordination service on Raft",
		Version:  buildinfo.Read().String(),
		Commands: commands(),
	}
	// --version (urfave's -v is kept for nothing else) prints the line
	// `zkraft version` prints, and nothing more.
	cli.VersionPrinter = func(c *cli.Context) { fmt.Fprintln(c.App.Writer, c.App.Version) }
	// `zkraft server zoo.cfg` is refused, not run with the defaults.
	cliargs.RefuseArguments(app.Commands)
	// Flags after a subcommand's arguments are honored (or refused), not
	// taken for arguments; the shell's own command options stay its own.
	if err := app.Run(cliargs.Reorder(app.Commands, os.Args, "shell")); err != nil {
		fmt.Fprintln(os.Stderr, "zkraft:", err)
		os.Exit(1)
	}
}

// commands lists the subcommands.
func commands() []*cli.Command {
	return []*cli.Command{serverCommand(), versionCommand(), shell.Command(), membersCommand(), statusCommand(), snapshotCommand(), importCommand(), migrateCommand(), rejoinCommand(), upgradeCommand(), digestCommand(), bench.Command(), lockCommand(), watchCommand(), electCommand()}
}

// versionCommand prints the module version, the VCS revision and the
// commit time the binary was built from, and the Go toolchain.
func versionCommand() *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print the version, the revision it was built from and the Go toolchain",
		Action: func(c *cli.Context) error {
			fmt.Fprintln(c.App.Writer, buildinfo.Read().String())
			return nil
		},
	}
}
