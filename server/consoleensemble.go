package server

import (
	"cmp"
	"context"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/zkraft/zkraft/backend"
	"github.com/zkraft/zkraft/console"
	"github.com/zkraft/zkraft/ensemble"
	"github.com/zkraft/zkraft/internal/cli/fourletter"
	"github.com/zkraft/zkraft/znode"
)

// ensembleView is the console's EnsembleSource: the leader and term from
// this member's Raft, each member's state from the four-letter words on
// its client port (srvr, and mntr for the sessions where it is
// whitelisted), as zkraft status reads them.
type ensembleView struct {
	node           *ensemble.Node
	self           string // this member's client address, as the console reaches it
	standaloneAddr string
}

// Leadership implements console.EnsembleSource.
func (v *ensembleView) Leadership() (int64, uint64) {
	id, _, ok := v.node.Leader()
	if !ok {
		return -1, v.node.Term()
	}
	return id, v.node.Term()
}

// Members implements console.EnsembleSource.
func (v *ensembleView) Members(ctx context.Context) []console.MemberStatus {
	peers := v.node.Members()
	if len(peers) == 0 {
		peers = []backend.Peer{{ID: v.node.ID(), ClientAddr: v.standaloneAddr}}
	}
	timeout := 2 * time.Second
	if dl, ok := ctx.Deadline(); ok {
		timeout = time.Until(dl)
	}
	out := make([]console.MemberStatus, len(peers))
	var wg sync.WaitGroup
	for i, p := range peers {
		addr := memberClientAddr(p)
		self := p.ID == v.node.ID()
		if self {
			addr = v.self
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = probeForConsole(addr, timeout)
			out[i].ID, out[i].Self = p.ID, self
		}()
	}
	wg.Wait()
	var leaderZxid int64 = -1
	for _, m := range out {
		if m.Role == "leader" {
			leaderZxid = parseZxid(m.Zxid)
		}
	}
	if leaderZxid >= 0 {
		for i := range out {
			if out[i].Zxid != "" {
				lag := leaderZxid - parseZxid(out[i].Zxid)
				out[i].Lag = &lag
			}
		}
	}
	return out
}

// memberClientAddr is where a member's clients reach it: its server
// line's client address, with an unspecified host replaced by the host of
// its member port.
func memberClientAddr(p backend.Peer) string {
	host, port, err := net.SplitHostPort(p.ClientAddr)
	if err != nil {
		return p.ClientAddr
	}
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		if mh, _, err := net.SplitHostPort(p.Addr); err == nil {
			host = mh
		}
	}
	return net.JoinHostPort(host, port)
}

// noClientAddr explains a member whose state is unknown: nothing tells
// this member where that one's clients reach it.
const noClientAddr = "no client address known for this member, so its state cannot be asked: " +
	"give it in --peers (id=host:port;clientHost:clientPort) or in its zoo.cfg server line (;clientPort)"

// probeForConsole reads one member's row from srvr and mntr. A member
// without a known client address is "unknown", not down: nothing was
// asked.
func probeForConsole(addr string, timeout time.Duration) console.MemberStatus {
	m := console.MemberStatus{Address: addr}
	if addr == "" {
		m.Role, m.Error = console.RoleUnknown, noClientAddr
		return m
	}
	srvr, err := fourletter.AskWithin(addr, "srvr", timeout)
	if err != nil {
		m.Error = err.Error()
		return m
	}
	m.Role = fourletter.Field(srvr, "Mode: ")
	if m.Role == "" {
		m.Error = strings.TrimSpace(firstLine(srvr))
		return m
	}
	m.Zxid = fourletter.Field(srvr, "Zxid: ")
	m.Connections = atoi(fourletter.Field(srvr, "Connections: "))
	m.Znodes = atoi(fourletter.Field(srvr, "Node count: "))
	if lmin, rest, ok := strings.Cut(fourletter.Field(srvr, "Latency min/avg/max: "), "/"); ok {
		avg, lmax, _ := strings.Cut(rest, "/")
		m.LatencyMin, m.LatencyMax = atoi(lmin), atoi(lmax)
		m.LatencyAvg, _ = strconv.ParseFloat(avg, 64)
	}
	if mntr, err := fourletter.AskWithin(addr, "mntr", timeout); err == nil {
		m.Sessions = atoi(fourletter.Field(mntr, "zk_global_sessions\t"))
	}
	return m
}

func parseZxid(s string) int64 {
	v, _ := strconv.ParseInt(strings.TrimPrefix(s, "0x"), 16, 64)
	return v
}

// Sessions implements console.EnsembleSource: the replicated session
// table (every member has all of it), lowest ids first, with each
// session's ephemerals, without the passwords. The table is copied a
// chunk per hold of the tree's read lock (znode.EachSession) and the
// lowest ids are chosen, and the ephemerals listed, after the lock is let
// go: sorting all of it under one hold (200,000 sessions: 95 ms) held up
// the member's writes on every poll of the page. It lists no more than
// it is asked for: a session whose ephemerals would overrun maxEphemerals
// is given with its count only.
func (v *ensembleView) Sessions(maxSessions, maxEphemerals int) ([]console.SessionStatus, int) {
	n := max(maxSessions, 0)
	byID := func(a, b znode.SessionEntry) int { return cmp.Compare(a.Info.ID, b.Info.ID) }
	var lowest []znode.SessionEntry // the n lowest ids seen, sorted
	total := znode.EachSession(v.node.RLockTree, v.node.RUnlockTree, func(chunk []znode.SessionEntry) {
		if n == 0 {
			return
		}
		full := len(lowest) == n
		for _, s := range chunk {
			if !full || s.Info.ID < lowest[n-1].Info.ID {
				lowest = append(lowest, s)
			}
		}
		slices.SortFunc(lowest, byID)
		lowest = lowest[:min(len(lowest), n)]
	})
	out := make([]console.SessionStatus, 0, len(lowest))
	budget := maxEphemerals
	for _, s := range lowest {
		st := console.SessionStatus{ID: s.Info.ID, TimeoutMs: s.Info.Timeout, Ephemerals: []string{}, NumEphemerals: s.Ephemerals.Len()}
		if st.NumEphemerals > 0 && st.NumEphemerals <= budget {
			st.Ephemerals = s.Ephemerals.AppendTo(make([]string, 0, st.NumEphemerals))
			budget -= len(st.Ephemerals)
		}
		out = append(out, st)
	}
	return out, total
}

func atoi(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
