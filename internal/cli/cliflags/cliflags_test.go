package cliflags

import (
	"testing"
	"time"

	"github.com/urfave/cli/v2"
)

// TestParseCredential: scheme:credential, and user:password alone as
// digest (the form members --auth took); nothing without a colon.
func TestParseCredential(t *testing.T) {
	for in, want := range map[string]Credential{
		"digest:u:p":    {"digest", "u:p"},
		"u:p":           {"digest", "u:p"},
		"super:secret":  {"digest", "super:secret"},
		"digest:secret": {"digest", "digest:secret"}, // a user called digest
		"ip:10.0.0.1":   {"ip", "10.0.0.1"},
		"u:p,w:x":       {"digest", "u:p,w:x"},
	} {
		got, err := ParseCredential(in)
		if err != nil || got != want {
			t.Errorf("%q: %v %v, want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "nocolon", ":p"} {
		if _, err := ParseCredential(in); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}

// TestParseDuration: Go durations, bare milliseconds (zkCli's -timeout),
// no negative values, and no milliseconds that overflow a Duration (they
// wrapped to negative ones).
func TestParseDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{"10s": 10 * time.Second, "30000": 30 * time.Second, "1m30s": 90 * time.Second, "0": 0,
		"9223372036854": 9223372036854 * time.Millisecond} {
		if got, err := ParseDuration(in); err != nil || got != want {
			t.Errorf("%q: %v %v", in, got, err)
		}
	}
	for _, in := range []string{"-1", "-1s", "ten", "", "9300000000000", "9223372036854775807"} {
		if _, err := ParseDuration(in); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}

// TestOldSpellings: --json and an old timeout name still work, hidden.
func TestOldSpellings(t *testing.T) {
	var asJSON bool
	var timeout time.Duration
	var flags []cli.Flag
	flags = append(flags, Output("")...)
	flags = append(flags, Timeout(3*time.Second, "limit", "connect-timeout")...)
	app := &cli.App{Commands: []*cli.Command{{Name: "status", Flags: flags, Action: func(c *cli.Context) error {
		var err error
		asJSON, err = JSON(c)
		timeout = TimeoutValue(c, "connect-timeout")
		return err
	}}}}
	for _, tc := range []struct {
		args    []string
		json    bool
		timeout time.Duration
	}{
		{nil, false, 3 * time.Second},
		{[]string{"--json", "--connect-timeout", "1s"}, true, time.Second},
		{[]string{"-o", "json", "--timeout", "2s"}, true, 2 * time.Second},
		{[]string{"--output", "text", "--timeout", "250"}, false, 250 * time.Millisecond},
	} {
		if err := app.Run(append([]string{"zkraft", "status"}, tc.args...)); err != nil || asJSON != tc.json || timeout != tc.timeout {
			t.Errorf("%v: json %v timeout %v err %v", tc.args, asJSON, timeout, err)
		}
	}
	if err := app.Run([]string{"zkraft", "status", "-o", "yaml"}); err == nil {
		t.Error("-o yaml accepted")
	}
	for _, f := range flags {
		if vf, ok := f.(cli.VisibleFlag); ok && vf.IsVisible() != (f.Names()[0] == "output" || f.Names()[0] == "timeout") {
			t.Errorf("%s: visible %v", f.Names()[0], vf.IsVisible())
		}
	}
}
