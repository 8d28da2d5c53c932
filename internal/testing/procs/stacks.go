package procs

import (
	"fmt"
	"sort"
	"strings"
	"syscall"
	"time"
)

// dumpStacks makes m's process print its goroutines (SIGQUIT; the Go
// runtime then exits) and returns them summed up by stackSummary, or ""
// if it printed none within a few seconds.
func (m *Member) dumpStacks() string {
	before := len(m.Log())
	m.Signal(syscall.SIGQUIT)
	select {
	case <-m.exited:
	case <-time.After(5 * time.Second):
	}
	log := m.Log()
	if len(log) < before {
		return ""
	}
	return stackSummary(log[before:])
}

// stackSummary condenses a Go goroutine dump to one line per distinct
// goroutine key (goroutineKey) with a count, sorted by key: the few lines
// a failed test's output has room for, where the whole dump would be cut.
func stackSummary(dump string) string {
	counts := map[string]int{}
	for _, g := range strings.Split(dump, "\n\n") {
		if key, ok := goroutineKey(g); ok {
			counts[key]++
		}
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%4d %s\n", counts[k], k)
	}
	return b.String()
}

// goroutineKey names one goroutine of a dump by its state and its
// innermost and outermost frames in zkraft's or hashicorp/raft's code
// ("[select] zkraft/zkraft/ensemble.(*Node).reap <- ..."); ok is false
// for a paragraph that is not a goroutine.
func goroutineKey(g string) (key string, ok bool) {
	head, body, ok := strings.Cut(strings.TrimSpace(g), "\n")
	if !ok || !strings.HasPrefix(head, "goroutine ") {
		return "", false
	}
	state := head
	if i, j := strings.Index(head, "["), strings.LastIndex(head, "]"); i >= 0 && j > i {
		state = head[i+1 : j]
		if k := strings.Index(state, ","); k >= 0 {
			state = state[:k] // drop "N minutes"
		}
	}
	var frames []string
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, "\t") || strings.HasPrefix(line, "created by ") {
			continue
		}
		if fn, _, _ := strings.Cut(line, "("); strings.Contains(fn, "zkraft/") || strings.Contains(line, "hashicorp/raft") {
			frames = append(frames, strings.TrimPrefix(trimArgs(line), "github.com/"))
		}
	}
	key = "[" + state + "]"
	switch len(frames) {
	case 0:
		return key + " (runtime or library only)", true
	case 1:
		return key + " " + frames[0], true
	default:
		return key + " " + frames[0] + " <- " + frames[len(frames)-1], true
	}
}

// trimArgs drops a stack frame's argument list: "pkg.(*T).f(0x1, 0x2)"
// is "pkg.(*T).f".
func trimArgs(frame string) string {
	if i := strings.LastIndex(frame, "("); i > 0 && strings.HasSuffix(frame, ")") {
		return frame[:i]
	}
	return frame
}
