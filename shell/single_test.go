package shell

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestSingleCommand checks "zkraft shell -server X cmd args": one command,
// then exit with zkCli's status (0 ok, 1 failed, 127 unknown command), with
// the same output as zkCli when java is present.
func TestSingleCommand(t *testing.T) {
	addr := testServer(t)
	resetRoot(t, addr, "/t_single")
	t.Cleanup(func() { resetRoot(t, addr, "/t_single") })
	cases := []struct {
		args []string
		code int
	}{
		{[]string{"create", "/t_single", "data"}, 0},
		{[]string{"get", "/t_single"}, 0},
		{[]string{"get", "-s", "/t_single"}, 0},
		{[]string{"get", "/t_single/missing"}, 1},
		{[]string{"create", "/t_single"}, 1},
		{[]string{"ls"}, 1},
		{[]string{"get", "-z", "/t_single"}, 1},
		{[]string{"nosuchcommand", "x"}, 127},
		{[]string{"delete", "/t_single"}, 0},
	}
	java := javaAvailable()
	for _, c := range cases {
		name := strings.Join(c.args, " ")
		out, code := runOurs(t, addr, "", c.args...)
		got := normalize(out, addr)
		if code != c.code {
			t.Errorf("%s: exit %d, want %d; output:\n%s", name, code, c.code, out)
		}
		if !java {
			continue
		}
		// Undo the command's effect on the server for zkCli's turn.
		switch c.args[0] {
		case "create":
			if code == 0 {
				resetRoot(t, addr, "/t_single")
			}
		case "delete":
			runOurs(t, addr, "", "create", "/t_single", "data")
		}
		jout, jcode := runZkCli(t, addr, "", c.args...)
		want := normalize(jout, addr)
		if c.args[0] == "nosuchcommand" {
			got = as38Usage(got)
		}
		if jcode != code {
			t.Errorf("%s: exit %d, zkCli exits %d", name, code, jcode)
		}
		if got != want {
			t.Errorf("%s: output differs (- zkCli, + zkraft):\n%s", name, diffLines(want, got))
		}
	}
}

// as38Usage rewrites the usage listing's 3.9-only lines (get -b -x, set's
// new option order) as Debian's zkCli 3.8 prints them, and drops the
// shell's own tree command, so the rest of the listing can be compared.
func as38Usage(s string) string {
	s = strings.Replace(s, "\tget [-s] [-w] [-b] [-x] path\n", "\tget [-s] [-w] path\n", 1)
	s = strings.Replace(s, "\tset path data [-s] [-v version] [-b]\n", "\tset [-s] [-v version] path data\n", 1)
	return strings.Replace(s, "\ttree [-d depth] path\n", "", 1)
}

// TestFlags checks zkCli's single-dash flags and the GNU-style spellings.
func TestFlags(t *testing.T) {
	addr := testServer(t)
	for _, args := range [][]string{
		{"-server", addr, "-timeout", "5000", "stat", "/"},
		{"--server", addr, "--timeout=5000", "stat", "/"},
		{"--server=" + addr, "-waitforconnection", "stat", "/"},
	} {
		cmd := exec.Command(os.Args[0], append([]string{"shell"}, args...)...)
		cmd.Env = append(os.Environ(), execEnv+"=1")
		out, code := runCombined(t, cmd, "")
		if code != 0 || !strings.Contains(out, "Connecting to "+addr+"\n") || !strings.Contains(out, "numChildren = ") {
			t.Errorf("%q: exit %d, output:\n%s", args, code, out)
		}
	}
	for _, args := range [][]string{
		{"-server", addr, "-o", "json", "ls", "/zookeeper"},
		{"-server", addr, "--output", "json", "ls", "/zookeeper"},
		{"-server", addr, "ls", "--output", "json", "/zookeeper"},
	} {
		cmd := exec.Command(os.Args[0], append([]string{"shell"}, args...)...)
		cmd.Env = append(os.Environ(), execEnv+"=1")
		out, code := runCombined(t, cmd, "")
		if code != 0 || !strings.Contains(out, `{"path":"/zookeeper","children":["config","quota"]}`) {
			t.Errorf("%q: exit %d, output:\n%s", args, code, out)
		}
	}
}
