package operator

import (
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/zkraft/zkraft/backend"
	"github.com/zkraft/zkraft/session"
)

// adminCommand is one AdminServer command (ZooKeeper 3.8's
// org.apache.zookeeper.server.admin.Commands): its primary name, the
// aliases it also answers to, and what it returns before the "command" and
// "error" fields every response ends with.
type adminCommand struct {
	names []string
	run   func(s view) jsonObj
}

// adminCommands are ZooKeeper 3.8's AdminServer commands; responses keep
// its field names, types and order.
var adminCommands = []adminCommand{
	{[]string{"configuration", "conf", "config"}, view.adminConf},
	{[]string{"connection_stat_reset", "crst"}, func(s view) jsonObj { s.srv.ResetConnectionStats(); return nil }},
	{[]string{"connections", "cons"}, func(s view) jsonObj {
		return jsonObj{}.add("connections", s.adminConns(false)).add("secure_connections", []any{})
	}},
	{[]string{"dirs"}, func(s view) jsonObj {
		return jsonObj{}.add("datadir_size", dirSize(s.cfg.Env["dataDir"])).add("logdir_size", dirSize(s.logDir()))
	}},
	{[]string{"dump"}, view.adminDump},
	{[]string{"environment", "env", "envi"}, view.adminEnv},
	{[]string{"get_trace_mask", "gtmk"}, notSupported("get_trace_mask")},
	{[]string{"hash"}, func(view) jsonObj { return jsonObj{}.add("digests", []any{}) }},
	{[]string{"initial_configuration", "icfg"}, func(s view) jsonObj {
		return jsonObj{}.add("initial_configuration", redactConfig(s.cfg.InitialConfig))
	}},
	{[]string{"is_read_only", "isro"}, func(s view) jsonObj { return jsonObj{}.add("read_only", !s.node.HasQuorum()) }},
	{[]string{"last_snapshot", "lsnp"}, view.adminLastSnapshot},
	{[]string{"leader", "lead"}, view.adminLeader},
	{[]string{"monitor", "mntr"}, view.adminMonitor},
	{[]string{"observer_connection_stat_reset", "orst"}, func(view) jsonObj { return nil }},
	{[]string{"observers", "obsr"}, view.adminObservers},
	{[]string{"ruok"}, func(view) jsonObj { return nil }},
	{[]string{"server_stats", "srvr"}, func(s view) jsonObj { return s.adminServerStats() }},
	{[]string{"set_trace_mask", "stmk"}, notSupported("set_trace_mask")},
	{[]string{"stat_reset", "srst"}, func(s view) jsonObj { s.resetStats(); return nil }},
	{[]string{"stats", "stat"}, func(s view) jsonObj {
		return s.adminServerStats().add("connections", s.adminConns(true)).add("secure_connections", []any{})
	}},
	{[]string{"system_properties", "sysp"}, notSupported("system_properties")},
	{[]string{"voting_view"}, view.adminVotingView},
	{[]string{"watch_summary", "wchs"}, func(s view) jsonObj {
		conns, paths, total := s.node.Watches().Stats()
		return jsonObj{}.add("num_connections", conns).add("num_paths", paths).add("num_total_watches", total)
	}},
	{[]string{"watches", "wchc"}, view.adminWatchesBySession},
	{[]string{"watches_by_path", "wchp"}, view.adminWatchesByPath},
	{[]string{"zabstate"}, view.adminZabState},
}

// adminWithoutServer are the commands ZooKeeper answers while its server
// is not running (isServerRequired false); the others then answer only
// "not currently serving requests" (a member without a quorum).
var adminWithoutServer = map[string]bool{
	"environment": true, "get_trace_mask": true, "monitor": true, "set_trace_mask": true,
	"system_properties": true, "zabstate": true,
}

// errorField marks a command's own failure: the response is then the
// error and the command's name only, in that order, as ZooKeeper's.
const errorField = "error"

// notSupported answers a JVM-specific command (trace masks, Java system
// properties) that has no meaning here.
func notSupported(name string) func(view) jsonObj {
	return func(view) jsonObj {
		return jsonObj{}.add(errorField, name+" is not supported by this server")
	}
}

// adminCommandByName finds a command by its name or an alias (case
// sensitive, as ZooKeeper's).
func adminCommandByName(name string) (adminCommand, bool) {
	for _, c := range adminCommands {
		for _, n := range c.names {
			if n == name {
				return c, true
			}
		}
	}
	return adminCommand{}, false
}

// Admin is the AdminServer of one session.Server (ZooKeeper's
// admin.enableServer): its commands, in JSON, over HTTP.
type Admin struct {
	srv *session.Server
	// mu guards lastSnapshot: when the snapshot command last ran
	// (session.Config.AdminSnapshotInterval).
	mu           sync.Mutex
	lastSnapshot time.Time
}

// NewAdmin returns the AdminServer of srv.
func NewAdmin(srv *session.Server) *Admin { return &Admin{srv: srv} }

// Response runs the AdminServer command name (or alias) and returns its
// JSON response as ZooKeeper 3.8's AdminServer writes it.
func (a *Admin) Response(name string) string {
	s := newView(a.srv)
	var out jsonObj
	c, ok := adminCommandByName(name)
	switch {
	case !ok:
		out = jsonObj{}.add("command", name).add("error", "Unknown command: "+name)
	case !s.serving() && !adminWithoutServer[c.names[0]]:
		out = jsonObj{}.add("command", name).add("error", strings.TrimSuffix(notServing, "\n"))
	default:
		data := c.run(s)
		if len(data) == 1 && data[0].key == errorField {
			out = data.add("command", c.names[0])
		} else {
			out = append(data, jsonField{"command", c.names[0]}, jsonField{"error", nil})
		}
	}
	var b strings.Builder
	writeJackson(&b, out)
	return b.String()
}

// Handler serves the AdminServer under commandURL (ZooKeeper's
// admin.commandURL, "/commands" by default): GET commandURL lists the
// commands as links, GET commandURL/<name> answers one in JSON (200 even
// for an unknown name, with the error in the body). Other methods get 405.
func (a *Admin) Handler(commandURL string) http.Handler {
	commandURL = "/" + strings.Trim(commandURL, "/")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rest, ok := strings.CutPrefix(r.URL.Path, commandURL)
		if !ok || (rest != "" && rest[0] != '/') {
			http.NotFound(w, r)
			return
		}
		switch strings.TrimPrefix(rest, "/") {
		case "upgrade", "upgrade_finish":
			a.serveUpgrade(w, r, rest == "/upgrade_finish")
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		name := strings.TrimPrefix(rest, "/")
		if name == "" {
			var b strings.Builder
			for _, n := range adminCommandNames() {
				fmt.Fprintf(&b, "<a href=\"%s/%s\">%s</a>\n<br/>\n", commandURL, n, n)
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write([]byte(b.String()))
			return
		}
		if name == "snapshot" || name == "snap" {
			a.serveSnapshot(w, r, "snapshot")
			return
		}
		var body string
		if c, ok := adminCommandByName(name); ok && heavyAdmin[c.names[0]] {
			// Its turn ends once the answer is made, not written: a
			// client slow to read it does not hold up the next.
			done, err := takeReportTurn(r.Context(), a.srv)
			if err != nil {
				var b strings.Builder
				writeJackson(&b, jsonObj{}.add("command", c.names[0]).add("error", err.Error()))
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(http.StatusServiceUnavailable)
				_, _ = io.WriteString(w, b.String())
				return
			}
			func() {
				defer done() // a panic net/http recovers must not keep the turn
				body = a.Response(name)
			}()
		} else {
			body = a.Response(name)
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = io.WriteString(w, body)
	})
}

// adminCommandNames are the primary names, sorted, as the listing shows.
func adminCommandNames() []string {
	names := make([]string, 0, len(adminCommands))
	for _, c := range adminCommands {
		names = append(names, c.names[0])
	}
	sort.Strings(names)
	return names
}

func (s view) adminConf() jsonObj {
	serverID := 0
	if s.node.Mode() != "standalone" {
		serverID = int(s.node.ID())
	}
	port, _ := strconv.Atoi(portOf(s.srv.Addr()))
	dataDir := s.cfg.Env["dataDir"]
	return jsonObj{}.
		add("client_port", port).
		add("data_dir", dataDir).
		add("data_log_dir", s.logDir()).
		add("tick_time", s.cfg.TickTime.Milliseconds()).
		add("max_client_cnxns", s.cfg.MaxClientCnxns).
		add("min_session_timeout", s.cfg.MinSessionTimeout.Milliseconds()).
		add("max_session_timeout", s.cfg.MaxSessionTimeout.Milliseconds()).
		add("server_id", serverID).
		add("client_port_listen_backlog", -1)
}

// adminConns lists connections as ZooKeeper's getConnectionInfo(brief).
func (s view) adminConns(brief bool) []any {
	out := []any{}
	for _, c := range s.srv.Connections() {
		interest := 1
		if c.SessionID == 0 {
			interest = 0
		}
		info := jsonObj{}.
			add("remote_socket_address", c.Remote).
			add("interest_ops", interest).
			add("outstanding_requests", c.Queued).
			add("packets_received", c.Received).
			add("packets_sent", c.Sent)
		if !brief {
			info = info.
				add("session_id", c.SessionID).
				add("last_operation", opName(c.LastOp)).
				add("established", c.Established.UnixMilli()).
				add("session_timeout", c.Timeout).
				add("last_cxid", c.LastCxid).
				add("last_zxid", c.LastZxid).
				add("last_response_time", c.LastResponse).
				add("last_latency", c.LastLatency).
				add("min_latency", c.MinLatency).
				add("avg_latency", c.AvgLatency).
				add("max_latency", c.MaxLatency)
		}
		out = append(out, info)
	}
	return out
}

// adminDump is dump: sessions by expiry time (unix milliseconds, rounded
// up to a tick as ZooKeeper's buckets are) and their ephemeral nodes.
func (s view) adminDump() jsonObj {
	sessions, eph := s.sessionsAndEphemerals()
	deadlines := s.node.SessionDeadlines()
	tick := s.cfg.TickTime.Milliseconds()
	byExpiry := map[int64][]int64{}
	for _, si := range sessions {
		d, ok := deadlines[si.ID]
		if !ok {
			continue
		}
		ms := d.UnixMilli()
		if tick > 0 {
			ms = (ms/tick + 1) * tick
		}
		byExpiry[ms] = append(byExpiry[ms], si.ID)
	}
	expiry := jsonObj{}
	for _, ms := range slices.Sorted(maps.Keys(byExpiry)) {
		expiry = expiry.add(strconv.FormatInt(ms, 10), byExpiry[ms])
	}
	ephemerals := jsonObj{}
	for _, si := range sessions {
		if list, ok := eph[si.ID]; ok {
			ephemerals = ephemerals.add(strconv.FormatInt(si.ID, 10), list)
		}
	}
	return jsonObj{}.add("expiry_time_to_session_ids", expiry).add("session_id_to_ephemeral_paths", ephemerals)
}

func (s view) adminEnv() jsonObj {
	host, _ := os.Hostname()
	wd, _ := os.Getwd()
	home, _ := os.UserHomeDir()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return jsonObj{}.
		add("zookeeper.version", Version).
		add("host.name", host).
		add("go.version", runtime.Version()).
		add("os.name", runtime.GOOS).
		add("os.arch", runtime.GOARCH).
		add("user.name", os.Getenv("USER")).
		add("user.home", home).
		add("user.dir", wd).
		add("os.memory.heap", fmt.Sprintf("%dMB", ms.HeapAlloc>>20)).
		add("os.memory.total", fmt.Sprintf("%dMB", ms.Sys>>20))
}

func (s view) adminLastSnapshot() jsonObj {
	index, at, ok := s.node.LastSnapshot()
	if !ok {
		return jsonObj{}.add("zxid", "0").add("timestamp", int64(0))
	}
	return jsonObj{}.add("zxid", strconv.FormatUint(index, 16)).add("timestamp", at.Unix())
}

func (s view) adminLeader() jsonObj {
	if s.node.Mode() == "standalone" {
		return jsonObj{}.add(errorField, "server is not initialized")
	}
	id, addr, ok := s.node.Leader()
	ip := ""
	if ok {
		ip, _, _ = net.SplitHostPort(addr)
	}
	leaderID := int64(id)
	if !ok {
		leaderID = -1
	}
	return jsonObj{}.add("is_leader", s.node.IsLeader()).add("leader_id", leaderID).add("leader_ip", ip)
}

// adminMonitor is mntr's figures without the zk_ prefix, numbers as JSON
// numbers.
func (s view) adminMonitor() jsonObj {
	out := jsonObj{}
	for _, v := range s.monitorValues() {
		val := v.value
		if str, ok := val.(string); ok && strings.HasPrefix(v.key, "avg_") {
			val = jsonNumber(str)
		}
		out = out.add(v.key, val)
	}
	return out
}

func (s view) adminObservers() jsonObj {
	observers := []any{}
	if s.node.IsLeader() {
		for _, p := range s.node.Members() {
			if p.Observer {
				observers = append(observers, jsonObj{}.add("sid", p.ID).add("address", p.Addr))
			}
		}
	}
	return jsonObj{}.add("synced_observers", len(observers)).add("observers", observers)
}

// adminServerStats is server_stats (srvr); stats adds the connections.
func (s view) adminServerStats() jsonObj {
	st := s.srv.Stats()
	lmin, lavg, lmax := st.MinLatency, st.AvgLatency, st.MaxLatency
	// Reply sizes are not tracked per response (that would cost the hot
	// path); -1 is ZooKeeper's value before its first response.
	responses := jsonObj{}.add("last_buffer_size", -1).add("min_buffer_size", -1).add("max_buffer_size", -1)
	stats := jsonObj{}.
		add("packets_sent", st.PacketsSent).
		add("packets_received", st.PacketsReceived).
		add("fsync_threshold_exceed_count", s.node.FsyncTimes().Slow).
		add("client_response_stats", responses).
		add("data_dir_size", dirSize(s.cfg.Env["dataDir"])).
		add("log_dir_size", dirSize(s.logDir())).
		add("provider_null", false).
		add("server_state", s.mode()).
		add("last_processed_zxid", s.node.LastZxid()).
		add("outstanding_requests", st.Outstanding).
		add("avg_latency", jsonNumber(javaDouble(lavg))).
		add("max_latency", lmax).
		add("min_latency", lmin).
		add("num_alive_client_connections", s.srv.NumConnections()).
		add("uptime", time.Since(st.Started).Milliseconds()).
		add("auth_failed_count", st.AuthFailed).
		add("non_mtlsremote_conn_count", 0).
		add("non_mtlslocal_conn_count", 0)
	znodes, _, _, _ := s.treeStats()
	return jsonObj{}.
		add("version", Version).
		add("read_only", s.mode() == "read-only").
		add("server_stats", stats).
		add("client_response", responses).
		add("node_count", znodes)
}

// adminVotingView is voting_view: the members (observers included, as
// ZooKeeper's getVotingView has them) by id.
func (s view) adminVotingView() jsonObj {
	view := jsonObj{}
	if s.node.Mode() != "standalone" {
		peers := s.node.Members()
		sort.Slice(peers, func(i, j int) bool { return peers[i].ID < peers[j].ID })
		for _, p := range peers {
			election := []string{electionAddr(p)}
			role := "participant"
			if p.Observer {
				role = "observer"
			}
			view = view.add(strconv.FormatInt(p.ID, 10), jsonObj{}.
				add("server_addresses", []string{p.Addr}).
				add("election_addresses", election).
				add("client_address", p.ClientAddr).
				add("learner_type", role))
		}
	}
	return jsonObj{}.add("current_config", view)
}

func (s view) adminWatchesBySession() jsonObj {
	bySession := s.node.Watches().BySession()
	out := jsonObj{}
	for _, id := range slices.Sorted(maps.Keys(bySession)) {
		out = out.add(strconv.FormatInt(id, 10), bySession[id])
	}
	return jsonObj{}.add("session_id_to_watched_paths", out)
}

func (s view) adminWatchesByPath() jsonObj {
	byPath := s.node.Watches().ByPath()
	out := jsonObj{}
	for _, p := range slices.Sorted(maps.Keys(byPath)) {
		out = out.add(p, byPath[p])
	}
	return jsonObj{}.add("path_to_session_ids", out)
}

// adminZabState is zabstate with Raft's counterparts: the term for the
// epoch, "broadcast" while a leader is known and "election" otherwise. A
// standalone server answers as ZooKeeper's does.
func (s view) adminZabState() jsonObj {
	if s.node.Mode() == "standalone" || !s.node.HasQuorum() {
		// ZooKeeper's answer without a QuorumZooKeeperServer: a lone
		// server, or a member between leaders or cut off (read-only too).
		return jsonObj{}.add("voting", false).add("zabstate", "")
	}
	state := "broadcast"
	quorum, election := jsonObj{}, jsonObj{}
	for _, p := range s.node.Members() {
		if p.ID != s.node.ID() {
			continue
		}
		host, port, err := net.SplitHostPort(p.Addr)
		if err != nil {
			break
		}
		quorum = addressView(host, port)
		_, eport, _ := net.SplitHostPort(electionAddr(p))
		election = addressView(host, eport)
	}
	zxid := s.node.LastZxid()
	return jsonObj{}.
		add("myid", int64(s.node.ID())).
		add("is_leader", s.node.IsLeader()).
		add("quorum_address", quorum).
		add("election_address", election).
		add("client_address", s.srv.Addr().String()).
		add("voting", s.node.Mode() != "observer").
		add("last_zxid", "0x"+strconv.FormatInt(zxid, 16)).
		add("zab_epoch", s.node.Term()).
		add("zab_counter", zxid).
		add("zabstate", state)
}

// addressView is a member address as zabstate shows ZooKeeper's
// MultipleAddresses (one address here).
func addressView(host, port string) jsonObj {
	addr := net.JoinHostPort(host, port)
	n, _ := strconv.ParseInt(port, 10, 64)
	return jsonObj{}.
		add("empty", false).
		add("all_addresses", []string{addr}).
		add("all_reachable_addresses", []string{addr}).
		add("one", addr).
		add("reachable_address", addr).
		add("wildcard_addresses", []string{net.JoinHostPort("0.0.0.0", port)}).
		add("all_ports", []int64{n}).
		add("all_host_strings", []string{host}).
		add("all_reachable_addresses_or_all", []string{addr}).
		add("reachable_or_one", addr)
}

// electionAddr is a member's zoo.cfg election address; without one (a
// --peers member) its member address, whose one port serves Raft's
// elections too.
func electionAddr(p backend.Peer) string {
	host, _, err := net.SplitHostPort(p.Addr)
	if err != nil || p.ElectionPort <= 0 {
		return p.Addr
	}
	return net.JoinHostPort(host, strconv.Itoa(p.ElectionPort))
}
