package cli

import (
	"bytes"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zkraft/zkraft/internal/testing/procs"
	"github.com/zkraft/zkraft/internal/testing/testproc"
)

// runBinary runs the built zkraft with args and returns stdout, stderr and
// the exit status.
func runBinary(t *testing.T, stdin string, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := testproc.Command(procs.Binary(t), args...)
	var out, errw bytes.Buffer
	cmd.Stdout, cmd.Stderr, cmd.Stdin = &out, &errw, strings.NewReader(stdin)
	if env != nil {
		cmd.Env = append(cmd.Environ(), env...)
	}
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("zkraft %v: %v", args, err)
	}
	return out.String(), errw.String(), code
}

// TestFlagsAfterArguments: flags written after a subcommand's arguments
// are honored (members, status, shell), an unknown one is refused
// (digest), and the shell's command keeps its own options (ls -s). A
// command that takes no arguments refuses them (status); server takes a
// zoo.cfg as zkServer.sh gives it.
func TestFlagsAfterArguments(t *testing.T) {
	t.Parallel()
	// members: --server and --timeout after the id (the member is down).
	_, errs, code := runBinary(t, "", nil, "members", "remove", "3", "--server", "127.0.0.1:1", "--timeout", "1s")
	if code != 1 || !strings.Contains(errs, "connect to 127.0.0.1:1: no session") {
		t.Errorf("members remove 3 --server --timeout: exit %d:\n%s", code, errs)
	}
	// status takes no arguments: one is refused, and its late flags work.
	_, errs, code = runBinary(t, "", nil, "status", "extra", "--server", "127.0.0.1:1", "--json")
	if code != 1 || !strings.Contains(errs, `zkraft: status: unexpected argument "extra"`) {
		t.Errorf("status extra: exit %d:\n%s", code, errs)
	}
	out, _, code := runBinary(t, "", nil, "status", "--server", "127.0.0.1:2", "-o", "json", "--timeout", "1s")
	var statuses []struct {
		Address string `json:"address"`
	}
	if err := json.Unmarshal([]byte(out), &statuses); err != nil || code != 1 || len(statuses) != 1 || statuses[0].Address != "127.0.0.1:2" {
		t.Errorf("status --server -o json: exit %d, %v:\n%s", code, err, out)
	}
	// server zoo.cfg (zkServer.sh's form) reads it, as --config: a missing
	// one fails rather than running with the defaults; two are refused.
	_, errs, code = runBinary(t, "", nil, "server", "missing/zoo.cfg", "--log-level", "warn")
	if code != 1 || !strings.Contains(errs, `open missing/zoo.cfg: no such file or directory`) {
		t.Errorf("server missing/zoo.cfg: exit %d:\n%s", code, errs)
	}
	_, errs, code = runBinary(t, "", nil, "server", "a.cfg", "b.cfg")
	if code != 1 || !strings.Contains(errs, `zkraft: server: 2 arguments: it takes one, a zoo.cfg (or --config)`) {
		t.Errorf("server a.cfg b.cfg: exit %d:\n%s", code, errs)
	}

	// digest: an unknown flag after the arguments is refused.
	_, errs, code = runBinary(t, "", nil, "digest", "a:b", "--bogus")
	if code == 0 || !strings.Contains(errs, "flag provided but not defined: -bogus") {
		t.Errorf("digest a:b --bogus: exit %d:\n%s", code, errs)
	}

	if testing.Short() {
		return
	}
	// server zoo.cfg serves what the file says.
	cfgAddr := procs.FreeAddr(t)
	_, port, _ := net.SplitHostPort(cfgAddr)
	cfg := filepath.Join(t.TempDir(), "zoo.cfg")
	body := "tickTime=500\nclientPortAddress=127.0.0.1\nclientPort=" + port + "\ndataDir=" + filepath.Join(t.TempDir(), "cfgdata") +
		"\nadmin.enableServer=false\n"
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	procs.StartServer(t, cfgAddr, cfg)

	addr := procs.FreeAddr(t)
	procs.StartServer(t, addr, "--client-addr", addr, "--data-dir", filepath.Join(t.TempDir(), "data"))
	// shell: --server after the command is the shell's, -s is ls's.
	out, errs, code = runBinary(t, "", nil, "shell", "ls", "-s", "/", "--server", addr)
	if code != 0 || !strings.Contains(out, "[zookeeper]") || !strings.Contains(out, "cZxid = ") {
		t.Errorf("shell ls -s / --server: exit %d:\n%s\n%s", code, out, errs)
	}
}
