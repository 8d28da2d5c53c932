package session

import (
	"fmt"
	"runtime"
	"sort"
	"strings"
	"time"
)

// Version is reported by srvr, stat and mntr, in ZooKeeper's format so that
// tools parsing "Zookeeper version:" keep working.
var Version = "3.9.0-zkraft"

var fourLetterWords = map[string]bool{
	"ruok": true, "srvr": true, "stat": true, "mntr": true, "conf": true, "cons": true,
	"crst": true, "srst": true, "envi": true, "dirs": true, "dump": true, "wchs": true,
	"wchc": true, "wchp": true, "isro": true, "gtmk": true, "stmk": true, "hash": true,
}

func isFourLetterWord(s string) bool { return fourLetterWords[s] }

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
	if !c.srv.fourLetterAllowed(cmd) {
		c.out.raw([]byte(cmd + " is not executed because it is not in the whitelist.\n"))
		return
	}
	var b strings.Builder
	s := c.srv
	switch cmd {
	case "ruok":
		b.WriteString("imok")
	case "isro":
		if s.node.HasQuorum() {
			b.WriteString("rw")
		} else {
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
	case "srst":
		s.stats.reset()
		b.WriteString("Server stats reset.\n")
	case "crst":
		b.WriteString("Connection stats reset.\n")
	case "wchs":
		watchers, paths, total := s.node.Watches().Stats()
		fmt.Fprintf(&b, "%d connections watching %d paths\nTotal watches:%d\n", watchers, paths, total)
	default:
		fmt.Fprintf(&b, "%s is not supported by this server.\n", cmd)
	}
	c.out.raw([]byte(b.String()))
}

func (s *Server) numConns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

func (s *Server) writeStat(b *strings.Builder, withClients bool) {
	fmt.Fprintf(b, "Zookeeper version: %s\n", Version)
	if withClients {
		b.WriteString("Clients:\n")
		s.mu.Lock()
		for c := range s.conns {
			fmt.Fprintf(b, " %s[1](queued=0,recved=%d,sent=%d)\n", c.nc.RemoteAddr(), c.stats.received.Load(), c.stats.sent.Load())
		}
		s.mu.Unlock()
		b.WriteString("\n")
	}
	lmin, lavg, lmax := s.stats.latencies()
	fmt.Fprintf(b, "Latency min/avg/max: %d/%.4f/%d\n", lmin, lavg, lmax)
	fmt.Fprintf(b, "Received: %d\n", s.stats.packetsReceived.Load())
	fmt.Fprintf(b, "Sent: %d\n", s.stats.packetsSent.Load())
	fmt.Fprintf(b, "Connections: %d\n", s.numConns())
	fmt.Fprintf(b, "Outstanding: %d\n", s.stats.outstanding.Load())
	fmt.Fprintf(b, "Zxid: 0x%x\n", s.node.LastZxid())
	fmt.Fprintf(b, "Mode: %s\n", s.mode())
	t := s.node.RLockTree()
	st := t.Stats()
	s.node.RUnlockTree()
	fmt.Fprintf(b, "Node count: %d\n", st.Nodes)
}

func (s *Server) writeMntr(b *strings.Builder) {
	t := s.node.RLockTree()
	st := t.Stats()
	s.node.RUnlockTree()
	_, _, watches := s.node.Watches().Stats()
	lmin, lavg, lmax := s.stats.latencies()
	kv := func(k string, v any) { fmt.Fprintf(b, "zk_%s\t%v\n", k, v) }
	kv("version", Version)
	kv("avg_latency", fmt.Sprintf("%.4f", lavg))
	kv("max_latency", lmax)
	kv("min_latency", lmin)
	kv("packets_received", s.stats.packetsReceived.Load())
	kv("packets_sent", s.stats.packetsSent.Load())
	kv("num_alive_connections", s.numConns())
	kv("outstanding_requests", s.stats.outstanding.Load())
	kv("server_state", s.mode())
	kv("znode_count", st.Nodes)
	kv("watch_count", watches)
	kv("ephemerals_count", st.Ephemerals)
	kv("approximate_data_size", st.DataSize)
	kv("open_file_descriptor_count", openFDs())
	kv("max_file_descriptor_count", maxFDs())
	kv("uptime", time.Since(s.stats.started).Milliseconds())
}

func (s *Server) writeConf(b *strings.Builder) {
	fmt.Fprintf(b, "clientPort=%s\n", portOf(s.Addr()))
	fmt.Fprintf(b, "clientPortAddress=%s\n", hostOf(s.Addr()))
	keys := make([]string, 0, len(s.cfg.Env))
	for k := range s.cfg.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(b, "%s=%s\n", k, s.cfg.Env[k])
	}
	fmt.Fprintf(b, "tickTime=%d\n", s.cfg.TickTime.Milliseconds())
	fmt.Fprintf(b, "maxClientCnxns=%d\n", s.cfg.MaxClientCnxns)
	fmt.Fprintf(b, "minSessionTimeout=%d\n", s.cfg.MinSessionTimeout.Milliseconds())
	fmt.Fprintf(b, "maxSessionTimeout=%d\n", s.cfg.MaxSessionTimeout.Milliseconds())
	fmt.Fprintf(b, "serverId=%d\n", s.cfg.ServerID)
}

func (s *Server) writeEnvi(b *strings.Builder) {
	b.WriteString("Environment:\n")
	fmt.Fprintf(b, "zookeeper.version=%s\n", Version)
	fmt.Fprintf(b, "go.version=%s\n", runtime.Version())
	fmt.Fprintf(b, "os.name=%s\n", runtime.GOOS)
	fmt.Fprintf(b, "os.arch=%s\n", runtime.GOARCH)
}
