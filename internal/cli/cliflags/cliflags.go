// Package cliflags declares the flags that zkraft's client subcommands
// (shell, status, members, bench...) share, so each is spelled one way
// everywhere: --server for the address list, --timeout as a duration,
// --output/-o json for JSON and --auth scheme:credential for credentials.
// Spellings that scripts may still use (--json, --connect-timeout) are
// kept as hidden flags that the readers here honor.
package cliflags

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/urfave/cli/v2"
)

// The canonical flag names; TestCanonicalFlags in cmd/zkraft holds every
// subcommand to them.
const (
	ServerName  = "server"
	TimeoutName = "timeout"
	OutputName  = "output"
	AuthName    = "auth"
	jsonName    = "json" // the hidden --json, as --output json
)

// Server is --server, a comma-separated host:port list with default def.
func Server(def, usage string) cli.Flag {
	if usage == "" {
		usage = "host:port[,host:port...]"
	}
	return &cli.StringFlag{Name: ServerName, Value: def, Usage: usage}
}

// Timeout is --timeout, a duration ("10s"; a bare number is milliseconds,
// as zkCli's -timeout), plus hidden flags under the old names that
// TimeoutValue also reads.
func Timeout(def time.Duration, usage string, oldNames ...string) []cli.Flag {
	flags := []cli.Flag{&cli.GenericFlag{Name: TimeoutName, Value: &Duration{D: def}, Usage: usage + " (a duration: 10s, 500ms; a bare number is milliseconds)"}}
	for _, n := range oldNames {
		flags = append(flags, &cli.GenericFlag{Name: n, Value: &Duration{D: def}, Hidden: true})
	}
	return flags
}

// TimeoutValue returns --timeout, or the first old spelling given instead.
func TimeoutValue(c *cli.Context, oldNames ...string) time.Duration {
	for _, n := range oldNames {
		if c.IsSet(n) {
			return durationOf(c, n)
		}
	}
	return durationOf(c, TimeoutName)
}

func durationOf(c *cli.Context, name string) time.Duration {
	if d, ok := c.Generic(name).(*Duration); ok {
		return d.D
	}
	return 0
}

// Output is --output/-o (text or json) and the hidden --json, which
// JSON reads.
func Output(usage string) []cli.Flag {
	if usage == "" {
		usage = "output format: text or json"
	}
	return []cli.Flag{
		&cli.StringFlag{Name: OutputName, Aliases: []string{"o"}, Usage: usage},
		&cli.BoolFlag{Name: jsonName, Hidden: true},
	}
}

// JSON reports whether --output json (or --json) was asked for; an output
// format other than text or json is an error.
func JSON(c *cli.Context) (bool, error) {
	if c.Bool(jsonName) {
		return true, nil
	}
	switch f := c.String(OutputName); f {
	case "", "text":
		return false, nil
	case "json":
		return true, nil
	default:
		return false, fmt.Errorf("--output %q: want text or json", f)
	}
}

// Duration is a flag value holding a time.Duration written as a Go
// duration or as a number of milliseconds.
type Duration struct{ D time.Duration }

// Set parses "10s" or "10000" (milliseconds).
func (d *Duration) Set(s string) error {
	v, err := ParseDuration(s)
	if err != nil {
		return err
	}
	d.D = v
	return nil
}

// String prints the duration as Go does ("30s").
func (d *Duration) String() string {
	if d == nil {
		return ""
	}
	return d.D.String()
}

// ParseDuration reads a Go duration ("10s") or a bare number of
// milliseconds ("10000"), and refuses negative values.
func ParseDuration(s string) (time.Duration, error) {
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		if ms < 0 {
			return 0, fmt.Errorf("%q: negative", s)
		}
		if ms > math.MaxInt64/int64(time.Millisecond) {
			// It would wrap to a negative or short duration.
			return 0, fmt.Errorf("%q milliseconds: too long", s)
		}
		return time.Duration(ms) * time.Millisecond, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q: want a duration (10s, 500ms) or milliseconds: %w", s, err)
	}
	if d < 0 {
		return 0, fmt.Errorf("%q: negative", s)
	}
	return d, nil
}
