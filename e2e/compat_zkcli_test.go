package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestCompatZkCli pipes each script in testdata/compat/zkcli through
// Apache's zkCli (org.apache.zookeeper.ZooKeeperMain, one JVM per server
// and script) against zkraft and against ZooKeeper, and requires the two
// transcripts to be identical once zxids, times, session ids and the
// server address are normalized. Watch notifications, which the CLI prints
// from another thread, are compared as a sorted list.
func TestCompatZkCli(t *testing.T) {
	skipShort(t)
	t.Parallel()
	needJava(t)
	scripts, _ := filepath.Glob(filepath.Join(compatDir("zkcli"), "*.txt"))
	if len(scripts) == 0 {
		t.Fatal("no zkCli scripts in testdata/compat/zkcli")
	}
	servers := compatServers(t)
	cp := strings.Join(javaClientJars, ":")
	for _, script := range scripts {
		in, err := os.ReadFile(script)
		if err != nil {
			t.Fatal(err)
		}
		outs := map[string]string{}
		var mu sync.Mutex
		var wg sync.WaitGroup
		for kind, s := range servers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				out, err := runTool(t, 2*time.Minute, string(in), javaBin, "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
					"-cp", cp, "org.apache.zookeeper.ZooKeeperMain", "-server", s.Addr)
				if err != nil {
					t.Errorf("%s: zkCli %s: %v\n%s", kind, filepath.Base(script), err, out)
				}
				out = normalizeZkCli(out, s.Addr)
				if !strictCompat {
					out = sortWhoAmI(out)
				}
				mu.Lock()
				outs[kind] = out
				mu.Unlock()
			}()
		}
		wg.Wait()
		ref := outs[targetZookeeper]
		if strings.Contains(ref, "Exception") && !strings.Contains(ref, "KeeperErrorCode") {
			t.Errorf("zookeeper: zkCli %s hit a client exception:\n%s", filepath.Base(script), ref)
		}
		if os.Getenv("ZKRAFT_E2E_ZKCLI_DUMP") == "1" {
			t.Logf("zookeeper transcript of %s:\n%s", filepath.Base(script), ref)
		}
		if got, ok := outs[targetZkraft]; ok && got != ref {
			t.Errorf("zkCli %s: transcripts differ (-zookeeper +zkraft):\n%s\nzkraft transcript:\n%s", filepath.Base(script), lineDiff(ref, got), got)
		}
		lines := strings.Count(strings.TrimSpace(in2s(in)), "\n") + 1
		t.Logf("zkCli %s: %d commands, %d transcript lines compared", filepath.Base(script), lines, strings.Count(ref, "\n"))
	}
}

func in2s(b []byte) string { return string(b) }

// zkCli output normalization.
var (
	cliHex     = regexp.MustCompile(`0x[0-9a-fA-F]+`)
	cliTime    = regexp.MustCompile(`[A-Z][a-z]{2} [A-Z][a-z]{2} [ 0-9]\d \d\d:\d\d:\d\d [A-Z]+ \d{4}`)
	cliPrompt  = regexp.MustCompile(`\[zk: [^\]]*\(([A-Z]+)\) \d+\] ?`)
	cliWatcher = regexp.MustCompile(`^(WATCHER::|WatchedEvent )`)
	cliSession = regexp.MustCompile(`sessionid = \S+`)
	cliPaths   = regexp.MustCompile(`^\[(/[^\]]*)\]$`)
	cliWhoAmI  = regexp.MustCompile(`^(ip|digest|super|sasl|x509|world): `)
)

// sortWhoAmI sorts the identity lines of whoami: zkraft lists the ip id
// first, ZooKeeper after the authenticated ids (a known zkraft departure,
// kept visible with ZKRAFT_COMPAT_STRICT=1).
func sortWhoAmI(out string) string {
	lines := strings.Split(out, "\n")
	for i := 0; i < len(lines); {
		j := i
		for j < len(lines) && cliWhoAmI.MatchString(lines[j]) {
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

// normalizeZkCli removes what legitimately differs between two runs of the
// same script: prompts, zxids and session ids, times, the address. Watch
// events are moved, sorted, to the end.
func normalizeZkCli(out, addr string) string {
	out = strings.ReplaceAll(out, addr, "ADDR")
	var body, events []string
	for _, line := range strings.Split(out, "\n") {
		line = cliPrompt.ReplaceAllString(line, "")
		line = cliTime.ReplaceAllString(line, "TIME")
		line = cliSession.ReplaceAllString(line, "sessionid = ID")
		line = cliHex.ReplaceAllString(line, "0xZ")
		line = strings.TrimRight(line, " \r")
		if m := cliPaths.FindStringSubmatch(line); m != nil {
			// getEphemerals prints a Java set: its order is a hash order.
			paths := strings.Split(m[1], ", ")
			sort.Strings(paths)
			line = "[" + strings.Join(paths, ", ") + "]"
		}
		switch {
		case line == "", line == "WATCHER::", strings.Contains(line, "state:Closed"):
			// Blank, the marker before each event, and the Closed event
			// that may or may not be printed before the JVM exits.
		case cliWatcher.MatchString(line):
			events = append(events, line)
		default:
			body = append(body, line)
		}
	}
	sort.Strings(events)
	return strings.Join(body, "\n") + "\n--- events\n" + strings.Join(events, "\n") + "\n"
}

// lineDiff renders the lines of a and b that differ, position by position.
func lineDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	var out []string
	for i := 0; i < max(len(al), len(bl)); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			out = append(out, "-"+x, "+"+y)
		}
	}
	return strings.Join(out, "\n")
}
