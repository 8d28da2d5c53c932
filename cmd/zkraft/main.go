// Command zkraft is a ZooKeeper-compatible coordination server replicated
// with Raft. `zkraft server` serves the ZooKeeper client protocol.
package main

import (
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/zkraft/zkraft/bench"
	"github.com/zkraft/zkraft/shell"
)

func main() {
	app := &cli.App{
		Name:     "zkraft",
		Usage:    "a ZooKeeper-compatible coordination service on Raft",
		Commands: commands(),
	}
	if err := app.Run(os.Args); err != nil {
		fmt.Fprintln(os.Stderr, "zkraft:", err)
		os.Exit(1)
	}
}

// commands lists the subcommands.
func commands() []*cli.Command {
	return []*cli.Command{serverCommand(), shell.Command(), membersCommand(), importCommand(), rejoinCommand(), digestCommand(), bench.Command()}
}
