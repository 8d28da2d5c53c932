package e2e

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/jute"
)

// TestDifferentialSessions drives zkraft and Apache ZooKeeper (both started
// by the test) with the same seeded random operations from several
// sessions at once and requires identical observable behaviour: every
// reply (error codes, paths with sequence suffixes, data, children sets,
// ACLs, Stats with zxids mapped to the step that wrote them and times
// compared by relation), and the watch notifications each session
// receives, in order. Sessions are closed and reopened at random (their
// ephemerals vanish and watchers see it).
//
// The deliberate differences are normalized: passwords and zxid values
// are never compared, notification zxids are ignored, children are
// compared as sets. zkraft checks READ on exists and before delivering a
// notification (ZooKeeper 3.9.2+, CVE-2024-23944) while 3.8.0 does not:
// only the "outsider" session (slot 0) lacks READ anywhere, and it never
// calls exists and never sets watches, so that difference cannot show.
//
// ZKRAFT_DIFF_SEEDS (e.g. "1-500" or "3,7") and ZKRAFT_DIFF_OPS (steps per
// seed) make long runs; ZKRAFT_DIFF_TRACE=1 logs every step.
func TestDifferentialSessions(t *testing.T) {
	skipShort(t)
	requireTarget(t, targetZkraft, "compares zkraft with the ZooKeeper oracle")
	t.Parallel()
	needJava(t)
	seeds, err := parseSeeds(envOr("ZKRAFT_DIFF_SEEDS", "1-4"))
	if err != nil {
		t.Fatalf("ZKRAFT_DIFF_SEEDS: %v", err)
	}
	ops, err := strconv.Atoi(envOr("ZKRAFT_DIFF_OPS", "300"))
	if err != nil || ops <= 0 {
		t.Fatalf("ZKRAFT_DIFF_OPS=%q: want a positive number", os.Getenv("ZKRAFT_DIFF_OPS"))
	}
	servers := compatServers(t)
	sides := []*dside{
		newDside(t, "zkraft", servers[targetZkraft]),
		newDside(t, "zookeeper", servers[targetZookeeper]),
	}
	start := time.Now()
	total, failedSeeds := 0, 0
	outcomes := map[string]int{}
	for _, seed := range seeds {
		r := &drun{t: t, seed: seed, sides: sides, outcomes: outcomes, trace: os.Getenv("ZKRAFT_DIFF_TRACE") == "1"}
		n := r.run(ops)
		total += n
		if r.mismatches > 0 {
			failedSeeds++
		}
		if failedSeeds >= 5 {
			t.Errorf("stopping after 5 failing seeds")
			break
		}
	}
	kinds := make([]string, 0, len(outcomes))
	for k, n := range outcomes {
		kinds = append(kinds, fmt.Sprintf("%s=%d", k, n))
	}
	sort.Strings(kinds)
	t.Logf("%d seeds, %d steps compared in %v; outcomes: %s", len(seeds), total, time.Since(start).Round(time.Millisecond),
		strings.Join(kinds, " "))
}

// Sessions per server: slot 0 is the unauthenticated outsider, the others
// are authenticated as alice (see drun.next for who sets which watches).
const diffSlots = 5

// Digest identities of the differential test.
var (
	aliceID = digestID("alice", "secret")
	superID = "super:superpw"
)

// envOr returns the environment variable k, or def when unset.
func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// parseSeeds parses "1-500", "7" or "3,7,9-12".
func parseSeeds(s string) ([]int64, error) {
	var out []int64
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err := strconv.ParseInt(lo, 10, 64)
		if err != nil {
			return nil, err
		}
		b := a
		if isRange {
			if b, err = strconv.ParseInt(hi, 10, 64); err != nil {
				return nil, err
			}
		}
		for i := a; i <= b; i++ {
			out = append(out, i)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no seeds in %q", s)
	}
	return out, nil
}

// dside is one server of the differential test: its sessions by slot, a
// super-user session for listing and cleanup, and the maps that make its
// zxids and session ids comparable with the other server's.
type dside struct {
	t      *testing.T
	name   string
	srv    *Server
	slots  [diffSlots]*rawConn
	models [diffSlots]*wmodel // each session's client-side watch record
	gens   [diffSlots]int
	super  *rawConn
	steps  map[int64]int    // zxid -> step of the write that made it
	owners map[int64]string // session id -> "s<slot>.<generation>"
	since  time.Time        // no ctime/mtime may be older
}

func newDside(t *testing.T, name string, srv *Server) *dside {
	d := &dside{t: t, name: name, srv: srv, steps: map[int64]int{}, owners: map[int64]string{}, since: time.Now().Add(-time.Minute)}
	d.super = newRawSession(t, srv, int32(sessionTimeout.Milliseconds()))
	d.auth(d.super, superID)
	for i := range d.slots {
		d.open(i)
	}
	return d
}

// open starts a new session in slot i (authenticated unless outsider).
func (d *dside) open(i int) {
	c := newRawSession(d.t, d.srv, int32(sessionTimeout.Milliseconds()))
	d.gens[i]++
	d.owners[c.SessionID] = fmt.Sprintf("s%d.%d", i, d.gens[i])
	if i != 0 {
		d.auth(c, "alice:secret")
	}
	d.slots[i] = c
	d.models[i] = newWModel()
}

// auth sends a digest auth packet and requires success.
func (d *dside) auth(c *rawConn, userPassword string) {
	d.t.Helper()
	pkt := &jute.AuthPacket{Scheme: "digest", Auth: []byte(userPassword)}
	if err := c.writeRaw(encodeRequest(jute.XidAuth, jute.OpAuth, pkt)); err != nil {
		d.t.Fatalf("%s: auth: %v", d.name, err)
	}
	if r := c.recv(); r.Hdr.Xid != jute.XidAuth || r.Hdr.Err != jute.OK {
		d.t.Fatalf("%s: auth reply %+v", d.name, r.Hdr)
	}
}

// closeSlot closes the session in slot i and opens a fresh one; the
// close's zxid is mapped to step (ephemeral deletions carry it).
func (d *dside) closeSlot(step, i int) string {
	c := d.slots[i]
	h := c.call(jute.OpCloseSession, nil, nil)
	if h.Err != jute.OK {
		return fmt.Sprintf("close err %d", h.Err)
	}
	d.steps[h.Zxid] = step
	c.expectClosed()
	c.conn.Close()
	d.open(i)
	return "closed"
}

// drain collects the notifications slot i has received so far (a ping
// round trip flushes the ones sent before it) in normalized form.
func (d *dside) drain(i int, root string) []string {
	c := d.slots[i]
	var out []string
	if h, err := c.tryCall(jute.OpPing, nil, nil); err != nil {
		// The server dropped the connection: report it among the
		// events and resume the session.
		c.conn.Close()
		out = append(out, fmt.Sprintf("connection lost (%s); %s", errKind(err), d.reconnect(i)))
		c = d.slots[i]
	} else {
		d.models[i].saw(h.Zxid)
	}
	for _, ev := range c.Events {
		d.models[i].event(ev)
		out = append(out, fmt.Sprintf("%d %s", ev.Type, strings.Replace(ev.Path, root, "~", 1)))
	}
	c.Events = c.Events[:0]
	return out
}

// zx renders a zxid as the step that wrote it.
func (d *dside) zx(z int64) string {
	if s, ok := d.steps[z]; ok {
		return "#" + strconv.Itoa(s)
	}
	if z == 0 {
		return "0"
	}
	return "?"
}

// norm renders a Stat in server-neutral form: zxids as steps, times by
// relation (and sanity), owners as session slots.
func (d *dside) norm(st jute.Stat) string {
	owner := "0"
	if st.EphemeralOwner != 0 {
		owner = d.owners[st.EphemeralOwner]
		if owner == "" {
			owner = "unknown"
		}
	}
	tm := "c=m"
	switch {
	case st.Mtime > st.Ctime:
		tm = "c<m"
	case st.Mtime < st.Ctime:
		tm = "c>m"
	}
	lo, hi := d.since.UnixMilli(), time.Now().Add(time.Minute).UnixMilli()
	if st.Ctime < lo || st.Ctime > hi || st.Mtime < lo || st.Mtime > hi {
		tm += "(bad-time)"
	}
	return fmt.Sprintf("{cz=%s mz=%s pz=%s %s v=%d cv=%d av=%d eph=%s len=%d n=%d}",
		d.zx(st.Czxid), d.zx(st.Mzxid), d.zx(st.Pzxid), tm, st.Version, st.Cversion, st.Aversion,
		owner, st.DataLength, st.NumChildren)
}
