package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/zkraft/zkraft/internal/cli/cliflags"
)

// canonicalFlags are the shared flags each client subcommand must have,
// spelled as internal/cli/cliflags spells them.
var canonicalFlags = map[string][]string{
	"shell":            {"server", "timeout", "output", "auth"},
	"status":           {"server", "timeout", "output"},
	"members list":     {"server", "timeout", "output", "auth"},
	"members add":      {"server", "timeout", "auth"},
	"members remove":   {"server", "timeout", "auth"},
	"bench":            {"server", "timeout", "output"},
	"snapshot save":    {"timeout", "auth"},
	"snapshot inspect": {"output"},
	"lock":             {"server", "timeout", "output", "auth"},
	"watch":            {"server", "timeout", "output", "auth"},
	"elect":            {"server", "timeout", "output", "auth"},
}

// retiredNames are spellings no subcommand may show any more; where
// scripts used them they are hidden flags.
var retiredNames = []string{"json", "connect-timeout", "servers", "endpoints", "timeout-ms", "credentials"}

// TestCanonicalFlags walks every subcommand's flags: the client commands
// have the canonical --server, --timeout, --output (-o) and --auth; no
// command shows an old spelling; --timeout is a duration everywhere;
// --output is text|json with -o; --server is a plain host:port list.
func TestCanonicalFlags(t *testing.T) {
	seen := map[string]bool{}
	var walk func(prefix string, cmds []*cli.Command)
	walk = func(prefix string, cmds []*cli.Command) {
		for _, c := range cmds {
			path := strings.TrimSpace(prefix + " " + c.Name)
			seen[path] = true
			checkFlags(t, path, c.Flags)
			walk(path, c.Subcommands)
		}
	}
	walk("", commands())
	for path := range canonicalFlags {
		if !seen[path] {
			t.Errorf("no subcommand %q", path)
		}
	}
}

func checkFlags(t *testing.T, path string, flags []cli.Flag) {
	t.Helper()
	byName := map[string]cli.Flag{}
	for _, f := range flags {
		for _, n := range f.Names() {
			byName[n] = f
		}
		visible := true
		if v, ok := f.(cli.VisibleFlag); ok {
			visible = v.IsVisible()
		}
		if name := f.Names()[0]; visible && slices.Contains(retiredNames, name) {
			t.Errorf("%s: --%s shown; use the canonical flag and keep --%s hidden", path, name, name)
		}
	}
	for _, want := range canonicalFlags[path] {
		if byName[want] == nil {
			t.Errorf("%s: no --%s", path, want)
		}
	}
	if f := byName[cliflags.TimeoutName]; f != nil {
		_, isDuration := f.(*cli.DurationFlag)
		if g, ok := f.(*cli.GenericFlag); ok {
			_, isDuration = g.Value.(*cliflags.Duration)
		}
		if !isDuration {
			t.Errorf("%s: --timeout is a %T, not a duration", path, f)
		}
	}
	if f := byName[cliflags.OutputName]; f != nil && !slices.Contains(f.Names(), "o") {
		t.Errorf("%s: --output without -o", path)
	}
	if f := byName[cliflags.ServerName]; f != nil {
		if _, ok := f.(*cli.StringFlag); !ok {
			t.Errorf("%s: --server is a %T, want a host:port[,host:port] string", path, f)
		}
	}
}
