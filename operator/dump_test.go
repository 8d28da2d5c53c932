package operator

import (
	"regexp"
	"testing"
	"time"

	"github.com/zkraft/zkraft/internal/testing/rawclient"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/session"
)

// dumpShape is ZooKeeper 3.8's dump on the member that tracks expiry (a
// leader or a lone server) with one session holding /e, as Debian's prints
// it: sessions and connections grouped by expiry time (a tick boundary).
var dumpShape = regexp.MustCompile(`^SessionTracker dump:\nSession Sets \(1\)/\(1\):\n` +
	`1 expire at \w{3} \w{3} \d{2} \d{2}:\d{2}:\d{2} \S+ \d{4}:\n\t(0x[0-9a-f]+)\n` +
	`ephemeral nodes dump:\nSessions with Ephemerals \(1\):\n(0x[0-9a-f]+):\n\t/e\n` +
	`Connections dump:\nConnections Sets \([12]\)/\(2\):\n` +
	`(\d expire at \w{3} \w{3} \d{2} \d{2}:\d{2}:\d{2} \S+ \d{4}:\n(\tip: /127\.0\.0\.1:\d+ sessionId: 0x[0-9a-f]+\n)+)+$`)

// TestDumpShapedAsZooKeepers: dump lists sessions and connections by
// expiry time, as ZooKeeper's SessionTrackerImpl and connection expiry
// queue do.
func TestDumpShapedAsZooKeepers(t *testing.T) {
	ts := startServer(t, func(c *session.Config) { c.TickTime = 2 * time.Second })
	c := rawclient.Dial(t, ts.addr)
	resp := c.Connect(false)
	c.Request(1, jute.OpCreate, &jute.CreateRequest{Path: "/e", ACL: openACL, Flags: jute.FlagEphemeral})
	if h := c.Reply(nil); h.Err != jute.OK {
		t.Fatalf("create: %v", h.Err)
	}
	out := rawclient.Word(t, ts.addr, "dump")
	m := dumpShape.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("dump:\n%s", out)
	}
	if want := hexID(resp.SessionID); m[1] != want || m[2] != want {
		t.Errorf("dump names %s and %s, want session %s:\n%s", m[1], m[2], want, out)
	}
}
