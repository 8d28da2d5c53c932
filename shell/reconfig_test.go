package shell

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/zkraft/zkraft/internal/cli/fourletter"
	"github.com/zkraft/zkraft/internal/testing/testenv"
)

// TestReconfig runs config and reconfig (which go through the tap) against a
// one-member ensemble that accepts reconfiguration, through zkCli and
// zkraft shell (config versions are normalized, so both can share one
// server). ZKRAFT_SHELL_TEST_RECONFIG_SERVER names an existing such server
// instead (then only the shell runs).
func TestReconfig(t *testing.T) {
	script := strings.Join([]string{
		"config",
		"config -c",
		"reconfig -members server.1=SELF",
		"reconfig -s -v 1 -remove 1",
		"reconfig -add server.2=127.0.0.1:1:2;3",
		"config -s",
	}, "\n") + "\n"
	addr := os.Getenv("ZKRAFT_SHELL_TEST_RECONFIG_SERVER")
	if addr == "" {
		a, stop, err := startReconfigZooKeeper()
		if err != nil {
			testenv.Require(t, fmt.Errorf("start reconfig server: %w", err))
		}
		defer stop()
		addr = a
	}
	run := func(zkCli bool) string {
		// The member's own line, as config prints it.
		self := regexp.MustCompile(`server\.1=(\S+)`).FindStringSubmatch(fourletter.Ask(addr, "conf"))
		if self == nil {
			t.Fatalf("no server.1 in conf of %s", addr)
		}
		sc := strings.Replace(script, "SELF", self[1], 1)
		var out string
		if zkCli {
			out, _ = runZkCli(t, addr, sc)
		} else {
			out, _ = runOurs(t, addr, sc)
		}
		out = strings.ReplaceAll(out, self[1], "SELF")
		out = regexp.MustCompile(`(?m)^version=[0-9a-f]+$`).ReplaceAllString(out, "version=V")
		out = regexp.MustCompile(`(?m)^[0-9a-f]+ 127\.0\.0\.1:\d+$`).ReplaceAllString(out, "V CLIENT")
		// Debian's 3.8 zkCli spells it "committed"; upstream 3.8 and 3.9 (and
		// this shell) "commmitted".
		out = strings.ReplaceAll(out, "last committed config", "last commmitted config")
		return normalize(out, addr)
	}
	got := run(false)
	for _, want := range []string{"Committed new configuration:\nserver.1=SELF\nversion=V\n", "V CLIENT\n", "version No is not valid : \n"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if !javaAvailable() || os.Getenv("ZKRAFT_SHELL_TEST_RECONFIG_SERVER") != "" {
		return
	}
	if want := run(true); got != want {
		t.Errorf("differs from zkCli (- zkCli, + zkraft):\n%s", diffLines(want, got))
	}
}
