package main

import (
	"github.com/urfave/cli/v2"

	"github.com/zkraft/zkraft/shell/recipes/elect"
)

// electCommand is "zkraft elect": package elect binds its own flags.
func electCommand() *cli.Command { return elect.Command(serverFlag(), dialSession) }
