package operator

import (
	"fmt"
	"net"
	"os"
	"runtime"
	"strings"

	"github.com/zkraft/zkraft/backend"
)

// writeStat is srvr (and stat, which adds the client list).
func (s view) writeStat(b *strings.Builder, withClients bool) {
	fmt.Fprintf(b, "Zookeeper version: %s\n", Version)
	if withClients {
		b.WriteString("Clients:\n")
		s.writeConns(b, true)
		b.WriteString("\n")
	}
	st := s.srv.Stats()
	fmt.Fprintf(b, "Latency min/avg/max: %d/%s/%d\n", st.MinLatency, javaDouble(st.AvgLatency), st.MaxLatency)
	fmt.Fprintf(b, "Received: %d\n", st.PacketsReceived)
	fmt.Fprintf(b, "Sent: %d\n", st.PacketsSent)
	fmt.Fprintf(b, "Connections: %d\n", s.srv.NumConnections())
	fmt.Fprintf(b, "Outstanding: %d\n", st.Outstanding)
	fmt.Fprintf(b, "Zxid: 0x%x\n", s.node.LastZxid())
	fmt.Fprintf(b, "Mode: %s\n", s.mode())
	znodes, _, _, _ := s.treeStats()
	fmt.Fprintf(b, "Node count: %d\n", znodes)
	if s.node.Mode() == "leader" {
		last, lo, hi := s.node.ProposalSizes()
		fmt.Fprintf(b, "Proposal sizes last/min/max: %d/%d/%d\n", last, lo, hi)
	}
	s.writeLeaderAndTerm(b)
}

// writeLeaderAndTerm ends srvr and stat on a member of an ensemble with
// two lines of zkraft's own, after ZooKeeper's: the leader this member
// knows (-1: none) and its Raft term (ZooKeeper's epoch, which its srvr
// does not show). srvr is the one word ZooKeeper's default whitelist
// allows, so zkraft status shows both without an AdminServer.
func (s view) writeLeaderAndTerm(b *strings.Builder) {
	if s.node.Mode() == "standalone" {
		return
	}
	leaderID := int64(-1)
	if id, _, ok := s.node.Leader(); ok {
		leaderID = int64(id)
	}
	fmt.Fprintf(b, "Leader id: %d\nRaft term: %d\n", leaderID, s.node.Term())
}

// writeConf is conf: the effective configuration in ZooKeeper's key order.
func (s view) writeConf(b *strings.Builder) {
	dataDir := s.cfg.Env["dataDir"]
	size := dirSize(dataDir)
	fmt.Fprintf(b, "clientPort=%s\n", portOf(s.srv.Addr()))
	securePort := "-1"
	if a := s.srv.SecureAddr(); a != nil {
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
	serverID, member := int64(0), !s.absent() && s.node.Mode() != "standalone"
	if member {
		serverID = s.node.ID() // 0 is an id too, as ZooKeeper's
	}
	fmt.Fprintf(b, "serverId=%d\n", serverID)
	if member {
		s.writeQuorumConf(b)
	}
}

// writeQuorumConf is the part of conf a member of an ensemble adds, in
// QuorumZooKeeperServer's order: limits, its own ports and role, and the
// membership as /zookeeper/config holds it (the version line unterminated,
// as ZooKeeper prints it).
func (s view) writeQuorumConf(b *strings.Builder) {
	members, version := s.node.Membership()
	var self backend.Peer
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
func (s view) writeEnvi(b *strings.Builder) {
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
func (s view) writeConns(b *strings.Builder, brief bool) {
	for _, c := range s.srv.Connections() {
		ops := "1"
		if c.SessionID == 0 {
			ops = "0"
		}
		fmt.Fprintf(b, " /%s[%s](queued=%d,recved=%d,sent=%d", c.Remote, ops, c.Queued, c.Received, c.Sent)
		if !brief && c.SessionID != 0 {
			fmt.Fprintf(b, ",sid=%s,lop=%s,est=%d,to=%d", hexID(c.SessionID), opName(c.LastOp),
				c.Established.UnixMilli(), c.Timeout)
			if c.LastCxid > 0 {
				fmt.Fprintf(b, ",lcxid=0x%x", c.LastCxid)
			}
			fmt.Fprintf(b, ",lzxid=0x%x,lresp=%d,llat=%d,minlat=%d,avglat=%d,maxlat=%d",
				uint64(c.LastZxid), c.LastResponse, c.LastLatency, c.MinLatency, c.AvgLatency, c.MaxLatency)
		}
		b.WriteString(")\n")
	}
}
