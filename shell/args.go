package shell

import (
	"fmt"
	"regexp"
	"strings"
)

// argsPattern is ZooKeeperMain's tokenizer: a bare word, or a word wrapped
// in double or single quotes (which may contain spaces).
var argsPattern = regexp.MustCompile(`\s*([^"']\S*|"[^"]*"|'[^']*')\s*`)

// splitLine tokenizes a command line as zkCli does. Quotes are removed from
// a token that starts and ends with the same quote character.
func splitLine(line string) []string {
	var out []string
	for _, m := range argsPattern.FindAllStringSubmatch(line, -1) {
		v := m[1]
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		out = append(out, v)
	}
	return out
}

// optSpec declares one option of a command, as commons-cli's Option.
type optSpec struct {
	name   string // short name, may be several letters ("file")
	hasArg bool
	desc   string
	group  int // options with the same non-zero group exclude each other
}

// parsedArgs is the result of parseArgs: positional arguments (the command
// name first, as commons-cli's getArgs) and the options seen.
type parsedArgs struct {
	args []string
	opts map[string][]string
}

// has reports whether option name was given.
func (p *parsedArgs) has(name string) bool {
	_, ok := p.opts[name]
	return ok
}

// value returns the first value given for option name.
func (p *parsedArgs) value(name string) string {
	v := p.opts[name]
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

// outputFlag is the shell's own long option selecting the output format of
// read commands; it is accepted only by commands that declare it, also as
// -o (which no zkCli command has), as zkraft shell's own flag is spelled.
const outputFlag = "output"

// isOutputToken reports whether tok is --output or -o, with or without
// "=value", and returns the value if it holds one.
func isOutputToken(tok string) (val string, hasVal, ok bool) {
	var name string
	switch {
	case strings.HasPrefix(tok, "--"):
		name, val, hasVal = strings.Cut(tok[2:], "=")
		return val, hasVal, name == outputFlag
	case strings.HasPrefix(tok, "-"):
		name, val, hasVal = strings.Cut(tok[1:], "=")
		return val, hasVal, name == "o"
	}
	return "", false, false
}

// isOutput reports whether tok is --output or -o.
func isOutput(tok string) bool {
	_, _, ok := isOutputToken(tok)
	return ok
}

// parseArgs parses tokens as commons-cli's DefaultParser does for zkCli:
// options may appear anywhere, "-abc" is either an option named abc or the
// concatenation of -a -b -c, "-v5" gives option v the value 5, and "--"
// ends option processing. Errors carry the exception text zkCli prints.
func parseArgs(tokens []string, specs []optSpec, longOutput bool) (*parsedArgs, error) {
	p := &parsedArgs{opts: map[string][]string{}}
	byName := map[string]optSpec{}
	for _, s := range specs {
		byName[s.name] = s
	}
	var pendingOpt string // option still waiting for its value
	groupSeen := map[int]string{}

	isOptionToken := func(tok string) bool {
		if !strings.HasPrefix(tok, "-") || len(tok) < 2 {
			return false
		}
		if _, _, ok := isOutputToken(tok); ok && longOutput {
			return true
		}
		if strings.HasPrefix(tok, "--") {
			name := strings.TrimPrefix(tok, "--")
			name, _, _ = strings.Cut(name, "=")
			_, ok := byName[name]
			return ok
		}
		name := tok[1:]
		name, _, _ = strings.Cut(name, "=")
		if _, ok := byName[name]; ok {
			return true
		}
		_, ok := byName[name[:1]]
		return ok
	}
	missing := func(name string) error {
		return fmt.Errorf("org.apache.commons.cli.MissingArgumentException: Missing argument for option: %s", name)
	}
	addOpt := func(name string) error {
		if pendingOpt != "" {
			return missing(pendingOpt)
		}
		s := byName[name]
		if s.group != 0 {
			if prev, ok := groupSeen[s.group]; ok && prev != name {
				return fmt.Errorf("org.apache.commons.cli.AlreadySelectedException: The option '%s' was specified but an option from this group has already been selected: '%s'", name, prev)
			}
			groupSeen[s.group] = name
		}
		if _, ok := p.opts[name]; !ok {
			p.opts[name] = nil
		}
		if s.hasArg {
			pendingOpt = name
		}
		return nil
	}
	unrecognized := func(tok string) error {
		return fmt.Errorf("org.apache.commons.cli.UnrecognizedOptionException: Unrecognized option: %s", tok)
	}

	skip := false
	for i := 0; i < len(tokens); i++ {
		tok := tokens[i]
		switch {
		case skip:
			p.args = append(p.args, tok)
		case pendingOpt != "" && !isOptionToken(tok):
			p.opts[pendingOpt] = append(p.opts[pendingOpt], tok)
			pendingOpt = ""
		case tok == "--":
			skip = true
		case tok == "-":
			p.args = append(p.args, tok)
		case longOutput && isOutput(tok):
			val, hasVal, _ := isOutputToken(tok)
			if pendingOpt != "" {
				return nil, missing(pendingOpt)
			}
			if !hasVal {
				if i+1 >= len(tokens) {
					return nil, fmt.Errorf("org.apache.commons.cli.MissingArgumentException: Missing argument for option: %s", outputFlag)
				}
				i++
				val = tokens[i]
			}
			p.opts[outputFlag] = append(p.opts[outputFlag], val)
		case strings.HasPrefix(tok, "--"):
			name, val, hasVal := strings.Cut(tok[2:], "=")
			if _, ok := byName[name]; !ok {
				return nil, unrecognized(tok)
			}
			if err := addOpt(name); err != nil {
				return nil, err
			}
			if hasVal && pendingOpt == name {
				p.opts[name] = append(p.opts[name], val)
				pendingOpt = ""
			}
		case strings.HasPrefix(tok, "-"):
			t := tok[1:]
			if name, val, ok := strings.Cut(t, "="); ok {
				if s, known := byName[name]; known && s.hasArg {
					if err := addOpt(name); err != nil {
						return nil, err
					}
					p.opts[name] = append(p.opts[name], val)
					pendingOpt = ""
					continue
				}
			}
			if _, ok := byName[t]; ok {
				if err := addOpt(t); err != nil {
					return nil, err
				}
				continue
			}
			if len(t) == 1 {
				return nil, unrecognized(tok)
			}
			// Concatenated short options, the first one taking the rest as
			// its value if it has one.
			for j := 0; j < len(t); j++ {
				name := t[j : j+1]
				if _, ok := byName[name]; !ok {
					return nil, unrecognized(tok)
				}
				if err := addOpt(name); err != nil {
					return nil, err
				}
				if pendingOpt != "" && j+1 < len(t) {
					p.opts[name] = append(p.opts[name], t[j+1:])
					pendingOpt = ""
					break
				}
			}
		default:
			p.args = append(p.args, tok)
		}
	}
	if pendingOpt != "" {
		return nil, missing(pendingOpt)
	}
	return p, nil
}

// optionsHelp renders options as commons-cli's HelpFormatter.printOptions
// does with its defaults, sorted by name; zkCli 3.9 appends it to the usage
// of get and set.
func optionsHelp(specs []optSpec) string {
	sorted := append([]optSpec(nil), specs...)
	for i := 1; i < len(sorted); i++ {
		for j := i; j > 0 && strings.ToLower(sorted[j].name) < strings.ToLower(sorted[j-1].name); j-- {
			sorted[j], sorted[j-1] = sorted[j-1], sorted[j]
		}
	}
	lead := func(s optSpec) string {
		if s.hasArg {
			return " -" + s.name + " <arg>"
		}
		return " -" + s.name
	}
	width := 0
	for _, s := range sorted {
		width = max(width, len(lead(s)))
	}
	var b strings.Builder
	for _, s := range sorted {
		l := lead(s)
		fmt.Fprintf(&b, "%s%s   %s\n", l, strings.Repeat(" ", width-len(l)), s.desc)
	}
	return b.String()
}
