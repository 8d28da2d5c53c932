package e2e

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// climtPause is the time given to each command of the interactive watch
// scenario (and to the events it triggers) before the next one is sent.
const climtPause = 300 * time.Millisecond

// climtWatchScript is the interactive cli_mt scenario (exists, which
// hangs in batch mode, runs here too): exists watches set
// with wexists fire NodeCreated, NodeDataChanged and NodeDeleted, and ls
// (which sets a child watch in cli_mt) fires NodeChildrenChanged.
var climtWatchScript = []string{
	"create /cmtw", "wexists /cmtw/w", "create /cmtw/w", "wexists /cmtw/w", "set /cmtw/w x",
	"wexists /cmtw/w", "delete /cmtw/w", "exists /cmtw", "exists /cmtw/w", "ls /cmtw", "create /cmtw/c", "delete /cmtw/c", "delete /cmtw",
}

// TestCompatCClient runs the ZooKeeper C client's shell, cli_mt
// (libzookeeper-mt), against zkraft and against ZooKeeper and requires
// identical transcripts after normalizing times, zxids and session ids.
// Each line of the scripts in testdata/compat/climt runs as one batch
// command (cli_mt -c): create in every mode, create2, ls, ls2, get, set,
// exists, sync, delete. Then one interactive session checks the watch
// events of wexists and ls.
func TestCompatCClient(t *testing.T) {
	skipShort(t)
	t.Parallel()
	requireTool(t, needFiles(cliMt))
	scripts, _ := filepath.Glob(filepath.Join(compatDir("climt"), "*.txt"))
	if len(scripts) == 0 {
		t.Fatal("no cli_mt scripts in testdata/compat/climt")
	}
	servers := compatServers(t)
	for _, script := range scripts {
		in, err := os.ReadFile(script)
		if err != nil {
			t.Fatal(err)
		}
		cmds := strings.Split(strings.TrimSpace(string(in)), "\n")
		outs := perServer(t, servers, func(addr string) (string, error) {
			var all strings.Builder
			for _, c := range cmds {
				out, err := runCliMtBatch(addr, c)
				fmt.Fprintf(&all, "> %s\n%s", c, sortChildren(normalizeCliMt(out)))
				if err != nil {
					return all.String(), fmt.Errorf("%s: %w", c, err)
				}
			}
			return all.String(), nil
		})
		compareTranscripts(t, "cli_mt "+filepath.Base(script), outs, "rc = 0")
		t.Logf("cli_mt %s: %d commands, %d transcript lines compared", filepath.Base(script), len(cmds), strings.Count(outs[targetZookeeper], "\n"))
	}
	outs := perServer(t, servers, func(addr string) (string, error) {
		out, err := runCliMt(addr, climtWatchScript)
		var events []string
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, "Watcher ") {
				events = append(events, line)
			}
		}
		return strings.Join(events, "\n") + "\n", err
	})
	compareTranscripts(t, "cli_mt watch events", outs, "CHANGED_EVENT")
	t.Logf("cli_mt watches: %d events compared", strings.Count(outs[targetZookeeper], "\n"))
}

// perServer runs f against every server in parallel and returns the
// outputs by server kind; errors fail t.
func perServer(t *testing.T, servers map[string]*Server, f func(addr string) (string, error)) map[string]string {
	t.Helper()
	outs := map[string]string{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for kind, s := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := f(s.Addr)
			if err != nil {
				t.Errorf("%s: %v\n%s", kind, err, out)
			}
			mu.Lock()
			outs[kind] = out
			mu.Unlock()
		}()
	}
	wg.Wait()
	return outs
}

// compareTranscripts requires zkraft's transcript to equal ZooKeeper's,
// and ZooKeeper's to contain want (so an empty run cannot pass).
func compareTranscripts(t *testing.T, what string, outs map[string]string, want string) {
	t.Helper()
	ref := outs[targetZookeeper]
	if !strings.Contains(ref, want) {
		t.Errorf("zookeeper: %s: transcript lacks %q:\n%s", what, want, ref)
	}
	if got, ok := outs[targetZkraft]; ok && got != ref {
		t.Errorf("%s: transcripts differ (-zookeeper +zkraft):\n%s\nzkraft transcript:\n%s\nzookeeper transcript:\n%s",
			what, lineDiff(ref, got), got, ref)
	}
}

// runCliMtBatch runs one cli_mt -c command on a fresh session.
func runCliMtBatch(addr, command string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, cliMt, "-h", addr, "-c", command)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// sortChildren sorts each run of tab-indented bare names (ls output):
// ZooKeeper lists children in hash order, zkraft sorted.
func sortChildren(out string) string {
	lines := strings.Split(out, "\n")
	isChild := func(l string) bool {
		return strings.HasPrefix(l, "\t") && !strings.ContainsAny(l, "=:") && !strings.Contains(l[1:], " ")
	}
	for i := 0; i < len(lines); {
		j := i
		for j < len(lines) && isChild(lines[j]) {
			j++
		}
		if j > i {
			sort.Strings(lines[i:j])
			i = j
			continue
		}
		i++
	}
	return strings.Join(lines, "\n")
}

// runCliMt feeds cmds to an interactive cli_mt on addr, one every
// climtPause once the session is up, and returns everything it printed.
func runCliMt(addr string, cmds []string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, cliMt, "-h", addr)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.WaitDelay = 5 * time.Second
	var out lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return "", err
	}
	if err := cmd.Start(); err != nil {
		return "", err
	}
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(out.String(), "Got a new session id") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	for _, c := range cmds {
		if _, err := io.WriteString(stdin, c+"\n"); err != nil {
			break
		}
		time.Sleep(climtPause)
	}
	// cli_mt exits at the end of its input, dropping events still on the
	// way: on a busy machine the last command's event came later than
	// climtPause. Wait until its output has been still for a second
	// (at most ten).
	for last, still, end := out.String(), time.Now(), time.Now().Add(10*time.Second); time.Since(still) < time.Second && time.Now().Before(end); {
		time.Sleep(50 * time.Millisecond)
		if now := out.String(); now != last {
			last, still = now, time.Now()
		}
	}
	stdin.Close()
	err = cmd.Wait()
	if ctx.Err() != nil {
		err = ctx.Err()
	}
	return out.String(), err
}

// cli_mt output normalization.
var (
	climtTime    = regexp.MustCompile(`[A-Z][a-z]{2} [A-Z][a-z]{2} [ 0-9]\d \d\d:\d\d:\d\d \d{4}`)
	climtZxid    = regexp.MustCompile(`(zxid=)[0-9a-f]+`)
	climtMsec    = regexp.MustCompile(`^time = -?\d+ msec$`)
	climtSession = regexp.MustCompile(`0x[0-9a-f]+`)
	climtOwner   = regexp.MustCompile(`(ephemeralOwner = )[0-9a-f]+`)
)

// normalizeCliMt removes times, zxids, session ids, timing lines and the
// session-established lines.
func normalizeCliMt(out string) string {
	var lines []string
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimRight(line, " \r\t")
		if line == "" || climtMsec.MatchString(line) || strings.HasPrefix(line, "Got a new session id") ||
			strings.HasPrefix(line, "Watcher SESSION_EVENT") {
			// Timing, and the connection lines the event thread prints
			// at a moment that races with the command's own output.
			continue
		}
		line = climtTime.ReplaceAllString(line, "TIME")
		line = climtZxid.ReplaceAllString(line, "${1}Z")
		line = climtOwner.ReplaceAllStringFunc(line, func(s string) string {
			if strings.HasSuffix(s, " 0") {
				return s
			}
			return "ephemeralOwner = SESSION"
		})
		line = climtSession.ReplaceAllString(line, "0xSESSION")
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n") + "\n"
}
