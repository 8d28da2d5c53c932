package main

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/zkraft/zkraft/internal/base/stagetrace"
)

// mark is one line of a member's trace file.
type mark struct {
	at    int64
	stage stagetrace.Stage
	index uint64
}

// readTrace reads a member's trace file (internal/base/stagetrace).
func readTrace(path string) ([]mark, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []mark
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 3 {
			continue
		}
		at, err1 := strconv.ParseInt(fields[0], 10, 64)
		idx, err2 := strconv.ParseUint(fields[2], 10, 64)
		st := stagetrace.ParseStage(fields[1])
		if err1 != nil || err2 != nil || st == 0 {
			continue
		}
		out = append(out, mark{at, st, idx})
	}
	return out, sc.Err()
}

// where says which member a row's stage was seen on.
type where uint8

const (
	onEntry    where = iota // the member the client talks to
	onLeader                // the leader
	onFollower              // the quickest follower (the first to pass the stage)
)

func (w where) String() string {
	return [...]string{"client's member", "leader", "follower"}[w]
}

// rowKey names a row: a stage on a member.
type rowKey struct {
	on    where
	stage stagetrace.Stage
}

// report holds, per row, how long after the write's proposal each write
// passed it.
type report struct {
	writes int
	rows   map[rowKey][]time.Duration
}

// analyze lines up the writes: each log entry the leader stored that the
// leader applied, with the proposal that preceded it on the client's
// member and the first reply written there after the entry was handed to
// that member's FSM. At one write in flight these pair exactly; with more,
// a stage's time is that of the entry it was seen with.
func analyze(traces [][]mark, leader, entry int) report {
	byIndex := func(m []mark) map[rowKey]map[uint64]int64 {
		out := map[rowKey]map[uint64]int64{}
		for _, x := range m {
			if x.index == 0 {
				continue
			}
			k := rowKey{stage: x.stage}
			if out[k] == nil {
				out[k] = map[uint64]int64{}
			}
			if _, seen := out[k][x.index]; !seen {
				out[k][x.index] = x.at
			}
		}
		return out
	}
	times := func(m []mark, st stagetrace.Stage) []int64 {
		var out []int64
		for _, x := range m {
			if x.stage == st {
				out = append(out, x.at)
			}
		}
		return out
	}
	lead := byIndex(traces[leader])
	var followers []map[rowKey]map[uint64]int64
	for i, t := range traces {
		if i != leader {
			followers = append(followers, byIndex(t))
		}
	}
	ent := byIndex(traces[entry])
	proposals := times(traces[entry], stagetrace.Propose)
	written := times(traces[entry], stagetrace.ReplyWritten)
	rep := report{rows: map[rowKey][]time.Duration{}}
	for idx, stored := range lead[rowKey{stage: stagetrace.Store}] {
		if _, ok := lead[rowKey{stage: stagetrace.ApplyDone}][idx]; !ok {
			continue
		}
		enter, ok := ent[rowKey{stage: stagetrace.ApplyEnter}][idx]
		if !ok {
			continue
		}
		p := latestBefore(proposals, stored)
		w := firstAfter(written, enter)
		if p < 0 || w < 0 || stored-p > int64(5*time.Millisecond) {
			continue // not a client's write (a session close, a nudge), or unpaired
		}
		rep.writes++
		add := func(k rowKey, at int64) { rep.rows[k] = append(rep.rows[k], time.Duration(at-p)) }
		add(rowKey{onEntry, stagetrace.Propose}, p)
		add(rowKey{onEntry, stagetrace.ReplyWritten}, w)
		for k, m := range lead {
			if at, ok := m[idx]; ok {
				add(rowKey{onLeader, k.stage}, at)
			}
		}
		for st := stagetrace.Propose; st <= stagetrace.ReplyWritten; st++ {
			first := int64(-1)
			for _, f := range followers {
				if at, ok := f[rowKey{stage: st}][idx]; ok && (first < 0 || at < first) {
					first = at
				}
			}
			if first >= 0 {
				add(rowKey{onFollower, st}, first)
			}
		}
	}
	return rep
}

// latestBefore is the last of sorted ts at or before t, or -1.
func latestBefore(ts []int64, t int64) int64 {
	i, _ := slices.BinarySearch(ts, t+1)
	if i == 0 {
		return -1
	}
	return ts[i-1]
}

// firstAfter is the first of sorted ts at or after t, or -1.
func firstAfter(ts []int64, t int64) int64 {
	i, _ := slices.BinarySearch(ts, t)
	if i == len(ts) {
		return -1
	}
	return ts[i]
}

// table prints the rows in the order of their median, each with its
// median, 90th percentile and the median's step from the row before.
func (r report) table() string {
	type row struct {
		k        rowKey
		p50, p90 time.Duration
	}
	var rows []row
	for k, ds := range r.rows {
		if len(ds) < r.writes/2 {
			continue // a stage most writes did not pass (a follower's, for the slower one)
		}
		slices.Sort(ds)
		rows = append(rows, row{k, ds[len(ds)/2], ds[len(ds)*9/10]})
	}
	slices.SortFunc(rows, func(a, b row) int {
		if a.p50 != b.p50 {
			return int(a.p50 - b.p50)
		}
		return int(a.k.stage) - int(b.k.stage)
	})
	var b strings.Builder
	fmt.Fprintf(&b, "%d writes; µs after the proposal (p50 of each row, its step from the row before, p90)\n\n", r.writes)
	fmt.Fprintf(&b, "| stage | member | p50 µs | step µs | p90 µs |\n|---|---|---|---|---|\n")
	var last time.Duration
	for _, x := range rows {
		fmt.Fprintf(&b, "| %s | %s | %.0f | %+.0f | %.0f |\n", x.k.stage, x.k.on, us(x.p50), us(x.p50-last), us(x.p90))
		last = x.p50
	}
	return b.String()
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
