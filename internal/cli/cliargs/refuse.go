package cliargs

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"
)

// RefuseArguments makes every command that declares no arguments (an
// empty ArgsUsage) fail when given some, instead of ignoring them: `zkraft
// status a:2181` would otherwise probe the default --server. It
// wraps the Actions of commands and, recursively, of their subcommands.
func RefuseArguments(commands []*cli.Command) {
	for _, c := range commands {
		RefuseArguments(c.Subcommands)
		if c.Action == nil || strings.TrimSpace(c.ArgsUsage) != "" {
			continue
		}
		action := c.Action
		c.Action = func(ctx *cli.Context) error {
			if ctx.NArg() > 0 {
				return fmt.Errorf("%s: unexpected argument %q: it takes none, only flags (see --help)", ctx.Command.FullName(), ctx.Args().First())
			}
			return action(ctx)
		}
	}
}
