package shell

import (
	"encoding/json"
	"fmt"
	"time"
)

// cmdSpec describes one shell command: its name, the option string zkCli
// lists in its usage, its options, and the function running it. Commands
// handled by the shell loop itself (history, redo, ...) have a nil run.
type cmdSpec struct {
	name  string
	usage string
	opts  []optSpec
	json  bool // accepts --output json
	run   func(s *Shell, p *parsedArgs) error
}

// usageStr is CliCommand.getUsageStr: name and option string, plus the
// options table for the commands zkCli 3.9 builds with one (get, set).
func (c *cmdSpec) usageStr() string {
	u := c.name + " " + c.usage
	if c.name == "get" || c.name == "set" {
		u += "\n" + optionsHelp(c.opts)
	}
	return u
}

// commandTable lists every command. Built per Shell: there is no global
// registry.
func commandTable() map[string]*cmdSpec {
	list := []*cmdSpec{
		{name: "connect", usage: "host:port"},
		{name: "history", usage: ""},
		{name: "redo", usage: "cmdno"},
		{name: "printwatches", usage: "on|off"},
		{name: "quit", usage: ""},
	}
	list = append(list, nodeCommands()...)
	list = append(list, aclCommands()...)
	list = append(list, watchCommands()...)
	list = append(list, quotaCommands()...)
	list = append(list, adminCommands()...)
	list = append(list, treeCommand())
	m := make(map[string]*cmdSpec, len(list))
	for _, c := range list {
		m[c.name] = c
	}
	return m
}

// opTimeout bounds a tap request (the ops go-zookeeper has no method for).
func (s *Shell) opTimeout() time.Duration { return s.opts.Timeout }

// jsonOutput reports whether p asks for JSON, by --output or the shell's
// default. Any other format is an error.
func (s *Shell) jsonOutput(p *parsedArgs) (bool, error) {
	f := s.opts.Output
	if p.has(outputFlag) {
		f = p.value(outputFlag)
	}
	switch f {
	case "", "text":
		return false, nil
	case "json":
		return true, nil
	}
	return false, failf("unknown output format %q (want text or json)", f)
}

// printJSON writes v as one line of JSON on stdout.
func (s *Shell) printJSON(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode json: %w", err)
	}
	s.outMu.Lock()
	defer s.outMu.Unlock()
	fmt.Fprintf(s.out, "%s\n", b)
	return nil
}
