package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/zkraft/zkraft/backend"
	"github.com/zkraft/zkraft/ensemble"
	"github.com/zkraft/zkraft/internal/zookeeper/observer"
	"github.com/zkraft/zkraft/operator"
	"github.com/zkraft/zkraft/operator/metrics"
	"github.com/zkraft/zkraft/session"
)

// A following server's part in a live migration's cutover (zkraft
// migrate cutover): AdminServer commands, for the super user alone
// (operator.Admin.AuthorizeSuper: a ZooKeeper ensemble's "/" is often
// open to anyone, and a cutover, or a freeze, changes what the server
// is):
//
//	GET  migration                   state, last zxid, sessions held here
//	POST migration_freeze            hold writes; answer the last zxid
//	POST migration_stop?zxid=Z       stop following at Z
//	POST migration_thaw              call it off: follow and forward again
//	POST migration_cutover?zxid=Z&members=4,5,6[&clients=4=host:port,5=...]
//	                                 become a member of the new ensemble
//
// The states and their transitions are the lifecycle's (lifecycle.go).

// migration runs a following server's cutover.
type migration struct {
	st    Config
	log   *zap.Logger
	b     *observer.Backend
	srv   *session.Server
	admin *operator.Admin
	// metrics, when served, gain the new member's Raft figures.
	metrics *metrics.Registry

	mu   sync.Mutex // one command at a time
	life lifecycle
	node *ensemble.Node // once a member
	// thawTimer calls a cutover off that was frozen and never
	// completed (the command died): writes are not held forever.
	thawTimer *time.Timer
}

// frozenLimit is how long a server stays frozen or stopped without a
// cutover before it calls it off itself.
const frozenLimit = 4 * commandTimeout

// MigrationStatus is the answer to GET migration (zkraft migrate cutover
// reads it).
type MigrationStatus struct {
	State    string `json:"state"`
	ServerID int64  `json:"server_id"`
	// MemberAddr is this server's own server.N address (its quorum
	// port), where it takes its ensemble peers after the cutover.
	MemberAddr string `json:"member_addr"`
	// ClientAddr is where its clients reach it, which the new ensemble's
	// /zookeeper/config names: clients that follow the membership there
	// (Curator's EnsembleTracker) move to the new members, not back to
	// ZooKeeper's servers.
	ClientAddr string `json:"client_addr"`
	LastZxid   int64  `json:"last_zxid"`
	Synced     bool   `json:"synced"`
	Leader     string `json:"leader"`
	Epoch      int64  `json:"epoch"`
	// ClientSessions are the sessions of this server's connections;
	// TreeSessions every session the ensemble holds.
	ClientSessions []int64 `json:"client_sessions"`
	TreeSessions   []int64 `json:"tree_sessions"`
	Mode           string  `json:"mode"`
	// NotApplied counts the changes ZooKeeper committed that this
	// server's tree refused (learner.Status.NotApplied, each logged).
	NotApplied int `json:"not_applied"`
}

// Diverged says why the server's tree is known to differ from
// ZooKeeper's (nil if it is not): a cutover must not seed the new
// ensemble from it, since Raft would take every member's tree at the
// cutover's index as the same.
func (st MigrationStatus) Diverged() error {
	if st.NotApplied > 0 {
		return fmt.Errorf("%d changes ZooKeeper committed were not applied to this server's tree (its log names them): "+
			"it differs from ZooKeeper's; start it again with an empty data directory to resync it", st.NotApplied)
	}
	return nil
}

// handler serves the migration commands under prefix, and next for the
// rest.
func (m *migration) handler(prefix string, next http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/", next)
	cmd := func(name, method string, fn func(r *http.Request) (any, int, error)) {
		mux.HandleFunc(prefix+"/"+name, func(w http.ResponseWriter, r *http.Request) {
			if r.Method != method {
				writeJSON(w, http.StatusMethodNotAllowed, map[string]any{"command": name, "error": "use " + method})
				return
			}
			if status, msg := m.admin.AuthorizeSuper(r); status != 0 {
				writeJSON(w, status, map[string]any{"command": name, "error": msg})
				return
			}
			out, status, err := fn(r)
			if err != nil {
				m.log.Warn("migration command failed", zap.String("command", name), zap.Error(err))
				writeJSON(w, status, map[string]any{"command": name, "error": err.Error()})
				return
			}
			writeJSON(w, http.StatusOK, out)
		})
	}
	cmd("migration", http.MethodGet, func(*http.Request) (any, int, error) { return m.status(), 0, nil })
	cmd("migration_freeze", http.MethodPost, m.freeze)
	cmd("migration_stop", http.MethodPost, m.stop)
	cmd("migration_thaw", http.MethodPost, m.thaw)
	cmd("migration_cutover", http.MethodPost, m.cutover)
	return mux
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (m *migration) status() MigrationStatus {
	m.mu.Lock()
	state := m.life.state
	m.mu.Unlock()
	st := m.b.Learner().Status()
	out := MigrationStatus{State: string(state), ServerID: m.st.ServerID, LastZxid: st.LastZxid, Synced: st.Synced,
		Leader: st.Leader, Epoch: st.Epoch, ClientSessions: []int64{}, TreeSessions: []int64{}, Mode: m.srv.Mode(),
		ClientAddr: m.st.ClientAddr, NotApplied: st.NotApplied}
	for _, p := range m.st.Members {
		if p.ID == m.st.ServerID {
			out.MemberAddr = p.Addr
		}
	}
	for _, c := range m.srv.Connections() {
		if c.SessionID != 0 {
			out.ClientSessions = append(out.ClientSessions, c.SessionID)
		}
	}
	t := m.b.RLockTree()
	for _, s := range t.Sessions() {
		out.TreeSessions = append(out.TreeSessions, s.ID)
	}
	m.b.RUnlockTree()
	if state == StateMember {
		out.LastZxid = m.node.LastZxid()
	}
	return out
}

// commandTimeout bounds each step of a cutover on this server.
const commandTimeout = 30 * time.Second

func (m *migration) freeze(r *http.Request) (any, int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, err := m.life.next(evFreeze); err != nil {
		return nil, http.StatusConflict, err
	}
	if !m.b.Learner().Synced() {
		return nil, http.StatusConflict, errors.New("cannot freeze: not up to date with ZooKeeper's leader")
	}
	ctx, cancel := context.WithTimeout(r.Context(), commandTimeout)
	defer cancel()
	m.life.apply(evFreeze)
	zxid, err := m.b.Freeze(ctx)
	if err != nil {
		m.thawLocked(evThaw)
		return nil, http.StatusServiceUnavailable, err
	}
	if m.thawTimer == nil {
		m.thawTimer = time.AfterFunc(frozenLimit, m.expireFreeze)
	}
	m.log.Info("migration: writes held for the cutover", zap.String("zxid", fmt.Sprintf("%#x", zxid)))
	return map[string]any{"last_zxid": zxid}, 0, nil
}

func (m *migration) stop(r *http.Request) (any, int, error) {
	zxid, err := strconv.ParseInt(r.URL.Query().Get("zxid"), 0, 64)
	if err != nil || zxid <= 0 {
		return nil, http.StatusBadRequest, fmt.Errorf("zxid: %q", r.URL.Query().Get("zxid"))
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, err := m.life.next(evStop); err != nil {
		return nil, http.StatusConflict, err
	}
	ctx, cancel := context.WithTimeout(r.Context(), commandTimeout)
	defer cancel()
	if err := m.b.StopAt(ctx, zxid); err != nil {
		return nil, http.StatusConflict, err
	}
	m.life.apply(evStop)
	m.log.Info("migration: stopped following ZooKeeper", zap.String("zxid", fmt.Sprintf("%#x", zxid)))
	return map[string]any{"last_zxid": zxid}, 0, nil
}

func (m *migration) thaw(*http.Request) (any, int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, err := m.life.next(evThaw); err != nil {
		return nil, http.StatusConflict, err
	}
	m.thawLocked(evThaw)
	m.log.Info("migration: cutover called off; following ZooKeeper again")
	return map[string]any{"state": m.life.state}, 0, nil
}

// thawLocked calls the cutover off (e: a thaw asked for, or the
// freeze's expiry); m.mu is held and e is taken in the current state.
func (m *migration) thawLocked(e event) {
	if m.thawTimer != nil {
		m.thawTimer.Stop()
		m.thawTimer = nil
	}
	m.b.Thaw()
	m.life.apply(e)
}

// expireFreeze calls off a cutover left frozen or stopped for
// frozenLimit.
func (m *migration) expireFreeze() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.life.can(evExpire) {
		m.log.Warn("migration: frozen without a cutover for too long; following ZooKeeper again", zap.Duration("limit", frozenLimit))
		m.thawLocked(evExpire)
	}
}

// cutover seeds this server's data directory with the tree it stopped
// at, opens it as a member of the new ensemble (the members named, each
// a zkraft observer of the same ZooKeeper ensemble stopped at the same
// zxid), and hands the clients' requests to it.
func (m *migration) cutover(r *http.Request) (any, int, error) {
	zxid, err := strconv.ParseInt(r.URL.Query().Get("zxid"), 0, 64)
	if err != nil || zxid <= 0 {
		return nil, http.StatusBadRequest, fmt.Errorf("zxid: %q", r.URL.Query().Get("zxid"))
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.life.can(evCutover) || m.b.LastZxid() != zxid {
		return nil, http.StatusConflict, fmt.Errorf("cannot cut over at %#x: %s at %#x", zxid, m.life.state, m.b.LastZxid())
	}
	st := m.st
	peers, err := cutoverPeers(st, r.URL.Query().Get("members"), r.URL.Query().Get("clients"))
	if err != nil {
		return nil, http.StatusBadRequest, err
	}
	if m.thawTimer != nil {
		m.thawTimer.Stop()
		m.thawTimer = nil
	}
	st.Members = peers
	start := time.Now()
	var nodeMetrics backend.Metrics
	if m.metrics != nil {
		nodeMetrics = m.metrics.Ensemble()
	}
	node, err := openMember(st, nodeMetrics, m.log, &seed{from: m.b, zxid: zxid})
	if err != nil {
		return nil, http.StatusInternalServerError, err
	}
	ctx, cancel := context.WithTimeout(r.Context(), commandTimeout)
	defer cancel()
	for !node.HasQuorum() {
		select {
		case <-ctx.Done():
			// The member stays open: the others may elect with it yet.
			m.node = node
			m.life.apply(evCutover)
			m.b.Handover(node)
			m.srv.SwitchBackend(node)
			m.watchMember(node)
			return nil, http.StatusGatewayTimeout, fmt.Errorf("the new ensemble has no leader after %s", commandTimeout)
		case <-time.After(20 * time.Millisecond):
		}
	}
	m.b.Handover(node)
	m.srv.SwitchBackend(node)
	refireConfig(m.b, node)
	m.node = node
	m.life.apply(evCutover)
	m.watchMember(node)
	// A restart starts as the member now, not as an observer.
	_ = os.Rename(filepath.Join(st.DataDir, FollowState), filepath.Join(st.DataDir, FollowState+".cutover"))
	m.log.Info("migration: cutover done; serving as a member of the new ensemble",
		zap.String("zxid", fmt.Sprintf("%#x", zxid)), zap.String("mode", node.Mode()), zap.Duration("took", time.Since(start)))
	return map[string]any{"mode": node.Mode(), "last_zxid": node.LastZxid()}, 0, nil
}

// cutoverPeers are the new ensemble's members: the servers named (ids,
// comma separated), each one of the observer lines of this server's
// configuration, as voters. A line without a client address takes the
// one clients names for its id (id=host:port, comma separated), so that
// /zookeeper/config names every member's: Curator's EnsembleTracker
// moves its connect string to the servers listed there with one, and a
// membership without would leave it on ZooKeeper's servers, which it
// learnt through the observers, to lose its session at its next
// reconnect.
func cutoverPeers(st Config, members, clients string) ([]backend.Peer, error) {
	clientAddrs := map[int64]string{}
	for _, f := range strings.Split(clients, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		idText, addr, ok := strings.Cut(f, "=")
		id, err := backend.ParseServerID(idText)
		if _, _, aerr := net.SplitHostPort(addr); !ok || err != nil || aerr != nil {
			return nil, fmt.Errorf("clients: %q is not id=host:port", f)
		}
		clientAddrs[id] = addr
	}
	var peers []backend.Peer
	for _, f := range strings.Split(members, ",") {
		id, err := backend.ParseServerID(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("members: %w", err)
		}
		i := slices.IndexFunc(st.Members, func(p backend.Peer) bool { return p.ID == id })
		if i < 0 || !st.Members[i].Observer {
			return nil, fmt.Errorf("members: server.%d is not an observer line of this server's configuration", id)
		}
		p := st.Members[i]
		p.Observer = false
		if p.ClientAddr == "" {
			p.ClientAddr = clientAddrs[id]
		}
		peers = append(peers, p)
	}
	if !slices.ContainsFunc(peers, func(p backend.Peer) bool { return p.ID == st.ServerID }) {
		return nil, fmt.Errorf("members: %s does not name this server (%d)", members, st.ServerID)
	}
	return sortPeers(peers), nil
}

// cutOverMembers are the members a server that cut over starts with:
// the observer lines of its configuration, as voters (ZooKeeper's
// servers are not members). The membership the cutover wrote into its
// state is the one in force.
func cutOverMembers(lines []backend.Peer) []backend.Peer {
	var peers []backend.Peer
	for _, p := range lines {
		if p.Observer {
			p.Observer = false
			peers = append(peers, p)
		}
	}
	return sortPeers(peers)
}

// watchMember adds the new member's Raft figures to the metrics served.
func (m *migration) watchMember(node *ensemble.Node) {
	if m.metrics != nil {
		if err := m.metrics.WatchRaft(node); err != nil {
			m.log.Warn("the new member's Raft metrics are not served", zap.Error(err))
		}
	}
}
