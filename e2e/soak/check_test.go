package soak

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/go-zookeeper/zk"
)

// What is checked, and against which model:
//
//   - Writes (set, cas, create, delete) and sync-reads (sync, then getData
//     on the same session) of each register: linearizable, checked with
//     porcupine against a znode's semantics (data, version, exists). A
//     write of unknown outcome may take effect at any time after its
//     invocation, or never.
//   - The same history with one more linearizable read of every register
//     made after everything healed: an acknowledged write that the final
//     state contradicts is a lost write.
//   - Plain reads (getData without sync) are not linearizable in ZooKeeper.
//     They are checked against what it does promise: a read returns a value
//     some write wrote, not before that write was invoked, not of a write
//     that failed, with that write's version and zxid (one value, one
//     zxid, on every member); and a session never reads a register older
//     than a write it has already seen (ZooKeeper's lastZxidSeen rule,
//     across members and reconnections): it may not return a version
//     whose mzxid is below that of a write on the same register at or
//     below the highest zxid the session has seen.
//   - Sequential creates: every acknowledged one is in the final tree at
//     the path it was acknowledged with; every one there was invoked and
//     did not fail; none was applied twice; and sequence numbers follow
//     real time (a create invoked after another was acknowledged gets a
//     higher number).

// errCode is a definite ZooKeeper error an operation ended with.
type errCode uint8

const (
	codeNone errCode = iota
	codeNoNode
	codeNodeExists
	codeBadVersion
	codeNotEmpty
	codeOther
)

func codeOf(err error) errCode {
	switch {
	case err == nil:
		return codeNone
	case errors.Is(err, zk.ErrNoNode):
		return codeNoNode
	case errors.Is(err, zk.ErrNodeExists):
		return codeNodeExists
	case errors.Is(err, zk.ErrBadVersion):
		return codeBadVersion
	case errors.Is(err, zk.ErrNotEmpty):
		return codeNotEmpty
	}
	return codeOther
}

// regState is a register's state in the model: its znode, or none.
type regState struct {
	exists  bool
	value   string
	version int32
}

// regIn and regOut are an operation's input and output in the model.
type regIn struct {
	kind    opKind
	value   string
	version int32
}

type regOut struct {
	out     outcome
	code    errCode
	exists  bool
	value   string
	version int32
}

// registerModel is a znode under getData, setData (blind and with a
// version), create and delete (blind and with a version), as ZooKeeper
// answers them: NoNode before BadVersion, versions counting from 0 at each
// create.
var registerModel = porcupine.NondeterministicModel{
	Init: func() []any { return []any{regState{}} },
	Step: func(state, input, output any) []any {
		s, in, out := state.(regState), input.(regIn), output.(regOut)
		one := func(ok bool, next regState) []any {
			if ok {
				return []any{next}
			}
			return nil
		}
		// unknown: the write may or may not have taken effect.
		maybe := func(applies bool, next regState) []any {
			if applies {
				return []any{s, next}
			}
			return []any{s}
		}
		switch in.kind {
		case opSyncRead, opRead:
			if !out.exists {
				return one(!s.exists, s)
			}
			return one(s.exists && s.value == out.value && s.version == out.version, s)
		case opSet, opCAS:
			next := regState{exists: true, value: in.value, version: s.version + 1}
			matches := s.exists && (in.kind == opSet || s.version == in.version)
			switch {
			case out.out == outUnknown:
				return maybe(matches, next)
			case out.out == outOK:
				return one(matches && out.version == next.version, next)
			case out.code == codeNoNode:
				return one(!s.exists, s)
			case out.code == codeBadVersion:
				return one(s.exists && !matches, s)
			}
		case opCreate:
			next := regState{exists: true, value: in.value}
			switch {
			case out.out == outUnknown:
				return maybe(!s.exists, next)
			case out.out == outOK:
				return one(!s.exists, next)
			case out.code == codeNodeExists:
				return one(s.exists, s)
			}
		case opDelete:
			matches := s.exists && (in.version == -1 || s.version == in.version)
			switch {
			case out.out == outUnknown:
				return maybe(matches, regState{})
			case out.out == outOK:
				return one(matches, regState{})
			case out.code == codeNoNode:
				return one(!s.exists, s)
			case out.code == codeBadVersion:
				return one(s.exists && !matches, s)
			}
		}
		return nil
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(regIn), output.(regOut)
		s := in.kind.String()
		if in.value != "" && in.kind != opSyncRead {
			s += " " + in.value
		}
		if in.version != -1 && (in.kind == opCAS || in.kind == opDelete) {
			s += fmt.Sprintf(" v%d", in.version)
		}
		switch {
		case out.out == outOK && (in.kind == opSyncRead || in.kind == opRead) && out.exists:
			return s + fmt.Sprintf(" -> %s v%d", out.value, out.version)
		case out.out == outOK && (in.kind == opSyncRead || in.kind == opRead):
			return s + " -> none"
		case out.out == outOK && (in.kind == opSet || in.kind == opCAS):
			return s + fmt.Sprintf(" -> v%d", out.version)
		case out.out == outFail:
			return s + fmt.Sprintf(" -> error %d", out.code)
		}
		return s + " -> " + out.out.String()
	},
	DescribeState: func(state any) string {
		s := state.(regState)
		if !s.exists {
			return "none"
		}
		return fmt.Sprintf("%s v%d", s.value, s.version)
	},
}

// porcupineOp turns a register operation into porcupine's form, or returns
// false for one that says nothing: a read that failed, or a write that
// never left its client. A write of unknown outcome stays open forever.
func porcupineOp(o *op) (porcupine.Operation, bool) {
	switch {
	case o.kind == opSeqCreate, o.kind == opRead:
		return porcupine.Operation{}, false
	case o.kind == opSyncRead && o.out != outOK:
		return porcupine.Operation{}, false
	case o.out == outNotSent:
		return porcupine.Operation{}, false
	}
	ret := o.ret
	if o.out == outUnknown {
		ret = math.MaxInt64
	}
	out := regOut{out: o.out, code: codeOf(o.err)}
	switch {
	case o.kind == opSyncRead:
		out.exists, out.value, out.version = o.exists, o.data, o.stat.Version
	case o.out == outOK && (o.kind == opSet || o.kind == opCAS):
		out.version = o.stat.Version
	}
	return porcupine.Operation{ClientId: o.client, Input: regIn{kind: o.kind, value: o.value, version: o.version},
		Call: o.call, Output: out, Return: ret}, true
}

// registerReport is what the register check found.
type registerReport struct {
	keys, ops    int
	violations   []string // keys whose history is not linearizable
	lost         []string // keys whose final state contradicts an acknowledged write
	inconclusive []string // keys the checker gave up on
}

// checkRegisters checks every register's history with porcupine, alone
// and then with its final read; dir receives a visualization of each
// history found not linearizable.
func checkRegisters(ops, finals []*op, dir string, timeout time.Duration) registerReport {
	byKey := map[string][]porcupine.Operation{}
	for _, o := range ops {
		if p, ok := porcupineOp(o); ok {
			byKey[o.key] = append(byKey[o.key], p)
		}
	}
	final := map[string]porcupine.Operation{}
	for _, o := range finals {
		if p, ok := porcupineOp(o); ok {
			final[o.key] = p
		}
	}
	var keys []string
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	rep := registerReport{keys: len(keys)}
	model := registerModel.ToModel()
	var mu sync.Mutex
	var wg sync.WaitGroup
	work := make(chan string)
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range work {
				h := byKey[k]
				res := porcupine.CheckOperationsTimeout(model, h, timeout)
				kind := "violation"
				if res == porcupine.Ok {
					if f, ok := final[k]; ok {
						h = append(append([]porcupine.Operation(nil), h...), f)
						res = porcupine.CheckOperationsTimeout(model, h, timeout)
						kind = "lost"
					}
				}
				if res == porcupine.Illegal {
					visualize(model, h, filepath.Join(dir, "porcupine-"+strings.ReplaceAll(strings.Trim(k, "/"), "/", "_")+".html"), timeout)
				}
				mu.Lock()
				rep.ops += len(byKey[k])
				switch {
				case res == porcupine.Unknown:
					rep.inconclusive = append(rep.inconclusive, k)
				case res == porcupine.Illegal && kind == "lost":
					rep.lost = append(rep.lost, k)
				case res == porcupine.Illegal:
					rep.violations = append(rep.violations, k)
				}
				mu.Unlock()
			}
		}()
	}
	for _, k := range keys {
		work <- k
	}
	close(work)
	wg.Wait()
	sort.Strings(rep.violations)
	sort.Strings(rep.lost)
	sort.Strings(rep.inconclusive)
	return rep
}

// visualize writes porcupine's HTML view of an illegal history to path.
func visualize(model porcupine.Model, h []porcupine.Operation, path string, timeout time.Duration) {
	_, info := porcupine.CheckOperationsVerbose(model, h, timeout)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err == nil {
		_ = porcupine.VisualizePath(model, info, path)
	}
}

// readReport is what the check of reads against ZooKeeper's session
// guarantees found.
type readReport struct {
	checked    int      // reads that returned a value
	stale      int      // of them, older than a write acknowledged before they were invoked (allowed)
	violations []string // broken guarantees, described
}

// checkReads checks every read that returned a znode (plain and synced)
// against what ZooKeeper promises of all reads.
func checkReads(ops []*op) readReport {
	var rep readReport
	fail := func(format string, args ...any) {
		if len(rep.violations) < 50 {
			rep.violations = append(rep.violations, fmt.Sprintf(format, args...))
		} else if len(rep.violations) == 50 {
			rep.violations = append(rep.violations, "(more left out)")
		}
	}
	isRead := func(o *op) bool { return (o.kind == opRead || o.kind == opSyncRead) && o.out == outOK && o.exists }
	writes := map[string]*op{} // by value
	for _, o := range ops {
		if o.kind == opSet || o.kind == opCAS || o.kind == opCreate {
			writes[o.value] = o
		}
	}
	// zxids of writes, per register: acknowledged setData's, and whatever a
	// read saw (checked below to be one write's).
	zxids := map[string][]int64{}
	zxidOf := map[string]int64{} // by value
	note := func(key, value string, z int64) {
		if prev, ok := zxidOf[value]; ok {
			if prev != z {
				fail("value %s of %s seen with mzxid %#x and %#x: two writes, or members that disagree", value, key, prev, z)
			}
			return
		}
		zxidOf[value] = z
		zxids[key] = append(zxids[key], z)
	}
	for _, o := range ops {
		switch {
		case o.out == outOK && (o.kind == opSet || o.kind == opCAS):
			note(o.key, o.value, o.stat.Mzxid)
		case isRead(o):
			note(o.key, o.data, o.stat.Mzxid)
		}
	}
	for k := range zxids {
		sort.Slice(zxids[k], func(i, j int) bool { return zxids[k][i] < zxids[k][j] })
	}
	// latest acknowledged write per register, by response time, for the
	// count of stale reads.
	type ack struct {
		ret  int64
		zxid int64
	}
	acks := map[string][]ack{}
	for _, o := range ops {
		if o.out == outOK && (o.kind == opSet || o.kind == opCAS) {
			acks[o.key] = append(acks[o.key], ack{o.ret, o.stat.Mzxid})
		}
	}
	for k := range acks {
		sort.Slice(acks[k], func(i, j int) bool { return acks[k][i].ret < acks[k][j].ret })
	}
	seen := map[int]int64{}    // per client: highest zxid its current session has seen
	session := map[int]int64{} // per client: that session
	for _, o := range ops {    // each client's operations are in its order
		if o.session == 0 || o.session != session[o.client] {
			session[o.client], seen[o.client] = o.session, 0
		}
		if !isRead(o) {
			if o.out == outOK && (o.kind == opSet || o.kind == opCAS) && o.session != 0 {
				seen[o.client] = max(seen[o.client], o.stat.Mzxid)
			}
			continue
		}
		rep.checked++
		w := writes[o.data]
		switch {
		case w == nil:
			fail("%s: no client wrote that value", o.describe())
			continue
		case w.key != o.key:
			fail("%s: that value was written to %s", o.describe(), w.key)
		case w.call > o.ret:
			fail("%s: read before its write was invoked: %s", o.describe(), w.describe())
		case w.out == outFail || w.out == outNotSent:
			fail("%s: the value of a write that failed: %s", o.describe(), w.describe())
		case w.out == outOK && (w.kind == opSet || w.kind == opCAS) && (w.stat.Version != o.stat.Version || w.stat.Mzxid != o.stat.Mzxid):
			fail("%s: its write was acknowledged with version %d mzxid %#x", o.describe(), w.stat.Version, w.stat.Mzxid)
		case w.kind == opCreate && (o.stat.Version != 0 || o.stat.Czxid != o.stat.Mzxid):
			fail("%s: a value a create wrote, with version %d czxid %#x", o.describe(), o.stat.Version, o.stat.Czxid)
		case w.kind == opCAS && w.out == outUnknown && o.stat.Version != w.version+1:
			fail("%s: written by a compare-and-swap expecting version %d", o.describe(), w.version)
		}
		if o.session != 0 {
			// The newest write of this register at or below what the
			// session has seen: the read may not be older.
			zs := zxids[o.key]
			i := sort.Search(len(zs), func(i int) bool { return zs[i] > seen[o.client] })
			if i > 0 && o.stat.Mzxid < zs[i-1] {
				fail("%s: session %x had seen zxid %#x, and %s was written at %#x", o.describe(), o.session, seen[o.client], o.key, zs[i-1])
			}
			seen[o.client] = max(seen[o.client], o.stat.Mzxid)
		}
		a := acks[o.key]
		if i := sort.Search(len(a), func(i int) bool { return a[i].ret >= o.call }); i > 0 && o.stat.Mzxid < a[i-1].zxid {
			rep.stale++
		}
	}
	return rep
}

// seqReport is what the check of sequential creates found.
type seqReport struct {
	acked, unknown, present int
	lost                    []string
	problems                []string // phantoms, duplicates, wrong paths, numbers out of real-time order
}

// checkSeqCreates checks the sequential creates against the final tree.
func checkSeqCreates(ops []*op, tree map[string]znodeState) seqReport {
	var rep seqReport
	problem := func(format string, args ...any) {
		if len(rep.problems) < 50 {
			rep.problems = append(rep.problems, fmt.Sprintf(format, args...))
		}
	}
	byValue := map[string]*op{}
	for _, o := range ops {
		if o.kind != opSeqCreate {
			continue
		}
		byValue[o.value] = o
		switch o.out {
		case outOK:
			rep.acked++
		case outUnknown:
			rep.unknown++
		}
	}
	// What is in the tree under the parents, by the value in the name.
	present := map[string][]string{}
	seqOf := map[string]int64{} // by path
	for path := range tree {
		if !strings.HasPrefix(path, "/soak/s/g") || strings.Count(path, "/") != 4 {
			continue
		}
		name := path[strings.LastIndexByte(path, '/')+1:]
		i := strings.LastIndexByte(name, '-')
		n, err := strconv.ParseInt(name[i+1:], 10, 64)
		if i < 0 || err != nil {
			problem("%s: not a name the workload makes", path)
			continue
		}
		rep.present++
		present[name[:i]] = append(present[name[:i]], path)
		seqOf[path] = n
	}
	for v, paths := range present {
		o := byValue[v]
		switch {
		case o == nil:
			problem("%v: no client created %s", paths, v)
		case o.out == outFail || o.out == outNotSent:
			problem("%v: created by a create that failed: %s", paths, o.describe())
		case len(paths) > 1:
			problem("%v: one create applied %d times: %s", paths, len(paths), o.describe())
		case o.out == outOK && o.path != paths[0]:
			problem("%s: acknowledged as %s", paths[0], o.describe())
		}
	}
	type created struct {
		o   *op
		seq int64
	}
	byParent := map[string][]created{}
	for _, o := range ops {
		if o.kind != opSeqCreate {
			continue
		}
		if o.out == outOK {
			if _, ok := tree[o.path]; !ok {
				rep.lost = append(rep.lost, o.describe())
				continue
			}
		}
		if paths := present[o.value]; len(paths) == 1 {
			byParent[o.key] = append(byParent[o.key], created{o, seqOf[paths[0]]})
		}
	}
	for _, cs := range byParent {
		acked := make([]created, 0, len(cs))
		for _, c := range cs {
			if c.o.out == outOK {
				acked = append(acked, c)
			}
		}
		sort.Slice(acked, func(i, j int) bool { return acked[i].o.ret < acked[j].o.ret })
		sort.Slice(cs, func(i, j int) bool { return cs[i].o.call < cs[j].o.call })
		j, top := 0, created{seq: -1}
		for _, c := range cs {
			for ; j < len(acked) && acked[j].o.ret < c.o.call; j++ {
				if acked[j].seq > top.seq {
					top = acked[j]
				}
			}
			if c.seq <= top.seq {
				problem("sequence %d of %s is not above %d of %s, acknowledged before it was invoked", c.seq, c.o.describe(), top.seq, top.o.describe())
			}
		}
	}
	sort.Strings(rep.lost)
	return rep
}
