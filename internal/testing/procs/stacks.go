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
// (state, innermost zkraft frame, outermost zkraft frame) with a count, the
// goroutines of the project's own code first: the few lines a failed
// test's output has room for, where the whole dump would be cut.
func stackSummary(dump string) string {
	counts := map[string]int{}
	for _, g := range strings.Split(dump, "\n\n") {
		head, body, ok := strings.Cut(strings.TrimSpace(g), "\n")
		if !ok || !strings.HasPrefix(head, "goroutine ") {
			continue
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
		key := fmt.Sprintf("[%s]", state)
		switch len(frames) {
		case 0:
			key += " (runtime or library only)"
		case 1:
			key += " " + frames[0]
		default:
			key += " " + frames[0] + " <- " + frames[len(frames)-1]
		}
		counts[key]++
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

// trimArgs drops a stack frame's argument list: "pkg.(*T).f(0x1, 0x2)"
// is "pkg.(*T).f".
func trimArgs(frame string) string {
	if i := strings.LastIndex(frame, "("); i > 0 && strings.HasSuffix(frame, ")") {
		return frame[:i]
	}
	return frame
}
