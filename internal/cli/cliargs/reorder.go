// Package cliargs makes urfave/cli/v2 honor flags written after a
// subcommand's positional arguments.
//
// urfave/cli v2 parses a command's flags with Go's flag package, which
// stops at the first positional argument: in `zkraft status x --json` the
// --json is an argument like x, and commands that ignore their arguments
// ignore it silently. Reorder rewrites the command line before the App
// parses it: every flag token after a positional argument (with its value)
// moves in front of the positional arguments, so it is honored, and a token
// naming no flag of the command moves too, so urfave refuses it ("flag
// provided but not defined"). "--" ends the flags as usual: what follows it
// is left alone.
package cliargs

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// Reorder returns args (os.Args: the program name first) with each
// command's flags moved in front of its positional arguments. commands are
// the App's commands. The commands named in passThrough (top-level names,
// e.g. "shell") take a command line with options of its own as their
// arguments: after their first positional argument only their long flags
// written with two dashes move (--server, --timeout); everything else
// (ls -s, create -e, reconfig -file) stays where it is for the command to
// parse.
func Reorder(commands []*cli.Command, args []string, passThrough ...string) []string {
	if len(args) < 2 {
		return args
	}
	out := []string{args[0]}
	rest := args[1:]
	// Global options (--help, --version) come before the command name.
	for len(rest) > 0 && isFlagToken(rest[0]) {
		out = append(out, rest[0])
		rest = rest[1:]
	}
	if len(rest) == 0 {
		return out
	}
	cmd := find(commands, rest[0])
	if cmd == nil {
		return append(out, rest...)
	}
	out = append(out, rest[0])
	pass := false
	for _, n := range passThrough {
		pass = pass || cmd.HasName(n)
	}
	return append(out, reorderCommand(cmd, rest[1:], pass)...)
}

// reorderCommand reorders the arguments following cmd's name, descending
// into its subcommands.
func reorderCommand(cmd *cli.Command, args []string, pass bool) []string {
	var flags, positional []string
	for i := 0; i < len(args); i++ {
		tok := args[i]
		if tok == "--" {
			positional = append(positional, args[i:]...)
			break
		}
		if !isFlagToken(tok) {
			if len(positional) == 0 && len(cmd.Subcommands) > 0 {
				if sub := find(cmd.Subcommands, tok); sub != nil {
					return append(append(flags, tok), reorderCommand(sub, args[i+1:], pass)...)
				}
			}
			positional = append(positional, tok)
			continue
		}
		name, hasValue := flagName(tok)
		f := lookup(cmd, name)
		if pass && len(positional) > 0 && (f == nil || len(name) < 2 || !strings.HasPrefix(tok, "--")) {
			positional = append(positional, tok) // the shell command's option
			continue
		}
		flags = append(flags, tok)
		if f != nil && takesValue(f) && !hasValue && i+1 < len(args) {
			i++
			flags = append(flags, args[i])
		}
	}
	return append(flags, positional...)
}

// isFlagToken reports whether tok is written as a flag: "-x", "--name",
// "--name=value"; "-" alone and negative numbers are arguments.
func isFlagToken(tok string) bool {
	if len(tok) < 2 || tok[0] != '-' {
		return false
	}
	return !(tok[1] >= '0' && tok[1] <= '9')
}

// flagName returns the name in a flag token and whether the token holds
// its value ("--name=value").
func flagName(tok string) (string, bool) {
	name := strings.TrimLeft(tok, "-")
	name, _, hasValue := strings.Cut(name, "=")
	return name, hasValue
}

// find returns the command named (or aliased) name, or nil.
func find(commands []*cli.Command, name string) *cli.Command {
	for _, c := range commands {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}

// lookup returns cmd's flag called name (or the help flag), or nil.
func lookup(cmd *cli.Command, name string) cli.Flag {
	flags := cmd.Flags
	if !cmd.HideHelp {
		flags = append(flags[:len(flags):len(flags)], cli.HelpFlag)
	}
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == name {
				return f
			}
		}
	}
	return nil
}

// takesValue reports whether f consumes the next token as its value.
func takesValue(f cli.Flag) bool {
	if tv, ok := f.(interface{ TakesValue() bool }); ok {
		return tv.TakesValue()
	}
	return true
}
