package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestServerHelpGrouped: `zkraft server --help` lists the flags under
// topic headings (network, storage, ensemble, sessions, security, limits,
// znodes, observability), and every flag but --config has a topic, so a
// new flag cannot land outside the groups.
func TestServerHelpGrouped(t *testing.T) {
	for _, f := range serverCommand().Flags {
		name := f.Names()[0]
		cf, ok := f.(cli.CategorizableFlag)
		if name != "config" && (!ok || cf.GetCategory() == "") {
			t.Errorf("--%s has no category: give its entry in serverSettings (server/settingsdata.go) a Topic", name)
		}
	}
	out, err := runApp("server", "--help")
	if err != nil {
		t.Fatal(err)
	}
	// section heading -> the flags listed under it.
	sections := map[string][]string{}
	heading := ""
	flagRE := regexp.MustCompile(`^\s+--([a-z0-9-]+)`)
	for _, line := range strings.Split(out, "\n") {
		if m := flagRE.FindStringSubmatch(line); m != nil {
			sections[heading] = append(sections[heading], m[1])
		} else if h := strings.TrimSpace(line); h != "" && !strings.Contains(h, " ") && !strings.HasSuffix(h, ":") {
			heading = h
		}
	}
	for flag, want := range map[string]string{
		"client-addr": "Network", "data-dir": "Storage", "peers": "Ensemble", "tick-time": "Sessions",
		"tls-keystore": "Security", "super-digest": "Security", "max-client-cnxns": "Limits",
		"extended-types": "Znodes", "metrics-addr": "Observability", "log-level": "Observability",
	} {
		found := false
		for _, f := range sections[want] {
			found = found || f == flag
		}
		if !found {
			t.Errorf("--%s not under %s:\n%s", flag, want, out)
		}
	}
}
