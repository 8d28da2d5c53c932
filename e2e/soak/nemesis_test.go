package soak

import (
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// Fault kinds, as counted in the summary.
const (
	faultKill     = "kill -9"
	faultStop     = "sigstop"
	faultPause    = "docker pause"
	faultIsolate  = "isolate"
	faultSplit    = "split 2|3"
	faultBridge   = "bridge"
	faultOneWay   = "one-way"
	faultDiskFull = "disk full"
	faultEIO      = "eio"
	faultMinority = "minority window"
)

// nemesisConfig shapes the faults.
type nemesisConfig struct {
	gapMin, gapMax time.Duration // between one injection and the next
	durMin, durMax time.Duration // how long a fault lasts
	minorityEvery  time.Duration // a window without a quorum this often (0: once, half-way)
	minorityFor    time.Duration
}

// fault is one injected fault until it heals.
type fault struct {
	kind    string
	desc    string
	target  []int     // process and disk faults: the members it stops
	net     partition // network faults: what it blocks
	started time.Time
	until   time.Time
	heal    func() error
}

// event is one line of the fault timeline.
type event struct {
	at   time.Duration
	text string
}

// availability says, from a moment on, whether three healthy members could
// all reach each other (a quorum the ensemble must serve with), and
// whether a minority window is on.
type availability struct {
	at       time.Duration
	quorum   bool
	minority bool
}

// nemesis injects faults at random, never more at once than leaves a quorum
// of healthy, connected members, except in minority windows.
type nemesis struct {
	c     *cluster
	cfg   nemesisConfig
	rng   *rand.Rand
	start time.Time
	logf  func(string, ...any)

	active     []*fault
	down       map[int]bool      // killed, or exited by itself, and not restarted
	stopped    map[int]bool      // SIGSTOP or docker pause
	restarted  map[int]time.Time // when each member was last started again
	refusals   map[int]int       // restarts in a row that exited at once
	gaveUp     map[int]bool      // members left down after repeated refusals
	diskFault  *fault            // the faulty disk's fault, if one is on
	inMinority bool

	mu       sync.Mutex // guards what the summary reads
	counts   map[string]int
	timeline []event
	avail    []availability
	findings []string // members that exited on their own or refused to restart, with their logs' tails
	refused  []string // members that refused to restart, and why
	diskLog  []string // what each disk fault did to its member
}

func newNemesis(c *cluster, cfg nemesisConfig, seed int64, start time.Time, logf func(string, ...any)) *nemesis {
	return &nemesis{c: c, cfg: cfg, rng: rand.New(rand.NewSource(seed)), start: start, logf: logf,
		down: map[int]bool{}, stopped: map[int]bool{}, restarted: map[int]time.Time{},
		refusals: map[int]int{}, gaveUp: map[int]bool{}, counts: map[string]int{}}
}

func (n *nemesis) now() time.Duration { return time.Since(n.start) }

func (n *nemesis) note(format string, args ...any) {
	text := fmt.Sprintf(format, args...)
	n.mu.Lock()
	n.timeline = append(n.timeline, event{n.now(), text})
	n.mu.Unlock()
	n.logf("%7.1fs %s", n.now().Seconds(), text)
}

func (n *nemesis) count(kind string) {
	n.mu.Lock()
	n.counts[kind]++
	n.mu.Unlock()
}

// union is every active fault's partition together.
func (n *nemesis) union(except *fault) partition {
	p := partition{}
	for _, f := range n.active {
		if f == except {
			continue
		}
		for pair := range f.net {
			p[pair] = true
		}
	}
	return p
}

// healthy reports whether member id is running, not frozen, and not on a
// failing disk, counting extra as stopped too.
func (n *nemesis) healthy(id int, extra []int) bool {
	for _, x := range extra {
		if x == id {
			return false
		}
	}
	return !n.down[id] && !n.stopped[id] && !(id == n.c.diskID && n.diskFault != nil)
}

// quorum reports whether three healthy members can all reach each other
// with f added to the faults on now.
func (n *nemesis) quorum(f *fault) bool {
	p := n.union(nil)
	var extra []int
	if f != nil {
		for pair := range f.net {
			p[pair] = true
		}
		extra = f.target
	}
	var ok []int
	for _, m := range n.c.members {
		if n.healthy(m.id, extra) {
			ok = append(ok, m.id)
		}
	}
	for i := 0; i < len(ok); i++ {
		for j := i + 1; j < len(ok); j++ {
			for k := j + 1; k < len(ok); k++ {
				if p.connected(ok[i], ok[j]) && p.connected(ok[i], ok[k]) && p.connected(ok[j], ok[k]) {
					return true
				}
			}
		}
	}
	return false
}

func (n *nemesis) markAvailability() {
	a := availability{at: n.now(), quorum: n.quorum(nil), minority: n.inMinority}
	n.mu.Lock()
	defer n.mu.Unlock()
	if k := len(n.avail); k > 0 && n.avail[k-1].quorum == a.quorum && n.avail[k-1].minority == a.minority {
		return
	}
	n.avail = append(n.avail, a)
}

// run injects faults until until, then heals everything.
func (n *nemesis) run(until time.Time) {
	n.markAvailability()
	next := time.Now().Add(n.gap())
	nextMinority := n.start.Add(time.Until(until) / 2)
	if n.cfg.minorityEvery > 0 {
		nextMinority = time.Now().Add(n.cfg.minorityEvery / 2)
	}
	for time.Now().Before(until) {
		time.Sleep(500 * time.Millisecond)
		n.healExpired(false)
		n.poll()
		switch {
		case time.Now().After(nextMinority) && !n.inMinority:
			n.minority()
			if n.cfg.minorityEvery > 0 {
				nextMinority = time.Now().Add(n.cfg.minorityEvery)
			} else {
				nextMinority = until.Add(time.Hour)
			}
		case time.Now().After(next):
			n.injectOne()
			next = time.Now().Add(n.gap())
		}
		n.markAvailability()
	}
	n.healExpired(true)
	n.poll()
	for _, m := range n.c.members {
		if n.down[m.id] {
			n.restart(m.id, "the final heal")
		}
	}
	n.markAvailability()
}

func (n *nemesis) gap() time.Duration { return n.between(n.cfg.gapMin, n.cfg.gapMax) }

func (n *nemesis) between(a, b time.Duration) time.Duration {
	return a + time.Duration(n.rng.Int63n(int64(b-a)+1))
}

// healExpired heals the faults whose time is up (all of them if all).
func (n *nemesis) healExpired(all bool) {
	var keep []*fault
	for _, f := range n.active {
		if !all && time.Now().Before(f.until) {
			keep = append(keep, f)
			continue
		}
		if err := f.heal(); err != nil {
			n.note("heal %s %s: %v", f.kind, f.desc, err)
		} else {
			n.note("healed %s %s", f.kind, f.desc)
		}
		if f == n.diskFault {
			n.diskFault = nil
		}
		if f.kind == faultMinority {
			n.inMinority = false
		}
	}
	// A network fault's heal rewrote the rules from the faults still
	// listed, some of them healed in this same pass: apply what remains.
	if len(keep) != len(n.active) {
		n.active = keep
		if err := n.c.applyPartition(n.union(nil)); err != nil {
			n.note("partition: %v", err)
		}
	}
}

// eligible lists the members a new process fault may hit.
func (n *nemesis) eligible() []int {
	var ids []int
	for _, m := range n.c.members {
		if !n.targeted(m.id) && n.healthy(m.id, nil) {
			ids = append(ids, m.id)
		}
	}
	return ids
}

// pick returns one of ids, the leader two times in five if it is among them.
func (n *nemesis) pick(ids []int) (int, string) {
	if n.rng.Intn(5) < 2 {
		if l := n.c.leader(); l != nil {
			for _, id := range ids {
				if id == l.id {
					return id, fmt.Sprintf("member %d (leader)", id)
				}
			}
		}
	}
	id := ids[n.rng.Intn(len(ids))]
	return id, fmt.Sprintf("member %d", id)
}

// injectOne plans a fault of a random kind that leaves a quorum, and
// injects it; after ten plans that would not, it injects nothing.
func (n *nemesis) injectOne() {
	kinds := []struct {
		kind   string
		weight int
	}{{faultKill, 4}, {faultStop, 2}, {faultPause, 2}, {faultIsolate, 2}, {faultSplit, 2},
		{faultBridge, 1}, {faultOneWay, 1}, {faultDiskFull, 1}, {faultEIO, 2}}
	total := 0
	for _, k := range kinds {
		total += k.weight
	}
	for range 10 {
		r := n.rng.Intn(total)
		kind := ""
		for _, k := range kinds {
			if r -= k.weight; r < 0 {
				kind = k.kind
				break
			}
		}
		f := n.plan(kind)
		if f == nil || !n.quorum(f) {
			continue
		}
		n.inject(f)
		return
	}
}

// plan builds a fault of kind on members chosen at random, or nil if none
// can have it now. Its target and partition are set; inject does the rest.
func (n *nemesis) plan(kind string) *fault {
	f := &fault{kind: kind, net: partition{}}
	ids := n.eligible()
	netBusy := false
	for _, a := range n.active {
		netBusy = netBusy || len(a.net) > 0
	}
	all := make([]int, 0, len(n.c.members))
	for _, m := range n.c.members {
		all = append(all, m.id)
	}
	others := func(x int) []int {
		var o []int
		for _, id := range all {
			if id != x {
				o = append(o, id)
			}
		}
		return o
	}
	switch kind {
	case faultKill, faultStop, faultPause:
		if len(ids) == 0 {
			return nil
		}
		id, desc := n.pick(ids)
		f.target, f.desc = []int{id}, desc
	case faultIsolate, faultOneWay:
		if netBusy {
			return nil
		}
		id, desc := n.pick(all)
		f.desc = desc
		if kind == faultIsolate {
			f.net.cut([]int{id}, others(id))
		} else {
			f.net.mute(id, others(id))
			f.desc += " cannot send"
		}
	case faultSplit, faultBridge:
		if netBusy {
			return nil
		}
		p := n.rng.Perm(len(all))
		for i := range p {
			p[i] = all[p[i]]
		}
		if kind == faultSplit {
			f.net.cut(p[:2], p[2:])
			f.desc = fmt.Sprintf("%v | %v", p[:2], p[2:])
		} else {
			f.net.cut(p[:2], p[3:])
			f.desc = fmt.Sprintf("%v | %d | %v (%d reaches both)", p[:2], p[2], p[3:], p[2])
		}
	case faultDiskFull, faultEIO:
		d := n.c.diskID
		ok := false
		for _, id := range ids {
			ok = ok || id == d
		}
		if !ok || n.diskFault != nil {
			return nil
		}
		f.target, f.desc = []int{d}, fmt.Sprintf("member %d", d)
	default:
		return nil
	}
	return f
}

// inject applies a planned fault and schedules its heal.
func (n *nemesis) inject(f *fault) {
	f.started = time.Now()
	f.until = f.started.Add(n.between(n.cfg.durMin, n.cfg.durMax))
	var err error
	switch f.kind {
	case faultKill:
		m := n.c.members[f.target[0]-1]
		err = n.c.signal(m, "KILL")
		n.down[m.id] = true
		f.heal = func() error { n.restart(m.id, "kill -9"); return nil }
	case faultStop:
		m := n.c.members[f.target[0]-1]
		err = n.c.signal(m, "STOP")
		n.stopped[m.id] = true
		f.heal = func() error { n.stopped[m.id] = false; return n.c.signal(m, "CONT") }
	case faultPause:
		m := n.c.members[f.target[0]-1]
		err = n.c.pause(m, true)
		n.stopped[m.id] = true
		f.heal = func() error { n.stopped[m.id] = false; return n.c.pause(m, false) }
	case faultIsolate, faultOneWay, faultSplit, faultBridge:
		n.active = append(n.active, f)
		err = n.c.applyPartition(n.union(nil))
		f.heal = func() error { return n.c.applyPartition(n.union(f)) }
	case faultDiskFull:
		var filled int64
		filled, err = n.c.disk.fill()
		f.desc += fmt.Sprintf(", %d MiB filled, %d bytes left", filled>>20, n.c.disk.free())
		n.diskFault = f
		f.heal = func() error { return n.healDisk(f, n.c.disk.unfill) }
	case faultEIO:
		modes := []faultMode{faultWrite, faultFsync, faultWrite | faultFsync, faultRead, faultRead | faultWrite | faultFsync}
		mode := modes[n.rng.Intn(len(modes))]
		n.c.disk.fs.set(mode)
		f.desc += " on " + mode.String()
		n.count(faultEIO + " (" + mode.String() + ")")
		n.diskFault = f
		f.heal = func() error { return n.healDisk(f, func() error { n.c.disk.fs.set(0); return nil }) }
	}
	if f.kind != faultIsolate && f.kind != faultOneWay && f.kind != faultSplit && f.kind != faultBridge {
		n.active = append(n.active, f)
	}
	n.count(f.kind)
	if strings.Contains(f.desc, "(leader)") {
		n.count(f.kind + " of the leader")
	}
	if err != nil {
		n.note("inject %s %s: %v", f.kind, f.desc, err)
		return
	}
	n.note("inject %s %s for %.1fs", f.kind, f.desc, f.until.Sub(f.started).Seconds())
}

// healDisk clears a disk fault and restarts the member if it stopped.
func (n *nemesis) healDisk(f *fault, clear func() error) error {
	err := clear()
	d := n.c.diskID
	n.poll() // notice an exit before the fault is gone
	outcome := fmt.Sprintf("%s %s: member %d kept running", f.kind, f.desc, d)
	if n.down[d] {
		outcome = fmt.Sprintf("%s %s: member %d stopped", f.kind, f.desc, d)
		n.restart(d, f.kind)
	}
	n.mu.Lock()
	n.diskLog = append(n.diskLog, outcome)
	n.mu.Unlock()
	return err
}

// minority opens a window without a quorum: three members stopped, killed
// or cut off, for minorityFor.
func (n *nemesis) minority() {
	p := n.rng.Perm(len(n.c.members))
	var three []int
	for _, i := range p {
		id := n.c.members[i].id
		if !n.targeted(id) && !n.down[id] && len(three) < 3 {
			three = append(three, id)
		}
	}
	sort.Ints(three)
	f := &fault{kind: faultMinority, target: three, net: partition{}, started: time.Now()}
	f.until = f.started.Add(n.cfg.minorityFor)
	how := []string{"sigstop", "kill -9", "isolate"}[n.rng.Intn(3)]
	f.desc = fmt.Sprintf("%s of members %v", how, three)
	var err error
	switch how {
	case "sigstop":
		for _, id := range three {
			err = errors.Join(err, n.c.signal(n.c.members[id-1], "STOP"))
			n.stopped[id] = true
		}
		f.heal = func() error {
			var err error
			for _, id := range three {
				n.stopped[id] = false
				err = errors.Join(err, n.c.signal(n.c.members[id-1], "CONT"))
			}
			return err
		}
	case "kill -9":
		for _, id := range three {
			err = errors.Join(err, n.c.signal(n.c.members[id-1], "KILL"))
			n.down[id] = true
		}
		f.heal = func() error {
			for _, id := range three {
				n.restart(id, "the minority window")
			}
			return nil
		}
	case "isolate":
		var all []int
		for _, m := range n.c.members {
			all = append(all, m.id)
		}
		for _, id := range three {
			var rest []int
			for _, x := range all {
				if x != id {
					rest = append(rest, x)
				}
			}
			f.net.cut([]int{id}, rest)
		}
		n.active = append(n.active, f)
		err = n.c.applyPartition(n.union(nil))
		f.heal = func() error { return n.c.applyPartition(n.union(f)) }
	}
	if how != "isolate" {
		n.active = append(n.active, f)
	}
	n.inMinority = true
	n.count(faultMinority)
	if err != nil {
		n.note("inject %s %s: %v", f.kind, f.desc, err)
		return
	}
	n.note("inject %s %s for %.1fs", f.kind, f.desc, n.cfg.minorityFor.Seconds())
}

// restart starts a member that is down again.
func (n *nemesis) restart(id int, after string) {
	m := n.c.members[id-1]
	if err := n.c.start(m); err != nil {
		n.note("restart member %d after %s: %v", id, after, err)
		return
	}
	n.down[id] = false
	n.restarted[id] = time.Now()
	n.note("restarted member %d after %s", id, after)
}

// poll asks docker which members run, and deals with those that exited
// without being killed: after a disk fault that is expected (the member
// restarts when the fault heals); within 30 s of a restart it is a refusal
// to restart; otherwise it is a crash, a finding. A member down with no
// fault holding it down is started again, at most every 5 s; one that
// refused three times in a row is left down until the final heal.
func (n *nemesis) poll() {
	states, err := n.c.states()
	if err != nil {
		n.note("docker inspect: %v", err)
		return
	}
	for _, m := range n.c.members {
		s := states[m.id]
		if s.running || n.down[m.id] {
			continue
		}
		n.down[m.id] = true
		time.Sleep(time.Second) // docker copies a process's last lines after it reports the exit
		logTail := tail(n.c.logs(m), 8)
		switch {
		case m.id == n.c.diskID && n.diskFault != nil:
			n.note("member %d exited (code %d) %.1fs into %s %s; its log ends:\n%s", m.id, s.exitCode,
				time.Since(n.diskFault.started).Seconds(), n.diskFault.kind, n.diskFault.desc, indent(logTail))
		case time.Since(n.restarted[m.id]) < 30*time.Second:
			n.refusals[m.id]++
			n.note("member %d exited (code %d) %.1fs after its restart; its log ends:\n%s", m.id, s.exitCode,
				time.Since(n.restarted[m.id]).Seconds(), indent(logTail))
			if n.refusals[m.id] >= 3 {
				n.gaveUp[m.id] = true
				n.mu.Lock()
				n.refused = append(n.refused, fmt.Sprintf("member %d refused to restart 3 times in a row (exit code %d); its log ends:\n%s",
					m.id, s.exitCode, indent(logTail)))
				n.mu.Unlock()
			}
		default:
			n.mu.Lock()
			n.findings = append(n.findings, fmt.Sprintf("member %d exited by itself (code %d) at %.1fs; its log ends:\n%s",
				m.id, s.exitCode, n.now().Seconds(), indent(logTail)))
			n.mu.Unlock()
			n.note("member %d exited by itself (code %d)", m.id, s.exitCode)
		}
	}
	for _, m := range n.c.members {
		if !n.down[m.id] || n.gaveUp[m.id] || n.targeted(m.id) || time.Since(n.restarted[m.id]) < 5*time.Second {
			continue
		}
		n.restart(m.id, "its exit")
	}
	for id, t := range n.restarted {
		if time.Since(t) > 30*time.Second && !n.down[id] {
			n.refusals[id] = 0
		}
	}
}

// targeted reports whether an active fault holds member id down or frozen.
func (n *nemesis) targeted(id int) bool {
	for _, f := range n.active {
		for _, t := range f.target {
			if t == id {
				return true
			}
		}
	}
	return false
}

func indent(s string) string { return "\t" + strings.ReplaceAll(s, "\n", "\n\t") }

// saveTimeline writes the fault timeline into dir.
func (n *nemesis) saveTimeline(dir string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	var b strings.Builder
	for _, e := range n.timeline {
		fmt.Fprintf(&b, "%8.1fs %s\n", e.at.Seconds(), e.text)
	}
	return os.WriteFile(filepath.Join(dir, "faults.log"), []byte(b.String()), 0o644)
}
