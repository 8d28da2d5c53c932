package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/zkraft/zkraft/internal/cli/cliflags"
	"github.com/zkraft/zkraft/internal/cli/fourletter"
)

// statusCommand is `zkraft status`, etcdctl's endpoint status for an
// ensemble: each member's role, zxid, lag and health from the four-letter
// words it answers on its client port (ruok, srvr, mntr): zkraft's srvr
// adds the leader the member knows and its term, which --admin-addr reads
// from the AdminServers instead (for ZooKeeper's members).
func statusCommand() *cli.Command {
	return &cli.Command{
		Name:  "status",
		Usage: "show each member's role, term, zxid, lag and health",
		Description: "Asks every member in --server for ruok, srvr and mntr. A member that does not\n" +
			"answer within --timeout, or is not serving, is unhealthy and the exit status is 1;\n" +
			"--wait asks again until all are healthy (members just started), for up to that long.\n" +
			"A zkraft member's srvr gives the leader it knows and its Raft term; --admin-addr lists\n" +
			"the members' AdminServers in --server's order to read them there instead (ZooKeeper's\n" +
			"four-letter words have neither).",
		Flags: append(append([]cli.Flag{
			serverFlag(),
			&cli.DurationFlag{Name: "wait", Usage: "ask again until every member is healthy, for up to this long (e.g. 10s), then show them"},
			&cli.StringFlag{Name: "admin-addr", Usage: "the members' AdminServers, host:port[,host:port...] in --server's order (for leader and term, which zkraft's srvr gives without it)"},
		}, cliflags.Timeout(3*time.Second, "limit on each member's answer", "connect-timeout")...),
			cliflags.Output("a table, or json: an array, one object per member")...),
		Action: statusAction,
	}
}

// allHealthy reports whether every member answered healthy.
func allHealthy(statuses []*memberStatus) bool {
	for _, s := range statuses {
		if !s.Healthy {
			return false
		}
	}
	return true
}

// errUnhealthy is statusAction's error when a member is unhealthy.
var errUnhealthy = errors.New("unhealthy members")

func statusAction(c *cli.Context) error {
	addrs := splitAddrs(c.String("server"))
	if len(addrs) == 0 {
		return fmt.Errorf("--server: no addresses")
	}
	admins := splitAddrs(c.String("admin-addr"))
	if len(admins) > 0 && len(admins) != len(addrs) {
		return fmt.Errorf("--admin-addr: %d addresses for %d in --server", len(admins), len(addrs))
	}
	asJSON, err := cliflags.JSON(c)
	if err != nil {
		return err
	}
	timeout := cliflags.TimeoutValue(c, "connect-timeout")
	statuses := probeMembers(addrs, admins, timeout)
	// --wait: members just started may not listen or have a leader yet.
	for deadline := time.Now().Add(c.Duration("wait")); !allHealthy(statuses) && time.Now().Before(deadline); {
		time.Sleep(200 * time.Millisecond)
		statuses = probeMembers(addrs, admins, timeout)
	}
	if asJSON {
		err = writeStatusJSON(c.App.Writer, statuses)
	} else {
		err = writeStatusTable(c.App.Writer, statuses)
	}
	if err != nil {
		return err
	}
	var bad []string
	for _, s := range statuses {
		if !s.Healthy {
			bad = append(bad, s.Address)
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%w: %s", errUnhealthy, strings.Join(bad, ", "))
	}
	return nil
}

// memberStatus is one member's line of zkraft status. What a member did
// not tell is zero, LeaderID -1 and Lag nil (no leader answered); the
// JSON omits the empty strings, the zero term and a nil lag.
type memberStatus struct {
	Address     string  `json:"address"`
	Healthy     bool    `json:"healthy"`
	Error       string  `json:"error,omitempty"`
	AdminError  string  `json:"admin_error,omitempty"`
	Mode        string  `json:"mode,omitempty"`
	LeaderID    int64   `json:"leader_id"`
	Term        uint64  `json:"raft_term,omitempty"`
	Zxid        string  `json:"zxid,omitempty"`
	Lag         *int64  `json:"lag,omitempty"`
	Connections int64   `json:"connections"`
	Sessions    *int64  `json:"sessions"` // nil: mntr is not whitelisted
	Znodes      int64   `json:"znode_count"`
	LatencyMin  int64   `json:"latency_min_ms"`
	LatencyAvg  float64 `json:"latency_avg_ms"`
	LatencyMax  int64   `json:"latency_max_ms"`

	zxid int64 // Zxid as a number, for the lag
}

// probeMembers asks every member at once and fills in the lag behind the
// leader: the leader's zxid minus the member's, for members that gave
// their zxid when one that answered is the leader.
func probeMembers(addrs, admins []string, timeout time.Duration) []*memberStatus {
	out := make([]*memberStatus, len(addrs))
	var wg sync.WaitGroup
	for i, a := range addrs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = probeMember(a, timeout)
			if len(admins) > 0 && out[i].Mode != "" {
				facts, err := askAdmin(admins[i], timeout)
				if facts.leaderID >= 0 {
					out[i].LeaderID = facts.leaderID
				}
				if facts.term != 0 {
					out[i].Term = facts.term
				}
				if err != nil {
					out[i].AdminError = err.Error()
				}
			}
		}()
	}
	wg.Wait()
	var leader *memberStatus
	for _, s := range out {
		if s.Mode == "leader" {
			leader = s
		}
	}
	if leader != nil {
		for _, s := range out {
			if s.Zxid != "" {
				lag := leader.zxid - s.zxid
				s.Lag = &lag
			}
		}
	}
	return out
}

// probeMember asks one member for ruok, srvr and mntr. It is healthy if
// it answers imok and srvr gives its mode (a member without a quorum
// answers srvr with "not currently serving requests").
func probeMember(addr string, timeout time.Duration) *memberStatus {
	s := &memberStatus{Address: addr, LeaderID: -1}
	ruok, err := fourletter.AskWithin(addr, "ruok", timeout)
	if err != nil {
		s.Error = err.Error()
		return s
	}
	// ZooKeeper's default whitelist is srvr alone: a member that refuses
	// ruok for that reason is judged by srvr, as ZooKeeper's own probes do.
	if ruok != "imok" && !notWhitelisted(ruok) {
		s.Error = fmt.Sprintf("ruok: %q", strings.TrimSpace(ruok))
		return s
	}
	srvr, err := fourletter.AskWithin(addr, "srvr", timeout)
	if err != nil {
		s.Error = err.Error()
		return s
	}
	s.Mode = fourletter.Field(srvr, "Mode: ")
	if s.Mode == "" {
		s.Error = "srvr: " + strings.TrimSpace(firstLine(srvr))
		return s
	}
	// A read-only member answers, but has no quorum behind it.
	s.Healthy = s.Mode != "read-only"
	if !s.Healthy {
		s.Error = "no quorum (read-only)"
	}
	// zkraft's srvr ends with the leader the member knows and its term
	// (ZooKeeper's has neither: its members leave them unknown).
	if id := fourletter.Field(srvr, "Leader id: "); id != "" {
		s.LeaderID = atoi(id)
	}
	s.Term = uint64(atoi(fourletter.Field(srvr, "Raft term: ")))
	s.Zxid = fourletter.Field(srvr, "Zxid: ")
	s.zxid, _ = strconv.ParseInt(strings.TrimPrefix(s.Zxid, "0x"), 16, 64)
	s.Connections = atoi(fourletter.Field(srvr, "Connections: "))
	s.Znodes = atoi(fourletter.Field(srvr, "Node count: "))
	if lmin, rest, ok := strings.Cut(fourletter.Field(srvr, "Latency min/avg/max: "), "/"); ok {
		avg, lmax, _ := strings.Cut(rest, "/")
		s.LatencyMin, s.LatencyMax = atoi(lmin), atoi(lmax)
		s.LatencyAvg, _ = strconv.ParseFloat(avg, 64)
	}
	// mntr adds the sessions; without it (not whitelisted) they are unknown.
	if mntr, err := fourletter.AskWithin(addr, "mntr", timeout); err == nil && !notWhitelisted(mntr) {
		n := atoi(fourletter.Field(mntr, "zk_global_sessions\t"))
		s.Sessions = &n
	}
	return s
}

// notWhitelisted reports whether a four-letter word's answer is the
// refusal of a word missing from 4lw.commands.whitelist.
func notWhitelisted(answer string) bool {
	return strings.Contains(answer, "is not executed because it is not in the whitelist")
}

func atoi(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

// splitAddrs splits a comma-separated address list, dropping blanks.
func splitAddrs(list string) []string {
	var out []string
	for _, a := range strings.Split(list, ",") {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
