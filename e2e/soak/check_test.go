package soak

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
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
