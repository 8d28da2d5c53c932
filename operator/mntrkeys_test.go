package operator

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/internal/testing/rawclient"
	"github.com/zkraft/zkraft/jute"
)

// readKeys reads a key list, one a line.
func readKeys(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(b))
}

// mntrKeys are the keys of a mntr answer, without zk_, in its order, and
// their values.
func mntrKeys(t *testing.T, mntr string) ([]string, map[string]string) {
	t.Helper()
	var keys []string
	values := map[string]string{}
	for _, line := range strings.Split(strings.TrimSuffix(mntr, "\n"), "\n") {
		k, v, ok := strings.Cut(line, "\t")
		if !ok || !strings.HasPrefix(k, "zk_") {
			t.Fatalf("mntr line %q", line)
		}
		keys = append(keys, strings.TrimPrefix(k, "zk_"))
		values[strings.TrimPrefix(k, "zk_")] = v
	}
	return keys, values
}

// TestMntrKeysGolden: a standalone server's mntr has exactly the keys of
// testdata/mntr-keys.golden, each one ZooKeeper 3.8's mntr has
// (testdata/zookeeper-3.8-mntr-keys.txt, the keys `echo mntr | nc` gets
// from its standalone server), in ZooKeeper's order, and the summaries
// in ZooKeeper's formats (the average a decimal, the rest whole numbers).
func TestMntrKeysGolden(t *testing.T) {
	zk := readKeys(t, "testdata/zookeeper-3.8-mntr-keys.txt")
	golden := readKeys(t, "testdata/mntr-keys.golden")
	pos := map[string]int{}
	for i, k := range zk {
		pos[k] = i
	}
	ts := startServer(t)
	keys, values := mntrKeys(t, rawclient.Word(t, ts.addr, "mntr"))
	if strings.Join(keys, " ") != strings.Join(golden, " ") {
		t.Errorf("mntr keys:\n%s\nwant testdata/mntr-keys.golden:\n%s", strings.Join(keys, "\n"), strings.Join(golden, "\n"))
	}
	last := -1
	for _, k := range keys {
		p, ok := pos[k]
		if !ok {
			t.Errorf("zk_%s is not one of ZooKeeper 3.8's mntr keys", k)
			continue
		}
		if p < last {
			t.Errorf("zk_%s comes after zk_%s, not in ZooKeeper's order", k, zk[last])
		}
		last = p
	}
	decimal, whole := regexp.MustCompile(`^\d+\.\d+(E-?\d+)?$`), regexp.MustCompile(`^-?\d+$`)
	for _, name := range []string{"fsynctime", "updatelatency", "readlatency"} {
		if v := values["avg_"+name]; !decimal.MatchString(v) {
			t.Errorf("zk_avg_%s = %q, want a decimal", name, v)
		}
		for _, stat := range []string{"min_", "max_", "cnt_", "sum_", "p50_", "p95_", "p99_", "p999_"} {
			if v, ok := values[stat+name]; ok && !whole.MatchString(v) {
				t.Errorf("zk_%s%s = %q, want a whole number", stat, name, v)
			}
		}
	}
}

// TestMntrCountsRequestsAndCommits: reads count in zk_cnt_readlatency,
// writes in zk_cnt_updatelatency and, committed by this member as
// leader, in zk_proposal_count and zk_commit_count, a snapshot in
// zk_cnt_snapshottime; srst starts them over.
func TestMntrCountsRequestsAndCommits(t *testing.T) {
	ts := startServer(t)
	c := rawclient.Dial(t, ts.addr)
	c.Connect(false)
	for i := int32(1); i <= 3; i++ {
		c.Request(i, jute.OpCreate, &jute.CreateRequest{Path: "/m" + string(rune('0'+i)), ACL: openACL})
		if h := c.Reply(nil); h.Err != jute.OK {
			t.Fatalf("create: %+v", h)
		}
	}
	for i := int32(4); i <= 8; i++ {
		c.Request(i, jute.OpExists, &jute.PathWatchRequest{Path: "/m1"})
		if h := c.Reply(nil); h.Err != jute.OK {
			t.Fatalf("exists: %+v", h)
		}
	}
	count := func(values map[string]string, key string) (n int) {
		for _, ch := range values[key] {
			n = n*10 + int(ch-'0')
		}
		return n
	}
	atLeast := func(values map[string]string, key string, n int) {
		t.Helper()
		if got := count(values, key); got < n {
			t.Errorf("zk_%s = %q, want at least %d", key, values[key], n)
		}
	}
	if err := ts.node.Snapshot(); err != nil {
		t.Fatal(err)
	}
	// commit_count is counted when a proposal's Raft future resolves,
	// which may come after the FSM answered the client (ensemble's
	// watchFailures): under load mntr is read again until it has caught up.
	_, values := mntrKeys(t, rawclient.Word(t, ts.addr, "mntr"))
	for deadline := time.Now().Add(10 * time.Second); count(values, "commit_count") < 3 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		_, values = mntrKeys(t, rawclient.Word(t, ts.addr, "mntr"))
	}
	atLeast(values, "cnt_snapshottime", 1)
	if values["looking_count"] != "0" || values["cnt_election_time"] != "0" {
		t.Errorf("standalone: zk_looking_count %q, zk_cnt_election_time %q, want 0 (it never looks for a leader)",
			values["looking_count"], values["cnt_election_time"])
	}
	atLeast(values, "cnt_updatelatency", 3)
	atLeast(values, "cnt_readlatency", 5)
	atLeast(values, "proposal_count", 3)
	atLeast(values, "commit_count", 3)
	if values["unrecoverable_error_count"] != "0" {
		t.Errorf("zk_unrecoverable_error_count = %q", values["unrecoverable_error_count"])
	}
	rawclient.Word(t, ts.addr, "srst")
	_, values = mntrKeys(t, rawclient.Word(t, ts.addr, "mntr"))
	for _, k := range []string{"cnt_updatelatency", "cnt_readlatency", "p99_readlatency", "commit_count", "proposal_count", "cnt_snapshottime"} {
		if values[k] != "0" {
			t.Errorf("after srst: zk_%s = %q, want 0", k, values[k])
		}
	}
}
