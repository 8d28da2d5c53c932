package znode

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"maps"
	"math/rand"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/zkraft/zkraft/acl"
	"github.com/zkraft/zkraft/jute"
)

// The model test drives random sequences of every write through the entry
// the FSM uses (an encoded Txn, decoded by a TxnDecoder, then Tree.Apply)
// into two trees: live, which only ever applies, and restored, which is
// replaced now and then by a tree read back from its snapshot or by a
// clone, as a member restarting or catching up would be. After every step
// it checks that
//   - no write faults or answers SystemError (the path rule's guards and
//     the ACL cache's refusal are never reached by client input);
//   - both trees gave the same result (code, reply, events) and pass
//     Tree.Verify;
//   - live's snapshot read into a fresh tree compares equal to live in
//     everything (nodes and Stats, ACLs, sessions and identities,
//     ephemeral, reaper, parents and quota indexes, ACL cache, counters)
//     and writes the same bytes again (the digest), as restored does;
//   - a write naming a non-canonical path changed nothing;
//   - a SnapshotView begun before the step writes what the tree held then.
//
// TestModel runs a few seconds of seeds; ZKRAFT_MODEL_SEEDS=1-5000 (make
// model) and ZKRAFT_MODEL_STEPS run longer. FuzzModel lets the fuzzer's
// bytes choose the steps.

// modelSrc is where the model's choices come from.
type modelSrc interface {
	// intn returns a choice in [0, n).
	intn(n int) int
	// exhausted reports that a byte source has run out.
	exhausted() bool
}

type randSrc struct{ r *rand.Rand }

func (s randSrc) intn(n int) int    { return s.r.Intn(n) }
func (s randSrc) exhausted() bool   { return false }
func (s *byteSrc) exhausted() bool  { return s.i >= len(s.b) }
func newRandSrc(seed int64) randSrc { return randSrc{rand.New(rand.NewSource(seed))} }

// byteSrc reads choices from fuzz input, one byte each (two past 256
// choices); an exhausted source answers 0.
type byteSrc struct {
	b []byte
	i int
}

func (s *byteSrc) intn(n int) int {
	v := 0
	for span := 1; span < n; span <<= 8 {
		v <<= 8
		if s.i < len(s.b) {
			v |= int(s.b[s.i])
			s.i++
		}
	}
	return v % n
}

// model is one run: the two trees and what the generator remembers.
type model struct {
	t        testing.TB
	src      modelSrc
	opts     Options
	live     *Tree
	restored *Tree
	dec      TxnDecoder
	zxid     int64
	now      int64
	created  []string // paths created so far (sequential names included)
	idKeys   map[int64][]uint64
	log      []string // the last steps, for failure messages
	// outcomes counts each op's answers, for the run's summary.
	outcomes map[string]int
}

func newModel(t testing.TB, src modelSrc) *model {
	opts := Options{ExtendedTypes: src.intn(4) != 0, EnforceQuota: src.intn(2) == 0, SkipACL: src.intn(16) == 0}
	m := &model{t: t, src: src, opts: opts, live: NewTree(opts), restored: NewTree(opts), now: 1_000_000, idKeys: map[int64][]uint64{}, outcomes: map[string]int{}}
	return m
}

func (m *model) pick(n int) int { return m.src.intn(n) }

// Path pools: canonical paths over a small space (so successes and each
// failure are frequent), quota paths, and malformed spellings.
var (
	modelPaths = []string{
		"/a", "/a/b", "/a/b/c", "/b", "/c", "/c/d", "/ab", "/a b", "/ ", "/ /a", "/x",
		"/zookeeper", "/zookeeper/config", "/zookeeper/quota", "/",
	}
	modelQuotaPaths = []string{
		"/zookeeper/quota/a", "/zookeeper/quota/a/" + QuotaLimitNode, "/zookeeper/quota/a/" + QuotaStatNode,
		"/zookeeper/quota/a/b", "/zookeeper/quota/a/b/" + QuotaLimitNode, "/zookeeper/quota/a/b/" + QuotaStatNode,
		"/zookeeper/quota/ab", "/zookeeper/quota/ab/" + QuotaLimitNode, "/zookeeper/quota/ab/" + QuotaStatNode,
		"/zookeeper/quota/ ", "/zookeeper/quota/ /" + QuotaLimitNode, "/zookeeper/quota/ /a", "/zookeeper/quota/ /a/" + QuotaLimitNode,
		"/zookeeper/quota/" + QuotaLimitNode, "/zookeeper/quotaX", "/zookeeper/quotaX/" + QuotaLimitNode, "/zookeeper/quotaX/" + QuotaStatNode,
		"/zookeeper/x", "/zookeeper/x/" + QuotaLimitNode,
	}
	modelBadPaths = []string{
		"//a", "/a/", "/a//b", "a", "", "/a\x00", "\x00", "/./a", "/a/..", "//", "/a/b/", "//a/b", "///",
		"//zookeeper/quota/a/" + QuotaLimitNode, "/zookeeper/quota/a//" + QuotaLimitNode, "/a/\x01", "/\xff",
	}
)

// path picks a path: canonical, quota, malformed, or one created before
// (or a child of one).
func (m *model) path() string {
	switch m.pick(13) {
	case 0, 1, 2, 3, 4:
		return modelPaths[m.pick(min(len(modelPaths), 11))] // mostly not the system nodes
	case 5:
		return modelPaths[m.pick(len(modelPaths))]
	case 6, 7:
		return modelQuotaPaths[m.pick(len(modelQuotaPaths))]
	case 8:
		return modelBadPaths[m.pick(len(modelBadPaths))]
	case 9:
		// An alias of a path that likely exists: "//a", "/a/".
		p := modelPaths[m.pick(3)]
		if len(m.created) > 0 && m.pick(2) == 0 {
			p = m.created[m.pick(len(m.created))]
		}
		if m.pick(2) == 0 {
			return "/" + p
		}
		return p + "/"
	}
	if len(m.created) == 0 {
		return "/a"
	}
	p := m.created[m.pick(len(m.created))]
	switch m.pick(6) {
	case 0, 1:
		return p + "/k"
	case 2:
		return "/" + p // an alias of p
	}
	return p
}

// modelNames are the names newPath gives new nodes.
var modelNames = []string{"a", "b", "c", "k", "s-", " ", QuotaLimitNode, QuotaStatNode}

// newPath names a node under one that likely exists, so creates succeed
// often enough to grow the tree.
func (m *model) newPath() string {
	parents := []string{"", "/a", "/b", "/zookeeper/quota", "/zookeeper/quota/a", "/zookeeper/quota/a/b"}
	parent := parents[m.pick(len(parents))]
	if len(m.created) > 0 && m.pick(2) == 0 {
		parent = m.created[m.pick(len(m.created))]
	}
	return parent + "/" + modelNames[m.pick(len(modelNames))]
}

var (
	modelUser     = []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "digest", ID: "u:h"}}, {Perms: jute.PermAll, ID: jute.Id{Scheme: "world", ID: "anyone"}}}
	modelAttacker = []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "digest", ID: "u:h\x0031\x005\x00worldanyone"}}}
	modelHuge     = hugeACL(3000)
)

// acl picks an ACL list: ordinary, restrictive, invalid, duplicated, the
// NUL-colliding pair, or long.
func (m *model) acl() []jute.ACL {
	switch m.pick(14) {
	case 0, 1, 2, 3:
		return openACL
	case 4:
		return world(jute.PermRead | jute.PermCreate)
	case 5:
		return []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "ip", ID: "10.0.0.1"}}}
	case 6:
		return []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "auth", ID: ""}}}
	case 7:
		return nil // InvalidACL
	case 8:
		return []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "world", ID: "nobody"}}}
	case 9:
		return append(slices.Clone(openACL), openACL[0], modelUser[0], openACL[0])
	case 10:
		return modelUser
	case 11:
		return modelAttacker
	case 12:
		n := 9 + m.pick(40)
		list := slices.Clone(modelHuge[:n])
		return append(list, list[m.pick(n)]) // past the scan: the hash set
	}
	if m.pick(4) == 0 {
		return modelHuge
	}
	return modelHuge[:100]
}

// ids picks the caller's identities.
func (m *model) ids() []jute.Id {
	switch m.pick(6) {
	case 0:
		return nil
	case 1:
		return []jute.Id{{Scheme: "digest", ID: "u:h"}}
	case 2:
		return []jute.Id{{Scheme: "super", ID: "x"}}
	case 3:
		return []jute.Id{{Scheme: "digest", ID: "u:h"}, {Scheme: "sasl", ID: "bob@R"}}
	}
	return []jute.Id{{Scheme: "ip", ID: "10.0.0." + strconv.Itoa(m.pick(2))}}
}

func (m *model) data() []byte {
	switch m.pick(8) {
	case 0:
		return nil
	case 1:
		return []byte("count=1,bytes=2")
	case 2:
		return []byte("count=3;countHardLimit=4;bytes=9;byteHardLimit=20")
	case 3:
		return bytes.Repeat([]byte("d"), 50)
	}
	return make([]byte, m.pick(6))
}

func (m *model) version() int32 { return int32(m.pick(4)) - 1 }

// createReq builds a create-family request.
func (m *model) createReq(ttl bool) *jute.CreateRequest {
	flags := int32(m.pick(7))
	if m.pick(30) == 0 {
		flags = 99
	}
	path := m.path()
	if m.pick(2) == 0 {
		path = m.newPath()
	}
	r := &jute.CreateRequest{Path: path, Data: m.data(), ACL: m.acl(), Flags: flags, HasTTL: ttl}
	if ttl {
		r.TTL = []int64{-1, 0, 50, 1000, MaxTTL + 1}[m.pick(5)]
	}
	return r
}

// multiOp builds one op of a multi.
func (m *model) multiOp() jute.MultiOp {
	switch m.pick(9) {
	case 0, 1:
		c := m.createReq(false)
		return jute.MultiOp{Type: []jute.Op{jute.OpCreate, jute.OpCreate2, jute.OpCreateContainer}[m.pick(3)], Req: c}
	case 2:
		return jute.MultiOp{Type: jute.OpCreateTTL, Req: m.createReq(true)}
	case 3, 4:
		return jute.MultiOp{Type: jute.OpDelete, Req: &jute.PathVersionRequest{Path: m.path(), Version: m.version()}}
	case 5, 6:
		return jute.MultiOp{Type: jute.OpSetData, Req: &jute.SetDataRequest{Path: m.path(), Data: m.data(), Version: m.version()}}
	case 7:
		return jute.MultiOp{Type: jute.OpCheck, Req: &jute.PathVersionRequest{Path: m.path(), Version: m.version()}}
	}
	if m.pick(12) == 0 { // a read in a multi: the whole multi is MarshallingError
		return jute.MultiOp{Type: jute.OpGetData, Req: &jute.PathWatchRequest{Path: m.path()}}
	}
	return jute.MultiOp{Type: jute.OpCheck, Req: &jute.PathVersionRequest{Path: m.path(), Version: -1}}
}

// next builds the next transaction and says what it is.
func (m *model) next() (*Txn, string) {
	sess := int64(1 + m.pick(4))
	if live := m.live.Sessions(); len(live) > 0 && m.pick(6) != 0 {
		sess = live[m.pick(len(live))].ID
	}
	txn := &Txn{Session: sess, Ids: m.ids()}
	if keys := m.idKeys[sess]; len(keys) > 0 && m.pick(4) == 0 {
		txn.Ids, txn.IdsKey = nil, keys[m.pick(len(keys))]
	}
	if m.pick(5) == 0 {
		m.now += int64(m.pick(3000))
	}
	txn.Time = m.now
	var req jute.Record
	switch k := m.pick(42); {
	case k < 2 || len(m.live.sessions) == 0 && m.pick(2) == 0:
		txn.Type, txn.Timeout, txn.Passwd, txn.Ids, txn.IdsKey = jute.OpCreateSession, 30000, make([]byte, 16), nil, 0
	case k < 4:
		txn.Type = jute.OpCloseSession
	case k < 5:
		txn.Type = OpSetIdentities
		txn.IdsKey = 0
		if txn.Ids == nil {
			txn.Ids = []jute.Id{{Scheme: "ip", ID: "10.0.0.1"}}
		}
		m.idKeys[sess] = append(m.idKeys[sess], IdentityKey(txn.Ids))
	case k < 7:
		txn.Type, txn.Session = jute.OpDeleteContainer, 0
		p := m.path()
		if c := m.live.ReapCandidates(m.now); len(c) > 0 && m.pick(2) == 0 {
			p = c[m.pick(len(c))]
		}
		req = &jute.PathRequest{Path: p}
	case k < 16:
		txn.Type = []jute.Op{jute.OpCreate, jute.OpCreate2, jute.OpCreateContainer, jute.OpCreateTTL}[m.pick(4)]
		req = m.createReq(txn.Type == jute.OpCreateTTL)
	case k < 22:
		txn.Type, req = jute.OpDelete, &jute.PathVersionRequest{Path: m.path(), Version: m.version()}
	case k < 28:
		txn.Type, req = jute.OpSetData, &jute.SetDataRequest{Path: m.path(), Data: m.data(), Version: m.version()}
	case k < 31:
		txn.Type, req = jute.OpSetACL, &jute.SetACLRequest{Path: m.path(), ACL: m.acl(), Version: m.version()}
	case k < 34:
		// A multi that holds together: create, write, check, maybe
		// delete one path, maybe followed by a random op.
		p := m.newPath()
		mr := &jute.MultiRequest{Ops: []jute.MultiOp{
			{Type: jute.OpCreate, Req: &jute.CreateRequest{Path: p, Data: m.data(), ACL: openACL, Flags: int32(m.pick(2)) * jute.FlagPersistentSequential}},
		}}
		if mr.Ops[0].Req.(*jute.CreateRequest).Flags == 0 {
			mr.Ops = append(mr.Ops,
				jute.MultiOp{Type: jute.OpSetData, Req: &jute.SetDataRequest{Path: p, Data: m.data(), Version: 0}},
				jute.MultiOp{Type: jute.OpCheck, Req: &jute.PathVersionRequest{Path: p, Version: 1}})
			if m.pick(2) == 0 {
				mr.Ops = append(mr.Ops, jute.MultiOp{Type: jute.OpDelete, Req: &jute.PathVersionRequest{Path: p, Version: 1}})
			}
		}
		if m.pick(3) == 0 {
			mr.Ops = append(mr.Ops, m.multiOp())
		}
		txn.Type, req = jute.OpMulti, mr
	default:
		mr := &jute.MultiRequest{}
		for i := m.pick(5); i >= 0; i-- {
			mr.Ops = append(mr.Ops, m.multiOp())
		}
		txn.Type, req = jute.OpMulti, mr
	}
	if req != nil {
		txn.Req = jute.Marshal(req)
	}
	return txn, describe(txn, req)
}

// describe is a step's one-line description for failure messages.
func describe(txn *Txn, req jute.Record) string {
	s := fmt.Sprintf("%v session %#x ids %v key %#x time %d", txn.Type, txn.Session, txn.Ids, txn.IdsKey, txn.Time)
	if mr, ok := req.(*jute.MultiRequest); ok {
		for _, op := range mr.Ops {
			s += fmt.Sprintf("\n    %v %+v", op.Type, short(op.Req))
		}
		return s
	}
	if req != nil {
		s += fmt.Sprintf(" %+v", short(req))
	}
	return s
}

// short prints a request with long ACLs elided.
func short(r jute.Record) string {
	s := fmt.Sprintf("%+v", r)
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

// apply runs txn through the FSM's entry on tree: encoded, decoded with a
// TxnDecoder, applied.
func (m *model) apply(tree *Tree, txn *Txn, zxid int64) *Result {
	var w jute.Writer
	txn.Encode(&w)
	dec, err := m.dec.Decode(w.Buf)
	if err != nil {
		m.fail("decode: %v", err)
	}
	return tree.Apply(dec, zxid)
}

func (m *model) fail(format string, args ...any) {
	m.t.Helper()
	m.t.Fatalf("%s\nlast steps (newest last):\n  %s", fmt.Sprintf(format, args...), strings.Join(m.log, "\n  "))
}

// run applies steps transactions, checking after each.
func (m *model) run(steps int) {
	for i := 0; i < steps && !m.src.exhausted(); i++ {
		m.step()
	}
}

// step applies one transaction to both trees and checks everything.
func (m *model) step() {
	m.t.Helper()
	txn, what := m.next()
	m.zxid++
	m.log = append(m.log, fmt.Sprintf("zxid %d: %s", m.zxid, what))
	if len(m.log) > 12 {
		m.log = m.log[1:]
	}
	aliased := nonCanonicalWrite(txn)
	var before modelState
	if aliased {
		before = dumpModel(m.live)
	}
	var view *SnapshotView
	var viewWant []byte
	if m.pick(8) == 0 {
		viewWant = snapshotBytes(m.t, m.live)
		var err error
		if view, err = m.live.BeginSnapshot(); err != nil {
			m.fail("BeginSnapshot: %v", err)
		}
	}
	rl := m.apply(m.live, txn, m.zxid)
	rr := m.apply(m.restored, txn, m.zxid)
	if view != nil {
		var got bytes.Buffer
		if err := view.WriteSnapshot(&got, func() {}, func() {}); err != nil {
			m.fail("view: %v", err)
		}
		view.Close()
		if !bytes.Equal(got.Bytes(), viewWant) {
			m.fail("a view begun before the step wrote another snapshot than the tree held")
		}
	}
	if rl.Fault != nil || rl.Err == jute.ErrSystemError {
		m.fail("%v, fault %v", rl.Err, rl.Fault)
	}
	if rl.Err != rr.Err || !reflect.DeepEqual(rl.Resp, rr.Resp) || !reflect.DeepEqual(rl.Events, rr.Events) {
		m.fail("results differ:\nlive     %v %+v %v\nrestored %v %+v %v", rl.Err, rl.Resp, rl.Events, rr.Err, rr.Resp, rr.Events)
	}
	if aliased {
		if after := dumpModel(m.live); rl.Err == jute.OK || len(rl.Events) > 0 || !reflect.DeepEqual(before, after) {
			m.fail("a write naming a non-canonical path answered %v and changed the tree", rl.Err)
		}
	}
	m.checkCreatedACL(txn, rl)
	m.noteCreated(txn, rl)
	m.count(txn, rl)
	m.check()
}

// checkCreatedACL checks that a create that succeeded gave its node the
// ACL it asked for, fixed up: what the interning key must never confuse.
func (m *model) checkCreatedACL(txn *Txn, res *Result) {
	if res.Err != jute.OK || txn.IdsKey != 0 {
		return
	}
	var req jute.CreateRequest
	switch txn.Type {
	case jute.OpCreate, jute.OpCreate2, jute.OpCreateContainer, jute.OpCreateTTL:
		req.HasTTL = txn.Type == jute.OpCreateTTL
	default:
		return
	}
	var r jute.Reader
	r.Reset(txn.Req)
	if req.Decode(&r) != nil {
		m.fail("a create that succeeded does not decode")
	}
	want, err := acl.Fixup(req.ACL, txn.Ids)
	if err != nil {
		m.fail("a create with an invalid ACL succeeded")
	}
	var path string
	switch p := res.Resp.(type) {
	case *jute.PathRequest:
		path = p.Path
	case *jute.Create2Response:
		path = p.Path
	}
	if got, ok := m.live.NodeACL(path); !ok || !reflect.DeepEqual(got, want) {
		m.fail("%s has ACL %.200q, asked for %.200q", path, got, want)
	}
}

// count records the step's outcome, a multi's per-op codes included.
func (m *model) count(txn *Txn, res *Result) {
	m.outcomes[fmt.Sprintf("%v %v", txn.Type, res.Err)]++
	if mr, ok := res.Resp.(*jute.MultiResponse); ok {
		for _, r := range mr.Results {
			if r.Type == jute.OpError {
				m.outcomes[fmt.Sprintf("multi op %v", r.Err)]++
			} else {
				m.outcomes[fmt.Sprintf("multi op %v OK", r.Type)]++
			}
		}
	}
}

// nonCanonicalWrite reports a single-path write whose path is not
// canonical (create is left out: its sequential suffix decides).
func nonCanonicalWrite(txn *Txn) bool {
	var r jute.Reader
	r.Reset(txn.Req)
	var path string
	switch txn.Type {
	case jute.OpDelete:
		var q jute.PathVersionRequest
		if q.Decode(&r) != nil {
			return false
		}
		path = q.Path
	case jute.OpSetData:
		var q jute.SetDataRequest
		if q.Decode(&r) != nil {
			return false
		}
		path = q.Path
	case jute.OpSetACL:
		var q jute.SetACLRequest
		if q.Decode(&r) != nil {
			return false
		}
		path = q.Path
	case jute.OpDeleteContainer:
		var q jute.PathRequest
		if q.Decode(&r) != nil {
			return false
		}
		path = q.Path
	default:
		return false
	}
	return !canonical(path)
}

// noteCreated remembers the paths a write created.
func (m *model) noteCreated(txn *Txn, res *Result) {
	add := func(p string) {
		if len(m.created) < 64 {
			m.created = append(m.created, p)
		} else {
			m.created[m.pick(len(m.created))] = p
		}
	}
	switch r := res.Resp.(type) {
	case *jute.PathRequest:
		add(r.Path)
	case *jute.Create2Response:
		add(r.Path)
	case *jute.MultiResponse:
		for _, mr := range r.Results {
			switch c := mr.Resp.(type) {
			case *jute.PathRequest:
				add(c.Path)
			case *jute.Create2Response:
				add(c.Path)
			}
		}
	}
}

// check verifies both trees, round-trips live through a snapshot, and
// now and then restarts restored from a snapshot or a clone.
func (m *model) check() {
	m.t.Helper()
	for name, tr := range map[string]*Tree{"live": m.live, "restored": m.restored} {
		if err := tr.Verify(); err != nil {
			m.fail("%s: %v", name, err)
		}
	}
	snap := snapshotBytes(m.t, m.live)
	fresh, err := ReadSnapshot(bytes.NewReader(snap), m.opts)
	if err != nil {
		m.fail("live's snapshot does not load: %v", err)
	}
	want := dumpModel(m.live)
	if got := dumpModel(fresh); !reflect.DeepEqual(want, got) {
		m.fail("restored from the snapshot differs:\n%s", diffModel(want, got))
	}
	if got := dumpModel(m.restored); !reflect.DeepEqual(want, got) {
		m.fail("the restarted tree differs:\n%s", diffModel(want, got))
	}
	digest := sha256.Sum256(snap)
	for name, tr := range map[string]*Tree{"fresh": fresh, "restored": m.restored, "clone": m.live.Clone()} {
		if sha256.Sum256(snapshotBytes(m.t, tr)) != digest {
			m.fail("%s writes another snapshot than live", name)
		}
	}
	switch m.pick(6) {
	case 0:
		m.restored = fresh
	case 1:
		m.restored = m.restored.Clone()
	}
}

func snapshotBytes(t testing.TB, tr *Tree) []byte {
	var buf bytes.Buffer
	if err := tr.WriteSnapshot(&buf); err != nil {
		t.Fatalf("WriteSnapshot: %v", err)
	}
	return buf.Bytes()
}

// modelState is everything a tree holds, internal indexes included.
type modelState struct {
	Nodes     map[string]string
	Sessions  []SessionInfo
	Ephem     map[int64][]string
	Reapable  []string
	Parents   []string
	Quotas    []string
	ACLs      map[string]int // ACL key -> references
	Stats     Stats
	OrphanEph int
}

// dumpModel captures a tree's state (its last zxid aside).
func dumpModel(tr *Tree) modelState {
	st := modelState{Nodes: map[string]string{}, Sessions: tr.Sessions(), Ephem: map[int64][]string{}, ACLs: map[string]int{}, Stats: tr.Stats()}
	var scratch []childEntry
	walkSorted(RootPath, tr.root, &scratch, func(p string, n *node) {
		st.Nodes[p] = fmt.Sprintf("%+v nil=%v %q %v kind=%d owner=%d", n.stat(), n.data == nil, n.data, tr.aclOf(n), n.kind(), n.owner)
		if n.kind() == kindEphemeral && tr.sessions[n.owner] == nil {
			st.OrphanEph++
		}
	})
	for id := range tr.sessions {
		st.Ephem[id] = tr.GetEphemerals(id, "")
	}
	for p := range tr.reapable {
		st.Reapable = append(st.Reapable, p)
	}
	slices.Sort(st.Reapable)
	for p := range tr.parents {
		st.Parents = append(st.Parents, p)
	}
	slices.Sort(st.Parents)
	st.Quotas = tr.quotas.paths()
	for k, r := range tr.acls.slots {
		st.ACLs[k] = tr.acls.lists[r].refs
	}
	return st
}

// diffModel names the first fields that differ.
func diffModel(a, b modelState) string {
	var out []string
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	for i := range va.NumField() {
		if !reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			out = append(out, fmt.Sprintf("%s:\n  want %v\n  got  %v", va.Type().Field(i).Name, va.Field(i).Interface(), vb.Field(i).Interface()))
		}
	}
	s := strings.Join(out, "\n")
	if len(s) > 4000 {
		s = s[:4000] + "..."
	}
	return s
}

// modelSeeds parses ZKRAFT_MODEL_SEEDS ("1-5000" or "7"), else def.
func modelSeeds(t *testing.T, def [2]int64) [2]int64 {
	v := os.Getenv("ZKRAFT_MODEL_SEEDS")
	if v == "" {
		return def
	}
	lo, hi, ok := strings.Cut(v, "-")
	if !ok {
		hi = lo
	}
	a, err1 := strconv.ParseInt(lo, 10, 64)
	b, err2 := strconv.ParseInt(hi, 10, 64)
	if err1 != nil || err2 != nil || a > b {
		t.Fatalf("ZKRAFT_MODEL_SEEDS=%q: want N or N-M", v)
	}
	return [2]int64{a, b}
}

// TestModel runs the model over a range of seeds.
func TestModel(t *testing.T) {
	seeds := modelSeeds(t, [2]int64{1, 12})
	steps := 200
	if testing.Short() {
		seeds[1] = seeds[0] + 9
	}
	if v := os.Getenv("ZKRAFT_MODEL_STEPS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("ZKRAFT_MODEL_STEPS=%q", v)
		}
		steps = n
	}
	total := map[string]int{}
	for seed := seeds[0]; seed <= seeds[1]; seed++ {
		t.Run("seed"+strconv.FormatInt(seed, 10), func(t *testing.T) {
			m := newModel(t, newRandSrc(seed))
			m.run(steps)
			for k, n := range m.outcomes {
				total[k] += n
			}
		})
	}
	keys := slices.Sorted(maps.Keys(total))
	for _, k := range keys {
		t.Logf("%6d %s", total[k], k)
	}
}

// FuzzModel lets the fuzzer's bytes choose the options and every step.
func FuzzModel(f *testing.F) {
	rng := rand.New(rand.NewSource(1))
	for _, n := range []int{16, 200, 1000} {
		b := make([]byte, n)
		rng.Read(b)
		f.Add(b)
	}
	f.Add([]byte("\x01\x00\x00\x00\x10\x03\x00\x16\x05\x00\x00\x00\x0a\x06\x01"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 4096 {
			b = b[:4096]
		}
		newModel(t, &byteSrc{b: b}).run(400)
	})
}
