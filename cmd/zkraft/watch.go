package main

import (
	"github.com/urfave/cli/v2"

	"github.com/zkraft/zkraft/shell/recipes/watch"
)

// watchCommand is "zkraft watch PATH", bound in its own package.
func watchCommand() *cli.Command { return watch.Command(serverFlag(), dialSession) }
