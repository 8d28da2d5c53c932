package soak

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// summary is what a run did and found.
type summary struct {
	cfg        soakConfig
	faultPhase time.Duration
	total      time.Duration
	ops        []*op
	nem        *nemesis
	regs       registerReport
	reads      readReport
	seqs       seqReport
	nodes      int
	treeDiffs  []string
	stall      time.Duration
	stallAt    time.Duration
}

func (s *summary) String() string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	p("soak summary: seed %d, faults for %v, %v in all", s.cfg.seed, s.faultPhase.Round(time.Second), s.total.Round(time.Second))

	byKind := map[opKind]map[outcome]int{}
	hung := 0
	for _, o := range s.ops {
		if byKind[o.kind] == nil {
			byKind[o.kind] = map[outcome]int{}
		}
		byKind[o.kind][o.out]++
		if o.hung {
			hung++
		}
	}
	p("operations: %d (%d ended by the %v watchdog)", len(s.ops), hung, 90*time.Second)
	p("  %-11s %8s %8s %8s %8s", "", "ok", "failed", "not sent", "unknown")
	for k := opRead; k <= opSeqCreate; k++ {
		m := byKind[k]
		p("  %-11s %8d %8d %8d %8d", k, m[outOK], m[outFail], m[outNotSent], m[outUnknown])
	}

	s.nem.mu.Lock()
	var kinds []string
	for k := range s.nem.counts {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	var parts []string
	total := 0
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%s %d", k, s.nem.counts[k]))
		if !strings.Contains(k, "(") && !strings.Contains(k, "of the leader") {
			total += s.nem.counts[k]
		}
	}
	p("faults injected: %d: %s", total, strings.Join(parts, ", "))
	for _, d := range s.nem.diskLog {
		p("  disk: %s", d)
	}
	findings := append([]string(nil), s.nem.findings...)
	refused := append([]string(nil), s.nem.refused...)
	s.nem.mu.Unlock()

	p("linearizability (porcupine, writes and sync-reads of %d registers, %d operations): %d violations, %d inconclusive",
		s.regs.keys, s.regs.ops, len(s.regs.violations), len(s.regs.inconclusive))
	for _, k := range s.regs.violations {
		p("  not linearizable: %s", k)
	}
	for _, k := range s.regs.inconclusive {
		p("  inconclusive: %s", k)
	}
	p("reads (ZooKeeper's guarantees: a written value, its version and zxid, no older than the session has seen): %d checked, %d stale (allowed), %d violations",
		s.reads.checked, s.reads.stale, len(s.reads.violations))
	for _, v := range s.reads.violations {
		p("  %s", v)
	}
	p("sequential creates: %d acknowledged, %d unknown, %d in the tree; %d lost, %d other problems",
		s.seqs.acked, s.seqs.unknown, s.seqs.present, len(s.seqs.lost), len(s.seqs.problems))
	for _, v := range s.seqs.problems {
		p("  %s", v)
	}
	p("acknowledged writes lost: %d (sequential creates missing: %d; registers whose final state contradicts an acknowledged write: %d)",
		len(s.seqs.lost)+len(s.regs.lost), len(s.seqs.lost), len(s.regs.lost))
	for _, v := range s.seqs.lost {
		p("  lost: %s", v)
	}
	for _, k := range s.regs.lost {
		p("  final state contradicts: %s", k)
	}
	if len(s.treeDiffs) == 0 {
		p("final trees: the 5 members' are identical (%d znodes, data and Stat)", s.nodes)
	} else {
		p("final trees differ:")
		for _, d := range s.treeDiffs {
			p("  %s", d)
		}
	}
	p("longest time without an acknowledged write while a quorum was up: %v (from %.1fs)", s.stall.Round(100*time.Millisecond), s.stallAt.Seconds())
	if len(refused) == 0 {
		p("members that refused to restart: none")
	}
	for _, r := range refused {
		p("members that refused to restart: %s", r)
	}
	for _, f := range findings {
		p("finding: %s", f)
	}
	return strings.TrimRight(b.String(), "\n")
}

// failures lists why the run fails, if it does.
func (s *summary) failures() []string {
	var f []string
	if n := len(s.regs.violations); n > 0 {
		f = append(f, fmt.Sprintf("%d registers' histories are not linearizable: %v", n, s.regs.violations))
	}
	if n := len(s.regs.inconclusive); float64(n) > inconclusiveShare*float64(s.regs.keys) {
		f = append(f, fmt.Sprintf("porcupine gave up on %d of %d registers", n, s.regs.keys))
	}
	if n := len(s.reads.violations); n > 0 {
		f = append(f, fmt.Sprintf("%d reads broke ZooKeeper's guarantees", n))
	}
	if n := len(s.seqs.lost) + len(s.regs.lost); n > 0 {
		f = append(f, fmt.Sprintf("%d acknowledged writes lost", n))
	}
	if n := len(s.seqs.problems); n > 0 {
		f = append(f, fmt.Sprintf("%d problems with sequential creates", n))
	}
	if len(s.treeDiffs) > 0 {
		f = append(f, "the members' final trees differ")
	}
	if s.stall > stallLimit {
		f = append(f, fmt.Sprintf("no write acknowledged for %v from %.1fs while a quorum was up", s.stall.Round(100*time.Millisecond), s.stallAt.Seconds()))
	}
	s.nem.mu.Lock()
	if len(s.nem.findings) > 0 {
		f = append(f, fmt.Sprintf("%d times a member exited by itself", len(s.nem.findings)))
	}
	if len(s.nem.refused) > 0 {
		f = append(f, fmt.Sprintf("%d members refused to restart", len(s.nem.refused)))
	}
	s.nem.mu.Unlock()
	acked := 0
	for _, o := range s.ops {
		if o.out == outOK && o.kind != opRead && o.kind != opSyncRead {
			acked++
		}
	}
	if min := int(s.faultPhase.Seconds()) * 5; acked < min {
		f = append(f, fmt.Sprintf("only %d writes acknowledged (want %d): the run proved little", acked, min))
	}
	return f
}
