package cliargs

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// testCommands is a command tree shaped like zkraft's: a command with
// flags and arguments, one with subcommands, and a shell whose arguments
// are a command line of their own.
func testCommands(got *[]string, flags *map[string]string) []*cli.Command {
	record := func(c *cli.Context) error {
		*got = c.Args().Slice()
		*flags = map[string]string{"server": c.String("server"), "output": c.String("output"), "file": c.String("file")}
		for _, n := range []string{"json", "e"} {
			if c.Bool(n) {
				(*flags)[n] = "true"
			}
		}
		return nil
	}
	conn := func() []cli.Flag {
		return []cli.Flag{
			&cli.StringFlag{Name: "server", Value: "def"},
			&cli.BoolFlag{Name: "json"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}},
			&cli.BoolFlag{Name: "e"},
			&cli.StringFlag{Name: "file"},
		}
	}
	return []*cli.Command{
		{Name: "status", Flags: conn(), Action: record},
		{Name: "members", Subcommands: []*cli.Command{
			{Name: "remove", Flags: conn(), Action: record},
		}},
		{Name: "shell", Flags: conn(), Action: record},
	}
}

// run runs args through Reorder and a test App.
func run(t *testing.T, args ...string) ([]string, map[string]string, error) {
	t.Helper()
	var got []string
	var flags map[string]string
	var out bytes.Buffer
	app := &cli.App{Name: "zkraft", Commands: testCommands(&got, &flags), Writer: &out, ErrWriter: &out}
	err := app.Run(Reorder(app.Commands, append([]string{"zkraft"}, args...), "shell"))
	return got, flags, err
}

// TestReorderHonorsLateFlags: a flag after the arguments, with its value
// as the next token or after "=", is parsed as a flag on a command and on
// a subcommand; the arguments keep their order.
func TestReorderHonorsLateFlags(t *testing.T) {
	for _, args := range [][]string{
		{"status", "a", "--server", "h:1", "b", "--json"},
		{"status", "a", "b", "--server=h:1", "-json"},
		{"status", "--server", "h:1", "a", "b", "--json"},
		{"members", "remove", "a", "b", "-server", "h:1", "--json"},
	} {
		got, flags, err := run(t, args...)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if !slices.Equal(got, []string{"a", "b"}) || flags["server"] != "h:1" || flags["json"] != "true" {
			t.Errorf("%v: args %q flags %v", args, got, flags)
		}
	}
}

// TestReorderRefusesUnknownLateFlags: a flag-looking token after the
// arguments that names no flag of the command fails the command, as it
// would before them.
func TestReorderRefusesUnknownLateFlags(t *testing.T) {
	for _, args := range [][]string{
		{"status", "a", "--bogus"},
		{"members", "remove", "3", "--servers", "h:1"},
	} {
		_, _, err := run(t, args...)
		if err == nil || !strings.Contains(err.Error(), "flag provided but not defined") {
			t.Errorf("%v: %v, want it refused", args, err)
		}
	}
}

// TestReorderKeepsArgumentsAfterDoubleDash: "--", a lone "-" and negative
// numbers are arguments.
func TestReorderKeepsArgumentsAfterDoubleDash(t *testing.T) {
	got, flags, err := run(t, "status", "-", "-1", "--json", "--", "--server", "x")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []string{"-", "-1", "--", "--server", "x"}) || flags["server"] != "def" || flags["json"] != "true" {
		t.Errorf("args %q flags %v", got, flags)
	}
}

// TestReorderShellKeepsCommandOptions: after the shell's command only the
// shell's long flags written with two dashes move; single letters
// (create -e, ls -s), single-dash words (reconfig -file, though the shell
// has a --file) and unknown options stay in the command line the shell
// parses.
func TestReorderShellKeepsCommandOptions(t *testing.T) {
	got, flags, err := run(t, "shell", "create", "-e", "/x", "--server", "h:1", "-s", "--bogus", "-o", "json", "--output", "json", "-file", "f")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"create", "-e", "/x", "-s", "--bogus", "-o", "json", "-file", "f"}
	if !slices.Equal(got, want) || flags["server"] != "h:1" || flags["e"] != "" || flags["output"] != "json" || flags["file"] != "" {
		t.Errorf("args %q flags %v, want %q", got, flags, want)
	}
	// Before the command, the shell's flags are all its own.
	if _, flags, err = run(t, "shell", "-e", "ls", "/"); err != nil || flags["e"] != "true" {
		t.Errorf("shell -e ls /: %v %v", flags, err)
	}
}

// TestRefuseArguments: a command declaring no arguments fails when given
// one (after the flags were reordered too); one declaring some, and a
// command without arguments, run.
func TestRefuseArguments(t *testing.T) {
	ran := ""
	cmds := []*cli.Command{
		{Name: "server", Flags: []cli.Flag{&cli.StringFlag{Name: "config"}}, Action: func(*cli.Context) error { ran = "server"; return nil }},
		{Name: "digest", ArgsUsage: "USER:PASSWORD", Action: func(*cli.Context) error { ran = "digest"; return nil }},
		{Name: "members", Subcommands: []*cli.Command{{Name: "list", Action: func(*cli.Context) error { ran = "list"; return nil }}}},
	}
	RefuseArguments(cmds)
	app := &cli.App{Name: "zkraft", Commands: cmds, Writer: &bytes.Buffer{}, ErrWriter: &bytes.Buffer{}}
	run := func(args ...string) error {
		ran = ""
		return app.Run(Reorder(cmds, append([]string{"zkraft"}, args...)))
	}
	for _, args := range [][]string{{"server", "zoo.cfg"}, {"server", "--config", "a", "zoo.cfg"}, {"members", "list", "x"}} {
		if err := run(args...); err == nil || !strings.Contains(err.Error(), `unexpected argument`) || ran != "" {
			t.Errorf("%v: %v (ran %q)", args, err, ran)
		}
	}
	for args, want := range map[string]string{"server --config a": "server", "digest a:b": "digest", "members list": "list"} {
		if err := run(strings.Fields(args)...); err != nil || ran != want {
			t.Errorf("%s: %v (ran %q)", args, err, ran)
		}
	}
}
