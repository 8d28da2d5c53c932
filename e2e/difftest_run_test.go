package e2e

import (
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net"
	"sort"
	"strings"
	"testing"

	"github.com/zkraft/zkraft/jute"
)

// drun is one seed of TestDifferentialSessions.
type drun struct {
	t           *testing.T
	seed        int64
	rng         *rand.Rand
	sides       []*dside
	root        string
	outcomes    map[string]int
	mismatches  int
	trace       bool
	offline     int      // the slot whose connection is down, or -1
	backAt      int      // the step at which offline reconnects
	noMalformed bool     // path draws no malformed variant
	history     []string // the steps so far, for mismatch reports
}

// daction is one step: a request from a slot, a session close, or a
// connection loss (disconnect) and the session's resumption (reconnect).
type daction struct {
	slot       int
	op         jute.Op
	req        jute.Record
	close      bool
	disconnect bool
	reconnect  bool
}

func (a daction) String() string {
	switch {
	case a.close:
		return fmt.Sprintf("s%d closeSession", a.slot)
	case a.disconnect:
		return fmt.Sprintf("s%d disconnect", a.slot)
	case a.reconnect:
		return fmt.Sprintf("s%d reconnect+setWatches2", a.slot)
	}
	return fmt.Sprintf("s%d op%d %s", a.slot, a.op, describe(a.req))
}

// The ACLs the generator picks from; every alice session keeps READ under
// all of them, the outsider (slot 0) does not under aclAliceOnly.
var (
	worldAll      = jute.Id{Scheme: "world", ID: "anyone"}
	aclAliceOnly  = []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "digest", ID: aliceID}}}
	diffACLChoice = [][]jute.ACL{
		rawOpenACL,
		{{Perms: jute.PermAll &^ jute.PermDelete, ID: worldAll}},
		{{Perms: jute.PermRead, ID: worldAll}},
		{{Perms: jute.PermAll, ID: jute.Id{Scheme: "digest", ID: aliceID}}, {Perms: jute.PermRead, ID: worldAll}},
		{{Perms: jute.PermAll, ID: jute.Id{Scheme: "auth", ID: ""}}},
		aclAliceOnly,
		{},
		{{Perms: jute.PermRead | jute.PermCreate, ID: worldAll}, {Perms: jute.PermAll, ID: jute.Id{Scheme: "digest", ID: aliceID}}},
		{{Perms: jute.PermAll, ID: worldAll}, {Perms: jute.PermAll, ID: worldAll}}, // duplicates are removed
		{{Perms: jute.PermAll, ID: jute.Id{Scheme: "ip", ID: "127.0.0.1"}}},
		{{Perms: jute.PermAll, ID: jute.Id{Scheme: "ip", ID: "10.0.0.0/8"}}, {Perms: jute.PermRead | jute.PermWrite, ID: jute.Id{Scheme: "digest", ID: aliceID}}},
		{{Perms: jute.PermAll, ID: jute.Id{Scheme: "digest", ID: "bob:notahash"}}, {Perms: jute.PermRead, ID: worldAll}},
		{{Perms: jute.PermAll, ID: jute.Id{Scheme: "ip", ID: "300.1.1.1"}}},
		{{Perms: jute.PermAll, ID: jute.Id{Scheme: "nosuch", ID: "x"}}},
		{{Perms: 0, ID: worldAll}, {Perms: jute.PermRead, ID: jute.Id{Scheme: "digest", ID: aliceID}}},
	}
)

// standingWatch is the watch slots 3 and 4 hold from the start of a run
// and set again whenever their session is replaced: slot 4 watches the
// whole tree recursively and slot 3 /a persistently, so that most writes'
// notifications are compared.
func (r *drun) standingWatch(slot int) daction {
	if slot == 4 {
		return daction{slot: 4, op: jute.OpAddWatch, req: &jute.PathTypeRequest{Path: r.root, Type: 1}}
	}
	return daction{slot: 3, op: jute.OpAddWatch, req: &jute.PathTypeRequest{Path: r.root + "/a", Type: 0}}
}

// diffPreset are the nodes the first steps create.
var diffPreset = []string{"/a", "/b", "/c", "/a/a", "/b/b", "/a/a/a"}

// run executes ops steps and returns how many were compared.
func (r *drun) run(ops int) int {
	r.rng = rand.New(rand.NewSource(r.seed))
	r.root = fmt.Sprintf("/diff-%d", r.seed)
	for _, d := range r.sides {
		if h := d.super.call(jute.OpCreate, create(r.root), nil); h.Err != jute.OK {
			r.t.Fatalf("%s: create %s: %d", d.name, r.root, h.Err)
		}
		// Fresh sessions, so that each seed replays alone exactly.
		for i := range d.slots {
			d.closeSlot(0, i)
		}
	}
	step := 1
	r.offline = -1
	for ; step <= ops && r.mismatches < 3; step++ {
		a := r.next()
		switch {
		case step <= 2:
			a = r.standingWatch(4 - step + 1)
		case step-2 <= len(diffPreset):
			// A few nodes to start from, so early steps find something.
			a = daction{slot: 1, op: jute.OpCreate, req: create(r.root + diffPreset[step-3])}
		}
		switch {
		case r.offline >= 0 && step >= r.backAt:
			a = daction{slot: r.offline, reconnect: true}
			r.offline = -1
		case a.disconnect:
			r.offline, r.backAt = a.slot, step+1+r.pick(6)
		}
		got := make([]string, len(r.sides))
		for i, d := range r.sides {
			got[i] = r.exec(d, step, a)
			if a.close && a.slot >= 3 {
				got[i] += "; " + r.exec(d, step, r.standingWatch(a.slot))
			}
		}
		r.history = append(r.history, fmt.Sprintf("%d: %v -> %s", step, a, got[1]))
		if r.trace {
			r.t.Logf("seed %d step %d: %v\n  zkraft:    %s\n  zookeeper: %s", r.seed, step, a, got[0], got[1])
		}
		r.count(a, got[1])
		if got[0] != got[1] {
			if k := known(a, got[0], got[1]); k != nil {
				r.outcomes["known:"+k.name]++
			} else {
				r.mismatch(step, a.String(), got[0], got[1])
			}
		}
		for _, d := range r.sides {
			d.super.ping() // keeps the idle super session alive
		}
		for i := 0; i < diffSlots; i++ {
			if i == r.offline {
				continue
			}
			evs := make([]string, len(r.sides))
			for j, d := range r.sides {
				ev := d.drain(i, r.root)
				if a.close {
					// A closing session's ephemerals are deleted in
					// ZooKeeper's hash-set order (zkraft: sorted).
					sort.Strings(ev)
				}
				evs[j] = fmt.Sprint(ev)
			}
			if evs[0] != evs[1] {
				r.mismatch(step, fmt.Sprintf("watch events of s%d after %v", i, a), evs[0], evs[1])
			}
			if evs[1] != "[]" {
				r.outcomes["events"]++
			}
		}
	}
	if r.offline >= 0 {
		for _, d := range r.sides {
			d.reconnect(r.offline)
		}
	}
	if r.mismatches == 0 {
		trees := make([]string, len(r.sides))
		for i, d := range r.sides {
			trees[i] = r.dump(d, r.root)
		}
		if trees[0] != trees[1] {
			r.mismatch(step, "final tree", trees[0], trees[1])
		}
	}
	for _, d := range r.sides {
		r.removeAll(d, r.root)
	}
	return step - 1
}

// mismatch reports one difference with a reproduction recipe.
func (r *drun) mismatch(step int, what, zkraft, zookeeper string) {
	r.mismatches++
	hist := r.history
	if len(hist) > 15 {
		hist = hist[len(hist)-15:]
	}
	r.t.Errorf("seed %d step %d: %s\n  zkraft:    %s\n  zookeeper: %s\nreproduce: ZKRAFT_DIFF_SEEDS=%d ZKRAFT_DIFF_OPS=%d ZKRAFT_DIFF_TRACE=1 go test ./e2e -run TestDifferentialSessions -v\nlast steps (zookeeper's result):\n  %s",
		r.seed, step, what, zkraft, zookeeper, r.seed, step, strings.Join(hist, "\n  "))
}

// count tallies outcome kinds, to show a run is not vacuous.
func (r *drun) count(a daction, res string) {
	k := "close"
	switch {
	case a.disconnect:
		k = "disconnect"
	case a.reconnect && strings.Contains(res, "re-armed"):
		k = "reconnect+setWatches2"
	case a.reconnect:
		k = "reconnect"
	case !a.close:
		k = fmt.Sprintf("op%d", a.op)
		if strings.HasPrefix(res, "err") {
			k += " " + res
		} else if strings.Contains(res, "-1/") {
			k += " failed"
		}
	}
	r.outcomes[k]++
}

func (r *drun) pick(n int) int { return r.rng.Intn(n) }

// validPath is path without the malformed variants: ZooKeeper's addWatch
// accepts any string as a path ("a", "/a/..") where zkraft answers
// BadArguments, and a watch that exists on one server only would make
// every later comparison of that session differ.
func (r *drun) validPath() string {
	r.noMalformed = true
	defer func() { r.noMalformed = false }()
	return r.path()
}

// path returns a random path under the root of 1 (1/2), 2 (1/3) or 3
// (1/6) segments from {a,b,c}, so that most operations find their node.
func (r *drun) path() string {
	p := r.root
	depth := []int{1, 1, 1, 2, 2, 3}[r.pick(6)]
	for ; depth > 0; depth-- {
		p += "/" + string("abc"[r.pick(3)])
	}
	if r.pick(60) == 0 && !r.noMalformed {
		// Malformed paths: servers must agree on which are rejected.
		p = []string{p + "/", p + "//x", p + "/.", p + "/..", p + "/./x", "", "a", p + "/\x00"}[r.pick(8)]
	}
	return p
}

func (r *drun) version() int32 { return int32(r.pick(4)) - 1 }

func (r *drun) data() []byte {
	if r.pick(6) == 0 {
		return nil
	}
	return []byte(strings.Repeat("d", r.pick(6)))
}

func (r *drun) acl() []jute.ACL {
	if r.pick(4) != 0 {
		return rawOpenACL
	}
	return diffACLChoice[r.pick(len(diffACLChoice))]
}

// create returns a create of any mode: plain, ephemeral, sequential,
// container (leaf "k", never given children so never reaped) or TTL (leaf
// "t", a TTL of an hour so never expired during the run).
func (r *drun) create(inMulti bool) (jute.Op, jute.Record) {
	req := &jute.CreateRequest{Path: r.path(), Data: r.data(), ACL: r.acl(), Flags: int32(r.pick(4))}
	if inMulti {
		return jute.OpCreate, req
	}
	switch r.pick(40) {
	case 0:
		// Odd flags and TTLs for any create opcode: CONTAINER or TTL
		// flags through plain create, unknown flags, TTLs out of range.
		op := []jute.Op{jute.OpCreate, jute.OpCreate2, jute.OpCreateContainer, jute.OpCreateTTL}[r.pick(4)]
		req.Path, req.Flags = req.Path+"/t", int32(r.pick(9))-1
		if op == jute.OpCreateTTL {
			req.TTL, req.HasTTL = []int64{0, -5, 1 << 41, 3600000}[r.pick(4)], true
			if req.Flags != 5 && req.Flags != 6 {
				// ZooKeeper 3.8.0 validates the TTL only for TTL modes and
				// then dies applying the txn (SyncThread "ttl must be
				// positive"): createTTL flags=1 ttl=-5 stops the server.
				req.TTL = 3600000
			}
		}
		return op, req
	case 1, 2, 3, 4:
		req.Path, req.Flags = req.Path+"/k", 4
		return jute.OpCreateContainer, req
	case 5, 6, 7, 8:
		req.Path, req.Flags, req.TTL, req.HasTTL = req.Path+"/t", 5+int32(r.pick(2)), 3600000, true
		return jute.OpCreateTTL, req
	case 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24:
		return jute.OpCreate2, req
	}
	return jute.OpCreate, req
}

// write returns a random write (create, delete or setData).
func (r *drun) write(inMulti bool) (jute.Op, jute.Record) {
	switch r.pick(6) {
	case 0, 1, 2:
		return r.create(inMulti)
	case 3:
		return jute.OpDelete, &jute.PathVersionRequest{Path: r.path(), Version: r.version()}
	}
	return jute.OpSetData, &jute.SetDataRequest{Path: r.path(), Data: r.data(), Version: r.version()}
}

// next draws the next action. The outsider (slot 0) never calls exists
// and never sets a watch (see TestDifferentialSessions). One-shot watches
// come from slots 1 and 2 only, PERSISTENT addWatch from slot 3 only and
// PERSISTENT_RECURSIVE from slot 4 only: ZooKeeper 3.8 keeps one mode per
// (session, path) and its removeWatches Data/Children also drop persistent
// watches, where 3.9 (and zkraft) keep every mode side by side
// (ZOOKEEPER-4471), so mixing modes on one session would only show that
// version difference.
func (r *drun) next() daction {
	a := daction{slot: r.pick(diffSlots)}
	if a.slot == r.offline {
		a.slot = 0 // the outsider is never disconnected
	}
	watch := (a.slot == 1 || a.slot == 2) && r.pick(2) == 0
	switch k := r.pick(100); {
	case k < 2:
		a.close = true
	case k < 4:
		if r.offline < 0 && a.slot != 0 {
			a.disconnect = true
		} else {
			a.op, a.req = jute.OpSync, &jute.PathRequest{Path: r.path()}
		}
	case k < 34:
		a.op, a.req = r.write(false)
	case k < 38:
		a.op, a.req = jute.OpDelete, &jute.PathVersionRequest{Path: r.childOf(r.path()), Version: -1}
	case k < 46:
		if a.slot == 0 {
			a.op, a.req = jute.OpGetData, &jute.PathWatchRequest{Path: r.path()}
		} else {
			a.op, a.req = jute.OpExists, &jute.PathWatchRequest{Path: r.path(), Watch: watch}
		}
	case k < 54:
		a.op, a.req = jute.OpGetData, &jute.PathWatchRequest{Path: r.path(), Watch: watch}
	case k < 59:
		a.op, a.req = jute.OpGetChildren2, &jute.PathWatchRequest{Path: r.path(), Watch: watch}
	case k < 62:
		a.op, a.req = jute.OpGetChildren, &jute.PathWatchRequest{Path: r.path(), Watch: watch}
	case k < 65:
		a.op, a.req = jute.OpGetACL, &jute.PathRequest{Path: r.path()}
	case k < 70:
		a.op, a.req = jute.OpSetACL, &jute.SetACLRequest{Path: r.path(), ACL: diffACLChoice[r.pick(len(diffACLChoice))], Version: r.version()}
	case k < 83:
		m := &jute.MultiRequest{}
		for n := []int{1, 2, 2, 3, 4}[r.pick(5)]; n > 0; n-- {
			if r.pick(4) == 0 {
				m.Ops = append(m.Ops, jute.MultiOp{Type: jute.OpCheck, Req: &jute.PathVersionRequest{Path: r.path(), Version: r.version()}})
				continue
			}
			o, req := r.write(true)
			m.Ops = append(m.Ops, jute.MultiOp{Type: o, Req: req})
		}
		a.op, a.req = jute.OpMulti, m
	case k < 85:
		m := &jute.MultiRequest{}
		for n := r.pick(3) + 1; n > 0; n-- {
			typ := []jute.Op{jute.OpGetData, jute.OpGetChildren}[r.pick(2)]
			// A watch flag here is ignored by both (no watch is set).
			m.Ops = append(m.Ops, jute.MultiOp{Type: typ, Req: &jute.PathWatchRequest{Path: r.path(), Watch: r.pick(2) == 0}})
		}
		a.op, a.req = jute.OpMultiRead, m
	case k < 87:
		a.op, a.req = jute.OpSync, &jute.PathRequest{Path: r.path()}
	case k < 89:
		a.slot = 3 + r.pick(2)
		a.op, a.req = jute.OpAddWatch, &jute.PathTypeRequest{Path: r.validPath(), Type: int32(a.slot - 3)}
		if a.slot == r.offline {
			a.slot, a.op, a.req = 0, jute.OpSync, &jute.PathRequest{Path: r.path()}
		}
	case k < 92:
		typ := int32(r.pick(3)) + 1
		if a.slot >= 3 {
			typ = 3 // Any: the one type that removes persistent watches in both versions
		}
		a.op, a.req = jute.OpRemoveWatches, &jute.PathTypeRequest{Path: r.path(), Type: typ}
	case k < 94:
		a.op, a.req = jute.OpCheckWatches, &jute.PathTypeRequest{Path: r.path(), Type: int32(r.pick(3)) + 1}
	case k < 96:
		a.op, a.req = jute.OpGetEphemerals, &jute.PathRequest{Path: r.root}
	case k < 98:
		a.op, a.req = jute.OpGetAllChildrenNumber, &jute.PathRequest{Path: r.path()}
	default:
		a.op, a.req = jute.OpWhoAmI, jute.Empty{}
	}
	return a
}

// childOf returns a random existing child of p (as ZooKeeper lists it), so
// sequential, ephemeral, container and TTL nodes get deleted too; p itself
// when it has none.
func (r *drun) childOf(p string) string {
	var gc jute.GetChildren2Response
	oracle := r.sides[len(r.sides)-1]
	if h := oracle.super.call(jute.OpGetChildren2, &jute.PathWatchRequest{Path: p}, &gc); h.Err != jute.OK || len(gc.Children) == 0 {
		return p
	}
	ch := sorted(gc.Children)
	return p + "/" + ch[r.pick(len(ch))]
}

// exec runs one action on d and renders its outcome.
func (r *drun) exec(d *dside, step int, a daction) string {
	switch {
	case a.close:
		return d.closeSlot(step, a.slot)
	case a.disconnect:
		return d.disconnect(a.slot)
	case a.reconnect:
		return d.reconnect(a.slot)
	}
	resp, _ := jute.NewResponse(a.op)
	if _, empty := resp.(jute.Empty); empty {
		resp = nil
	}
	h, err := d.slots[a.slot].tryCall(a.op, a.req, resp)
	if err != nil {
		// The server dropped the connection: say so, and resume the
		// session so the run can go on.
		d.slots[a.slot].conn.Close()
		return fmt.Sprintf("connection lost (%v); %s", errKind(err), d.reconnect(a.slot))
	}
	d.models[a.slot].saw(h.Zxid)
	d.models[a.slot].request(a.op, a.req, h.Err)
	if h.Err != jute.OK {
		return fmt.Sprintf("err %d", h.Err)
	}
	switch a.op {
	case jute.OpCreate, jute.OpCreate2, jute.OpCreateContainer, jute.OpCreateTTL, jute.OpDelete,
		jute.OpSetData, jute.OpSetACL, jute.OpMulti:
		d.steps[h.Zxid] = step
	}
	return r.render(d, resp)
}

// errKind reduces a connection error to what both servers can agree on:
// an EOF, a reset or any other socket error is "closed".
func errKind(err error) string {
	var oe *net.OpError
	if errors.Is(err, io.EOF) || errors.As(err, &oe) {
		return "closed"
	}
	return err.Error()
}

// render prints a reply body in server-neutral form.
func (r *drun) render(d *dside, resp jute.Record) string {
	rel := func(p string) string { return strings.Replace(p, r.root, "~", 1) }
	switch x := resp.(type) {
	case nil:
		return "ok"
	case *jute.PathRequest:
		return "path " + rel(x.Path)
	case *jute.Create2Response:
		return "path " + rel(x.Path) + " " + d.norm(x.Stat)
	case *jute.StatResponse:
		return d.norm(x.Stat)
	case *jute.GetDataResponse:
		return fmt.Sprintf("data %q %s", x.Data, d.norm(x.Stat))
	case *jute.GetChildren2Response:
		return fmt.Sprintf("children %v %s", sorted(x.Children), d.norm(x.Stat))
	case *jute.StringsResponse:
		out := make([]string, len(x.Strings))
		for i, s := range x.Strings {
			out[i] = rel(s)
		}
		sort.Strings(out)
		return fmt.Sprintf("strings %v", out)
	case *jute.GetACLResponse:
		return fmt.Sprintf("acl %v %s", x.ACL, d.norm(x.Stat))
	case *jute.IntResponse:
		return fmt.Sprintf("int %d", x.N)
	case *jute.ErrorResponse:
		return fmt.Sprintf("errbody %d", x.Err)
	case *jute.WhoAmIResponse:
		return fmt.Sprintf("whoami %v", x.ClientInfo)
	case *jute.MultiResponse:
		var parts []string
		for _, res := range x.Results {
			s := fmt.Sprintf("%d/%d", res.Type, res.Err)
			if res.Resp != nil {
				s += " " + r.render(d, res.Resp)
			}
			parts = append(parts, s)
		}
		return "multi [" + strings.Join(parts, "; ") + "]"
	}
	return fmt.Sprintf("%T %+v", resp, resp)
}

// dump renders the subtree at p as the super user sees it: data, Stat,
// ACL and children, depth first in sorted order.
func (r *drun) dump(d *dside, p string) string {
	var gd jute.GetDataResponse
	if h := d.super.call(jute.OpGetData, &jute.PathWatchRequest{Path: p}, &gd); h.Err != jute.OK {
		return fmt.Sprintf("%s: err %d\n", p, h.Err)
	}
	var ga jute.GetACLResponse
	d.super.call(jute.OpGetACL, &jute.PathRequest{Path: p}, &ga)
	out := fmt.Sprintf("%s %q %s %v\n", p, gd.Data, d.norm(gd.Stat), ga.ACL)
	var gc jute.GetChildren2Response
	if h := d.super.call(jute.OpGetChildren2, &jute.PathWatchRequest{Path: p}, &gc); h.Err == jute.OK {
		for _, c := range sorted(gc.Children) {
			out += r.dump(d, p+"/"+c)
		}
	}
	return out
}

// removeAll deletes the subtree at p as the super user.
func (r *drun) removeAll(d *dside, p string) {
	var gc jute.GetChildren2Response
	if h := d.super.call(jute.OpGetChildren2, &jute.PathWatchRequest{Path: p}, &gc); h.Err == jute.OK {
		for _, c := range gc.Children {
			r.removeAll(d, p+"/"+c)
		}
	}
	d.super.callErr(jute.OpDelete, &jute.PathVersionRequest{Path: p, Version: -1})
}
