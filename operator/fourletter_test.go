package operator

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/internal/testing/rawclient"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/session"
)

func TestFourLetterWhitelist(t *testing.T) {
	ts := startServer(t, func(c *session.Config) { c.FourLetterWhitelist = []string{"srvr"} })
	if out := rawclient.Word(t, ts.addr, "ruok"); out != "ruok is not executed because it is not in the whitelist.\n" {
		t.Fatalf("got %q", out)
	}
	if out := rawclient.Word(t, ts.addr, "srvr"); !strings.Contains(out, "Mode: standalone\n") {
		t.Fatalf("srvr: %q", out)
	}
}

// TestFourLetterFormats checks the shapes ZooKeeper 3.8 prints (captured
// from the Debian server), which zkServer.sh, zktop and exporters parse.
func TestFourLetterFormats(t *testing.T) {
	ts := startServer(t)
	c := rawclient.Dial(t, ts.addr)
	c.Connect(false)
	c.Request(1, jute.OpGetData, &jute.PathWatchRequest{Path: "/zookeeper", Watch: true})
	c.Reply(nil)
	word := func(w string) string { return rawclient.Word(t, ts.addr, w) }
	patterns := map[string]string{
		"srvr": `^Zookeeper version: 3\.\d+\.\d+-\S*, built on .*\nLatency min/avg/max: \d+/\d+\.\d+(E-?\d+)?/\d+\nReceived: \d+\nSent: \d+\nConnections: \d+\nOutstanding: 0\nZxid: 0x[0-9a-f]+\nMode: standalone\nNode count: 5\n$`,
		"stat": `^Zookeeper version: .*\nClients:\n( /127\.0\.0\.1:\d+\[[01]\]\(queued=\d+,recved=\d+,sent=\d+\)\n)+\nLatency min/avg/max: .*\nReceived: \d+\n`,
		"cons": `( /127\.0\.0\.1:\d+\[1\]\(queued=0,recved=\d+,sent=\d+,sid=0x[0-9a-f]+,lop=GETD,est=\d+,to=\d+,lcxid=0x1,lzxid=0x[0-9a-f]+,lresp=\d+,llat=\d+,minlat=\d+,avglat=\d+,maxlat=\d+\)\n)`,
		"mntr": `(?m)^zk_version\t3\..*\n(.*\n)*zk_znode_count\t5\n(.*\n)*zk_watch_count\t1\n`,
		"conf": `^clientPort=\d+\nsecureClientPort=-1\ndataDir=.*\ndataDirSize=\d+\ndataLogDir=.*\ndataLogSize=\d+\ntickTime=200\nmaxClientCnxns=0\nminSessionTimeout=400\nmaxSessionTimeout=4000\nclientPortListenBacklog=-1\nserverId=0\n$`,
		"wchs": `^1 connections watching 1 paths\nTotal watches:1\n$`,
		"wchc": `^0x[0-9a-f]+\n\t/zookeeper\n\n$`,
		"wchp": `^/zookeeper\n\t0x[0-9a-f]+\n\n$`,
		"envi": `^Environment:\nzookeeper\.version=3\.`,
		"dump": `^SessionTracker dump:\n`,
		"ruok": `^imok$`,
		"isro": `^rw$`,
		"srst": `^Server stats reset\.\n$`,
		"crst": `^Connection stats reset\.\n$`,
	}
	for w, re := range patterns {
		if out := word(w); !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("%s output does not match ZooKeeper's shape %q:\n%s", w, re, out)
		}
	}
}

// TestMntrFsyncTimes: mntr carries ZooKeeper's fsynctime summary of the
// log's syncs (a write made some), and srst starts it over, as
// ZooKeeper's ServerStats.reset does with its metrics.
func TestMntrFsyncTimes(t *testing.T) {
	ts := startServer(t)
	c := rawclient.Dial(t, ts.addr)
	c.Connect(false)
	c.Request(1, jute.OpCreate, &jute.CreateRequest{Path: "/f", ACL: openACL})
	if h := c.Reply(nil); h.Err != jute.OK {
		t.Fatalf("create: %+v", h)
	}
	word := func(w string) string { return rawclient.Word(t, ts.addr, w) }
	shape := regexp.MustCompile(`(?m)^zk_avg_fsynctime\t\d+\.\d+(?:E-?\d+)?\nzk_min_fsynctime\t\d+\nzk_max_fsynctime\t\d+\nzk_cnt_fsynctime\t(\d+)\nzk_sum_fsynctime\t\d+\n`)
	m := shape.FindStringSubmatch(word("mntr"))
	if m == nil || m[1] == "0" {
		t.Fatalf("mntr has no fsynctime summary counting the create's sync: %v", m)
	}
	word("srst")
	if m := shape.FindStringSubmatch(word("mntr")); m == nil || m[1] != "0" {
		t.Fatalf("after srst: %q, want zk_cnt_fsynctime 0", m)
	}
}

func TestJavaDoubleAndAvg(t *testing.T) {
	for f, want := range map[float64]string{0: "0.0", 5.75: "5.75", 132: "132.0", 1.0 / 3: "0.3333333333333333",
		0.0005: "5.0E-4", 0.001: "0.001", 12345678: "1.2345678E7", 1e7: "1.0E7", -0.00025: "-2.5E-4"} {
		if got := javaDouble(f); got != want {
			t.Errorf("javaDouble(%v) = %q, want Java's %q", f, got, want)
		}
	}
	for _, c := range []struct {
		total, count int64
		want         string
	}{{0, 0, "0.0"}, {651, 398, "1.6357"}, {132, 1, "132.0"}, {1, 2000, "5.0E-4"}, {1, 3, "0.3333"}} {
		if got := javaAvg(c.total, c.count); got != c.want {
			t.Errorf("javaAvg(%d, %d) = %q, want %q", c.total, c.count, got, c.want)
		}
	}
}

// TestFiguresMirrorMntr: the metrics endpoint's figures are mntr's, by
// the same keys without zk_.
func TestFiguresMirrorMntr(t *testing.T) {
	ts := startServer(t)
	// The member may still be writing (its first entries' syncs count in
	// zk_cnt_fsynctime): compare figures read between two equal mntrs.
	mntr := func() string {
		var b strings.Builder
		newView(ts.srv).writeMntr(&b)
		return strip(b.String())
	}
	for try := 1; ; try++ {
		if try > 100 {
			t.Fatal("mntr never held still between two reads")
		}
		before := mntr()
		var got strings.Builder
		for _, f := range Figures(ts.srv) {
			fmt.Fprintf(&got, "zk_%s\t%s\n", f.Key, f.Value)
		}
		g := strip(got.String())
		if after := mntr(); before != after {
			time.Sleep(20 * time.Millisecond)
			continue // moved while read
		}
		if g != before {
			t.Fatalf("figures:\n%s\nmntr:\n%s", g, before)
		}
		break
	}
	want := map[string]bool{"znode_count": true, "packets_received": false, "server_state": true}
	for _, f := range Figures(ts.srv) {
		if gauge, ok := want[f.Key]; ok {
			if f.Gauge != gauge {
				t.Errorf("%s: gauge %v", f.Key, f.Gauge)
			}
			delete(want, f.Key)
		}
	}
	if len(want) != 0 {
		t.Fatalf("figures lack %v", want)
	}
}

// strip drops the figures that move between two reads (uptime, fds).
func strip(s string) string {
	var keep []string
	for _, line := range strings.Split(s, "\n") {
		if !strings.HasPrefix(line, "zk_uptime") && !strings.Contains(line, "file_descriptor") {
			keep = append(keep, line)
		}
	}
	return strings.Join(keep, "\n")
}
