package session

import (
	"fmt"
	"maps"
	"math"
	"net"
	"os"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/zkraft/zkraft/ensemble"
	"github.com/zkraft/zkraft/internal/buildinfo"
	"github.com/zkraft/zkraft/znode"
)

// Version is reported by srvr, stat, mntr and envi in ZooKeeper's format,
// so tools parsing "Zookeeper version: X.Y.Z" keep working; after the
// release come zkraft's module version and revision (internal/buildinfo):
// "3.9.3-zkraft-v1.2.0-0123456789ab, built on 2026-11-21 00:00 UTC".
var Version = buildinfo.Read().ZooKeeperVersion()

// fourLetterWords are the commands ZooKeeper answers on its client port.
var fourLetterWords = map[string]bool{
	"ruok": true, "srvr": true, "stat": true, "mntr": true, "conf": true, "cons": true,
	"crst": true, "srst": true, "envi": true, "dirs": true, "dump": true, "wchs": true,
	"wchc": true, "wchp": true, "isro": true, "gtmk": true, "stmk": true, "hash": true,
}

func isFourLetterWord(s string) bool { return fourLetterWords[s] }

// FourLetterWords lists, sorted, the four-letter words this server
// answers, for checking a 4lw.commands.whitelist.
func FourLetterWords() []string {
	out := make([]string, 0, len(fourLetterWords))
	for w := range fourLetterWords {
		out = append(out, w)
	}
	sort.Strings(out)
	return out
}

// notServing is ZooKeeper's answer to most four-letter words while its
// server is not running: a member of an ensemble without a quorum (and not
// serving read-only clients), e.g. between leaders or cut off from the
// majority. Health checks that look for "Mode:" in srvr rely on it.
const notServing = "This ZooKeeper instance is not currently serving requests\n"

// needsServing are the words ZooKeeper 3.8 answers with notServing then
// (its ruok, envi and isro still answer; isro says "null").
var needsServing = map[string]bool{
	"srvr": true, "stat": true, "mntr": true, "conf": true, "cons": true, "crst": true,
	"srst": true, "dump": true, "dirs": true, "wchs": true, "wchc": true, "wchp": true, "hash": true,
}

// serving reports whether this member serves clients: it is part of a
// working majority, or serves read-only clients without one
// (readonlymode.enabled).
func (s *Server) serving() bool { return s.node.HasQuorum() || s.cfg.ReadOnlyMode }

func (s *Server) fourLetterAllowed(cmd string) bool {
	for _, w := range s.cfg.FourLetterWhitelist {
		if w == "*" || w == cmd {
			return true
		}
	}
	return false
}

// fourLetter answers a four-letter word and closes the connection.
func (c *conn) fourLetter(cmd string) {
	defer c.out.closeAfterFlush()
	c.srv.stats.packetsReceived.Add(1)
	c.stats.received.Add(1)
	if !c.srv.fourLetterAllowed(cmd) {
		c.out.raw([]byte(cmd + " is not executed because it is not in the whitelist.\n"))
		return
	}
	var b strings.Builder
	s := c.srv
	if needsServing[cmd] && !s.serving() {
		c.out.raw([]byte(notServing))
		return
	}
	switch cmd {
	case "ruok":
		b.WriteString("imok")
	case "isro":
		switch {
		case !s.serving():
			b.WriteString("null")
		case s.node.HasQuorum():
			b.WriteString("rw")
		default:
			b.WriteString("ro")
		}
	case "srvr", "stat":
		s.writeStat(&b, cmd == "stat")
	case "mntr":
		s.writeMntr(&b)
	case "conf":
		s.writeConf(&b)
	case "envi":
		s.writeEnvi(&b)
	case "cons":
		s.writeConns(&b, false)
		b.WriteString("\n")
	case "srst":
		s.resetStats()
		b.WriteString("Server stats reset.\n")
	case "crst":
		s.resetConnStats()
		b.WriteString("Connection stats reset.\n")
	case "wchs":
		watchers, paths, total := s.node.Watches().Stats()
		fmt.Fprintf(&b, "%d connections watching %d paths\nTotal watches:%d\n", watchers, paths, total)
	case "wchc":
		s.writeWatchesBySession(&b)
		b.WriteString("\n") // ZooKeeper's WatchCommand ends with a println
	case "wchp":
		s.writeWatchesByPath(&b)
		b.WriteString("\n")
	case "dump":
		s.writeDump(&b)
	case "dirs":
		fmt.Fprintf(&b, "datadir_size: %d\nlogdir_size: %d\n", dirSize(s.cfg.Env["dataDir"]), dirSize(s.logDir()))
	default: // gtmk, stmk, hash: JVM-specific tracing and digests
		fmt.Fprintf(&b, "%s is not supported by this server.\n", cmd)
	}
	c.out.raw([]byte(b.String()))
}

// javaDouble formats f as Java's Double.toString does: plain decimals
// from 10^-3 up to 10^7 ("0.0", "5.75", "0.3333333333333333"), and
// Java's scientific notation outside that range ("5.0E-4", "1.25E7").
func javaDouble(f float64) string {
	if a := math.Abs(f); a != 0 && (a < 1e-3 || a >= 1e7) && !math.IsInf(f, 0) && !math.IsNaN(f) {
		mant, exp, _ := strings.Cut(strconv.FormatFloat(f, 'E', -1, 64), "E")
		if !strings.Contains(mant, ".") {
			mant += ".0"
		}
		e, _ := strconv.Atoi(exp)
		return mant + "E" + strconv.Itoa(e)
	}
	out := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(out, ".") {
		out += ".0"
	}
	return out
}

// javaAvg is an AvgMinMaxCounter's average as ZooKeeper prints it: total /
// count rounded half up to four decimals, 0.0 before the first sample.
func javaAvg(total, count int64) string {
	if count == 0 {
		return "0.0"
	}
	return javaDouble(math.Round(float64(total)/float64(count)*1e4) / 1e4)
}

func (s *Server) treeStats() (znodes, ephemerals int, dataSize int64, sessions int) {
	t := s.node.RLockTree()
	st := t.Stats()
	s.node.RUnlockTree()
	return st.ZnodeCount, st.Ephemerals, st.DataSize, st.Sessions
}

// writeStat is srvr (and stat, which adds the client list).
func (s *Server) writeStat(b *strings.Builder, withClients bool) {
	fmt.Fprintf(b, "Zookeeper version: %s\n", Version)
	if withClients {
		b.WriteString("Clients:\n")
		s.writeConns(b, true)
		b.WriteString("\n")
	}
	lmin, lavg, lmax := s.stats.latencies()
	fmt.Fprintf(b, "Latency min/avg/max: %d/%s/%d\n", lmin, javaDouble(lavg), lmax)
	fmt.Fprintf(b, "Received: %d\n", s.stats.packetsReceived.Load())
	fmt.Fprintf(b, "Sent: %d\n", s.stats.packetsSent.Load())
	fmt.Fprintf(b, "Connections: %d\n", s.numConns())
	fmt.Fprintf(b, "Outstanding: %d\n", s.stats.outstanding.Load())
	fmt.Fprintf(b, "Zxid: 0x%x\n", s.node.LastZxid())
	fmt.Fprintf(b, "Mode: %s\n", s.mode())
	znodes, _, _, _ := s.treeStats()
	fmt.Fprintf(b, "Node count: %d\n", znodes)
	if s.node.Mode() == "leader" {
		last, lo, hi := s.node.ProposalSizes()
		fmt.Fprintf(b, "Proposal sizes last/min/max: %d/%d/%d\n", last, lo, hi)
	}
}

// monitorValue is one monitoring figure, shared by mntr and /metrics.
type monitorValue struct {
	key   string // without the zk_ prefix
	value any
	gauge bool // a level rather than an ever-growing counter
}

// monitorValues are the figures mntr prints and /metrics exports.
func (s *Server) monitorValues() []monitorValue {
	znodes, ephemerals, dataSize, sessions := s.treeStats()
	_, _, watches := s.node.Watches().Stats()
	lmin, lavg, lmax := s.stats.latencies()
	fsync := s.node.FsyncTimes()
	out := []monitorValue{
		{"version", Version, true},
		{"server_state", s.mode(), true},
		{"ephemerals_count", ephemerals, true},
		{"num_alive_connections", s.numConns(), true},
		{"avg_latency", javaDouble(lavg), true},
		{"outstanding_requests", s.stats.outstanding.Load(), true},
		{"znode_count", znodes, true},
		{"global_sessions", sessions, true},
		{"local_sessions", 0, true},
		{"packets_sent", s.stats.packetsSent.Load(), false},
		{"packets_received", s.stats.packetsReceived.Load(), false},
		{"watch_count", watches, true},
		{"auth_failed_count", s.stats.authFailed.Load(), false},
		{"min_latency", lmin, true},
		{"max_latency", lmax, true},
		{"max_file_descriptor_count", maxFDs(), true},
		{"open_file_descriptor_count", openFDs(), true},
		{"approximate_data_size", dataSize, true},
		// ZooKeeper's fsynctime summary: the log's syncs, in milliseconds.
		{"avg_fsynctime", javaAvg(fsync.SumMs, fsync.Count), true},
		{"min_fsynctime", fsync.MinMs, true},
		{"max_fsynctime", fsync.MaxMs, true},
		{"cnt_fsynctime", fsync.Count, false},
		{"sum_fsynctime", fsync.SumMs, false},
		{"uptime", time.Since(s.stats.started).Milliseconds(), false},
	}
	mode := s.node.Mode()
	if state, ok := peerStates[mode]; ok {
		// Every member of an ensemble: its role and the voting members.
		out = append(out,
			monitorValue{"peer_state", state, true},
			monitorValue{"quorum_size", s.node.QuorumSize(), true})
	}
	if mode == "leader" {
		// ZooKeeper 3.8's leader figures (LeaderZooKeeperServer's gauges),
		// plus followers, the learner count under its 3.4 name that older
		// monitoring still reads. Only learners answering the leader count,
		// so a member that is down shows, as with ZooKeeper.
		voters, observers := s.node.SyncedFollowers()
		out = append(out,
			monitorValue{"learners", voters + observers, true},
			monitorValue{"synced_followers", voters, true},
			monitorValue{"synced_non_voting_followers", 0, true},
			monitorValue{"synced_observers", observers, true},
			monitorValue{"pending_syncs", 0, true},
			monitorValue{"leader_uptime", s.node.LeaderUptime().Milliseconds(), false},
			monitorValue{"followers", voters + observers, true})
	}
	return out
}

// peerStates are ZooKeeper's zk_peer_state values by role (state - Zab
// phase).
var peerStates = map[string]string{
	"leader": "leading - broadcast", "follower": "following - broadcast",
	"observer": "observing - broadcast",
}

// writeMntr is mntr: tab-separated zk_* keys, the ones monitoring tools and
// exporters parse.
func (s *Server) writeMntr(b *strings.Builder) {
	for _, v := range s.monitorValues() {
		fmt.Fprintf(b, "zk_%s\t%v\n", v.key, v.value)
	}
}

// writeConf is conf: the effective configuration in ZooKeeper's key order.
func (s *Server) writeConf(b *strings.Builder) {
	dataDir := s.cfg.Env["dataDir"]
	size := dirSize(dataDir)
	fmt.Fprintf(b, "clientPort=%s\n", portOf(s.Addr()))
	securePort := "-1"
	if a := s.SecureAddr(); a != nil {
		securePort = portOf(a)
	}
	fmt.Fprintf(b, "secureClientPort=%s\n", securePort)
	fmt.Fprintf(b, "dataDir=%s\n", dataDir)
	fmt.Fprintf(b, "dataDirSize=%d\n", size)
	fmt.Fprintf(b, "dataLogDir=%s\n", s.logDir())
	fmt.Fprintf(b, "dataLogSize=%d\n", dirSize(s.logDir()))
	fmt.Fprintf(b, "tickTime=%d\n", s.cfg.TickTime.Milliseconds())
	fmt.Fprintf(b, "maxClientCnxns=%d\n", s.cfg.MaxClientCnxns)
	fmt.Fprintf(b, "minSessionTimeout=%d\n", s.cfg.MinSessionTimeout.Milliseconds())
	fmt.Fprintf(b, "maxSessionTimeout=%d\n", s.cfg.MaxSessionTimeout.Milliseconds())
	b.WriteString("clientPortListenBacklog=-1\n")
	serverID := 0
	if s.node.Mode() != "standalone" {
		serverID = int(s.node.ID())
	}
	fmt.Fprintf(b, "serverId=%d\n", serverID)
	if serverID != 0 {
		s.writeQuorumConf(b)
	}
}

// writeQuorumConf is the part of conf a member of an ensemble adds, in
// QuorumZooKeeperServer's order: limits, its own ports and role, and the
// membership as /zookeeper/config holds it (the version line unterminated,
// as ZooKeeper prints it).
func (s *Server) writeQuorumConf(b *strings.Builder) {
	members, version := s.node.Membership()
	var self ensemble.Peer
	for _, p := range members {
		if p.ID == s.node.ID() {
			self = p
		}
	}
	peerType := 0 // ZooKeeper's LearnerType: PARTICIPANT, OBSERVER
	if self.Observer {
		peerType = 1
	}
	fmt.Fprintf(b, "initLimit=%d\nsyncLimit=%d\nelectionAlg=3\n", s.cfg.InitLimit, s.cfg.SyncLimit)
	fmt.Fprintf(b, "electionPort=%d\nquorumPort=%s\npeerType=%d\nmembership: \n", self.ElectionPort, portOfAddr(self.Addr), peerType)
	for _, p := range members {
		fmt.Fprintf(b, "%s\n", p.ConfigLine())
	}
	fmt.Fprintf(b, "version=%x", version)
}

// portOfAddr is the port of a host:port, or "-1".
func portOfAddr(addr string) string {
	if _, port, err := net.SplitHostPort(addr); err == nil {
		return port
	}
	return "-1"
}

// writeEnvi is envi.
func (s *Server) writeEnvi(b *strings.Builder) {
	host, _ := os.Hostname()
	wd, _ := os.Getwd()
	home, _ := os.UserHomeDir()
	user := os.Getenv("USER")
	b.WriteString("Environment:\n")
	for _, kv := range [][2]string{
		{"zookeeper.version", Version}, {"host.name", host}, {"go.version", runtime.Version()},
		{"os.name", runtime.GOOS}, {"os.arch", runtime.GOARCH}, {"user.name", user},
		{"user.home", home}, {"user.dir", wd},
	} {
		fmt.Fprintf(b, "%s=%s\n", kv[0], kv[1])
	}
}

// writeConns lists connections as ZooKeeper's dumpConnectionInfo does:
// brief for stat, with session details for cons.
func (s *Server) writeConns(b *strings.Builder, brief bool) {
	for _, c := range s.connsByAge() {
		sess := c.session()
		ops := "1"
		if sess.id == 0 {
			ops = "0"
		}
		fmt.Fprintf(b, " /%s[%s](queued=%d,recved=%d,sent=%d", c.nc.RemoteAddr(), ops,
			c.queued(), c.stats.received.Load(), c.stats.sent.Load())
		if !brief && sess.id != 0 {
			st := &c.stats
			lmin, _, lmax := st.lat.latencies()
			avg := st.lat.longAvg()
			fmt.Fprintf(b, ",sid=%s,lop=%s,est=%d,to=%d", hexID(sess.id), opName(st.lastOp.Load()),
				st.established.UnixMilli(), sess.timeout)
			if cxid := st.lastCxid.Load(); cxid > 0 {
				fmt.Fprintf(b, ",lcxid=0x%x", cxid)
			}
			fmt.Fprintf(b, ",lzxid=0x%x,lresp=%d,llat=%d,minlat=%d,avglat=%d,maxlat=%d",
				uint64(st.lastZxid.Load()), st.lastResp.Load(), st.lastLat.Load(), lmin, avg, lmax)
		}
		b.WriteString(")\n")
	}
}

func (s *Server) writeWatchesBySession(b *strings.Builder) {
	bySession := s.node.Watches().BySession()
	for _, id := range slices.Sorted(maps.Keys(bySession)) {
		fmt.Fprintf(b, "%s\n", hexID(id))
		for _, p := range bySession[id] {
			fmt.Fprintf(b, "\t%s\n", p)
		}
	}
}

func (s *Server) writeWatchesByPath(b *strings.Builder) {
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
func (s *Server) sessionsAndEphemerals() ([]znode.SessionInfo, map[int64][]string) {
	t := s.node.RLockTree()
	sessions := t.Sessions()
	eph := make(map[int64][]string, len(sessions))
	for _, si := range sessions {
		if list := t.GetEphemerals(si.ID, "/"); len(list) > 0 {
			eph[si.ID] = list
		}
	}
	s.node.RUnlockTree()
	sort.Slice(sessions, func(i, j int) bool { return sessions[i].ID < sessions[j].ID })
	return sessions, eph
}

// writeDump is dump: sessions, their ephemeral nodes and the connections.
// The member that tracks expiry (the leader, or a lone member) lists the
// sessions by expiry time as ZooKeeper's SessionTrackerImpl does; a
// follower lists them as its LearnerSessionTracker does.
func (s *Server) writeDump(b *strings.Builder) {
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
	s.mu.Lock()
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	buckets := map[int64][]string{}
	for _, c := range conns {
		// As ZooKeeper's connection expiry: the session timeout (or, before
		// the handshake, FirstFrameTimeout) after the last reply.
		last := c.stats.established
		if ms := c.stats.lastResp.Load(); ms > last.UnixMilli() {
			last = time.UnixMilli(ms)
		}
		wait := s.cfg.FirstFrameTimeout
		sess := c.session()
		if sess.id != 0 {
			wait = time.Duration(sess.timeout) * time.Millisecond
		}
		at := s.expiryBucket(last.Add(wait))
		buckets[at] = append(buckets[at], fmt.Sprintf("ip: /%s sessionId: %s", c.nc.RemoteAddr(), hexID(sess.id)))
	}
	writeExpirySets(b, "Connections", buckets, len(conns))
}

// expiryBucket rounds a deadline up to the next tick, as ZooKeeper's
// ExpiryQueue groups expiries (unix ms).
func (s *Server) expiryBucket(deadline time.Time) int64 {
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
