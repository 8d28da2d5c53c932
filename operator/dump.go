package operator

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/zkraft/zkraft/znode"
)

func (s view) writeWatchesBySession(b *strings.Builder) {
	bySession := s.node.Watches().BySession()
	for _, id := range slices.Sorted(maps.Keys(bySession)) {
		fmt.Fprintf(b, "%s\n", hexID(id))
		for _, p := range bySession[id] {
			fmt.Fprintf(b, "\t%s\n", p)
		}
	}
}

func (s view) writeWatchesByPath(b *strings.Builder) {
	byPath := s.node.Watches().ByPath()
	for _, p := range slices.Sorted(maps.Keys(byPath)) {
		fmt.Fprintf(b, "%s\n", p)
		for _, id := range byPath[p] {
			fmt.Fprintf(b, "\t%s\n", hexID(id))
		}
	}
}

// sessionsAndEphemerals returns the sessions, by id, and the ephemeral
// nodes of those that own any (dump, in both its forms).
func (s view) sessionsAndEphemerals() ([]znode.SessionInfo, map[int64][]string) {
	// Under the lock only a chunk of sessions at a time, each with a
	// reference to its (immutable) ephemeral list; the lists are copied,
	// and the sessions sorted, after it. One hold for the whole table
	// (200,000 sessions: 0.1 s) kept the member's writes waiting.
	var sessions []znode.SessionInfo
	eph := map[int64][]string{}
	znode.EachSession(s.node.RLockTree, s.node.RUnlockTree, func(chunk []znode.SessionEntry) {
		for _, e := range chunk {
			sessions = append(sessions, e.Info)
			if e.Ephemerals.Len() > 0 {
				eph[e.Info.ID] = e.Ephemerals.AppendTo(nil)
			}
		}
	})
	sort.Slice(sessions, func(i, j int) bool { return sessions[i].ID < sessions[j].ID })
	return sessions, eph
}

// writeDump is dump: sessions, their ephemeral nodes and the connections.
// The member that tracks expiry (the leader, or a lone member) lists the
// sessions by expiry time as ZooKeeper's SessionTrackerImpl does; a
// follower lists them as its LearnerSessionTracker does.
func (s view) writeDump(b *strings.Builder) {
	sessions, eph := s.sessionsAndEphemerals()
	b.WriteString("SessionTracker dump:\n")
	if mode := s.node.Mode(); mode == "leader" || mode == "standalone" {
		deadlines := s.node.SessionDeadlines()
		buckets := map[int64][]string{}
		for _, si := range sessions {
			if d, ok := deadlines[si.ID]; ok {
				at := s.expiryBucket(d)
				buckets[at] = append(buckets[at], hexID(si.ID))
			}
		}
		writeExpirySets(b, "Session", buckets, len(sessions))
	} else {
		fmt.Fprintf(b, "Global Sessions(%d):\n", len(sessions))
		for _, si := range sessions {
			fmt.Fprintf(b, "%s\t%dms\n", hexID(si.ID), si.Timeout)
		}
	}
	b.WriteString("ephemeral nodes dump:\n")
	fmt.Fprintf(b, "Sessions with Ephemerals (%d):\n", len(eph))
	for _, si := range sessions {
		if list, ok := eph[si.ID]; ok {
			fmt.Fprintf(b, "%s:\n", hexID(si.ID))
			for _, p := range list {
				fmt.Fprintf(b, "\t%s\n", p)
			}
		}
	}
	b.WriteString("Connections dump:\n")
	conns := s.srv.Connections()
	buckets := map[int64][]string{}
	for _, c := range conns {
		// As ZooKeeper's connection expiry: the session timeout (or, before
		// the handshake, FirstFrameTimeout) after the last reply.
		last := c.Established
		if ms := c.LastResponse; ms > last.UnixMilli() {
			last = time.UnixMilli(ms)
		}
		wait := s.cfg.FirstFrameTimeout
		if c.SessionID != 0 {
			wait = time.Duration(c.Timeout) * time.Millisecond
		}
		at := s.expiryBucket(last.Add(wait))
		buckets[at] = append(buckets[at], fmt.Sprintf("ip: /%s sessionId: %s", c.Remote, hexID(c.SessionID)))
	}
	writeExpirySets(b, "Connections", buckets, len(conns))
}

// expiryBucket rounds a deadline up to the next tick, as ZooKeeper's
// ExpiryQueue groups expiries (unix ms).
func (s view) expiryBucket(deadline time.Time) int64 {
	ms, tick := deadline.UnixMilli(), s.cfg.TickTime.Milliseconds()
	if tick > 0 {
		ms = (ms/tick + 1) * tick
	}
	return ms
}

// writeExpirySets writes an ExpiryQueue dump: the number of buckets and of
// elements, then each bucket (earliest first) with its time as Java's
// Date prints it and its elements.
func writeExpirySets(b *strings.Builder, name string, buckets map[int64][]string, elems int) {
	fmt.Fprintf(b, "%s Sets (%d)/(%d):\n", name, len(buckets), elems)
	for _, at := range slices.Sorted(maps.Keys(buckets)) {
		list := buckets[at]
		fmt.Fprintf(b, "%d expire at %s:\n", len(list), time.UnixMilli(at).Format("Mon Jan 02 15:04:05 MST 2006"))
		for _, e := range list {
			fmt.Fprintf(b, "\t%s\n", e)
		}
	}
}
