package ensemble

import (
	"fmt"
	"net"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/zkraft/zkraft/backend"
)

// identity is a member's side of the member-connection handshake (the
// gate of handshake.go): what it states about itself, and which peers it
// talks to.
//
//   - Two members whose logs hold different ensemble ids never talk: each
//     refuses the other, and both log it.
//   - A member formed by this build (formation level 2) that holds no id yet
//     is fresh. A fresh member admits a member of an established ensemble
//     (one with an id) only once the voters it has heard from show that
//     ensemble holds a majority of its configuration (it was started late,
//     or wiped and restarted, into a running ensemble); if instead a
//     majority of the voters are fresh like it, it is forming a new
//     ensemble, and the established member is a leftover of an old one on
//     the same addresses, refused for good. Until it knows, it refuses for
//     now.
//   - A member whose ensemble runs at level 2 refuses level-1 members
//     (version-1 headers), and a member does not admit one whose build
//     cannot run its ensemble's level.
type identity struct {
	n      *Node
	server uint64
	// formed are the data directory's formation marks (formation.go):
	// level 0 for one formed before levels or joined to an ensemble.
	formed formationMarks

	mu    sync.Mutex
	peers map[uint64]heard     // the last hello each member stated, by server id
	said  map[string]time.Time // when a refusal was last logged, by remote and reason
	// probedAt is when probeVoters last ran.
	probedAt time.Time
}

// heard is a peer's hello and when it came.
type heard struct {
	hello hello
	at    time.Time
}

// clockSlack is how far members' clocks may differ: an ensemble id
// minted up to this long before a fresh member first started may still
// be its own ensemble's.
var clockSlack = 10 * time.Second

// refusalLogEvery bounds how often the same refusal is logged: a refused
// member retries all the time.
const refusalLogEvery = time.Minute

var _ gate = (*identity)(nil)

func newIdentity(n *Node, formed formationMarks) *identity {
	return &identity{n: n, server: uint64(n.cfg.ID), formed: formed,
		peers: make(map[uint64]heard), said: make(map[string]time.Time)}
}

// level is the level this member holds its ensemble to: its log's. (A
// new ensemble's first leader writes its level before anyone serves; a
// member formed fresh may yet find a level-1 ensemble with zkraft v0.1
// members, which it must then talk to.)
func (g *identity) level() uint8 {
	return g.n.fsm.ensemble().level()
}

func (g *identity) local() hello {
	ens := g.n.fsm.ensemble()
	h := hello{Build: BinaryLevel, Server: g.server, Ensemble: ens}
	if ens.ID.IsZero() && g.formed.level >= 2 {
		h.FreshSince = g.formed.at
	}
	return h
}

func (g *identity) admit(peer hello, remote string, dialer bool) (byte, error) {
	if g.isMember(peer.Server) {
		g.heardFrom(peer)
	}
	self := g.local()
	var status byte
	switch {
	case !self.Ensemble.ID.IsZero() && !peer.Ensemble.ID.IsZero() && self.Ensemble.ID != peer.Ensemble.ID:
		status = statusOtherEnsemble
	case self.FreshSince != 0 && !peer.Ensemble.ID.IsZero() && peer.Ensemble.Minted < self.FreshSince-int64(clockSlack):
		// An ensemble minted since this member started is the one it
		// formed with others; one minted before is decided by the voters.
		switch g.freshVerdict(peer.Ensemble.ID) {
		case verdictAdmit:
		case verdictRefuse:
			status = statusEstablished
		default:
			return statusUndecided, fmt.Errorf("%w: server.%d at %s: waiting to hear from a majority of the voters before admitting a member of an established ensemble",
				errRefused, peer.Server, remote)
		}
	case peer.Build < g.level():
		status = statusLevelTooLow
	}
	if status == statusAccepted {
		return status, nil
	}
	err := fmt.Errorf("%w: server.%d at %s: %s", errRefused, peer.Server, remote, statusText(status))
	g.logRefusal(remote, status, func(log *zap.Logger) {
		msg := "refused a member connection: " + statusText(status)
		if dialer {
			msg = "refused the member this member dialed: " + statusText(status)
		}
		log.Error(msg, zap.String("member", remote), zap.Uint64("memberServerID", peer.Server),
			zap.Stringer("memberEnsembleID", peer.Ensemble.ID), zap.Stringer("ensembleID", self.Ensemble.ID),
			zap.Uint8("memberBuildLevel", peer.Build), zap.Uint8("ensembleLevel", g.level()), zap.String("hint", hint(status)))
	})
	return status, err
}

func (g *identity) admitLegacy(remote string, dialer bool) error {
	level := g.level()
	if level < 2 {
		return nil
	}
	g.logRefusal(remote, statusLevelTooLow, func(log *zap.Logger) {
		msg := "refused a member connection from an older zkraft (member protocol 1, zkraft v0.1)"
		if dialer {
			msg = "a member runs an older zkraft (member protocol 1, zkraft v0.1); not talking to it"
		}
		log.Error(msg, zap.String("member", remote), zap.Uint8("ensembleLevel", level), zap.String("hint", hint(statusLevelTooLow)))
	})
	return fmt.Errorf("%w: %s runs zkraft v0.1 and this ensemble runs at level %d", errRefused, remote, level)
}

func (g *identity) refusedBy(peer hello, remote string, status byte, err error) {
	if status == statusUndecided {
		return // it will decide once it has heard from enough members
	}
	g.logRefusal(remote, status, func(log *zap.Logger) {
		log.Error("a member refused this member's connection: "+statusText(status), zap.String("member", remote),
			zap.Uint64("memberServerID", peer.Server), zap.Stringer("memberEnsembleID", peer.Ensemble.ID),
			zap.Stringer("ensembleID", g.n.fsm.ensemble().ID), zap.String("hint", hint(status)))
	})
}

// hint is what an operator can do about a refusal.
func hint(status byte) string {
	switch status {
	case statusOtherEnsemble:
		return "the two members belong to different ensembles: check the server lines, or stop the leftover process of an old ensemble on that address"
	case statusEstablished:
		return "this member is forming a new ensemble and the other belongs to an older one on the same address: stop the old process; to add a member to a running ensemble, start it with zkraft rejoin"
	case statusLevelTooLow:
		return "run the same zkraft version on every member; an ensemble raised to a level (zkraft upgrade finish) no longer takes older members"
	default:
		return ""
	}
}

// logRefusal logs a refusal once per refusalLogEvery for each remote host
// and status. The host, not its port: a peer that redials is refused
// from a new port each time. Entries older than that go once the table
// holds saidPrune of them.
func (g *identity) logRefusal(remote string, status byte, log func(*zap.Logger)) {
	host := remote
	if h, _, err := net.SplitHostPort(remote); err == nil {
		host = h
	}
	key := fmt.Sprintf("%s/%d", host, status)
	g.mu.Lock()
	last, ok := g.said[key]
	now := time.Now()
	if ok && now.Sub(last) < refusalLogEvery {
		g.mu.Unlock()
		return
	}
	if len(g.said) >= saidPrune {
		for k, at := range g.said {
			if now.Sub(at) >= refusalLogEvery {
				delete(g.said, k)
			}
		}
	}
	g.said[key] = now
	g.mu.Unlock()
	log(g.n.log)
}

// saidPrune is the size of the refusal log's table past which entries
// older than refusalLogEvery are dropped.
const saidPrune = 256

// isMember reports whether id is a member of the configuration: only
// their hellos decide a fresh member's verdict, so only theirs are kept
// (a hello may name any id).
func (g *identity) isMember(id uint64) bool {
	members, _ := g.n.currentMembers()
	for _, p := range members {
		if uint64(p.ID) == id {
			return true
		}
	}
	return false
}

// Verdicts of a fresh member on an established ensemble.
const (
	verdictUndecided = iota
	verdictAdmit
	verdictRefuse
)

// freshVerdict decides, for this fresh member, on a member of the
// established ensemble id, from the hellos heard in the last few seconds;
// short of a decision it asks every voter for its hello (probeVoters), so
// a retry decides.
func (g *identity) freshVerdict(id EnsembleID) int {
	members, _ := g.n.currentMembers()
	var voters []backend.Peer
	for _, p := range members {
		if !p.Observer {
			voters = append(voters, p)
		}
	}
	quorum := len(voters)/2 + 1
	established, fresh := 0, 0
	g.mu.Lock()
	for _, p := range voters {
		if uint64(p.ID) == g.server {
			fresh++
			continue
		}
		h, ok := g.peers[uint64(p.ID)]
		if !ok || time.Since(h.at) > heardFor {
			continue
		}
		switch {
		case h.hello.Ensemble.ID == id:
			established++
		case h.hello.Ensemble.ID.IsZero() && h.hello.FreshSince != 0:
			fresh++
		}
	}
	g.mu.Unlock()
	switch {
	case established >= quorum:
		return verdictAdmit
	case fresh >= quorum:
		return verdictRefuse
	default:
		g.probeVoters(voters)
		return verdictUndecided
	}
}

// heardFor is how long a hello counts for a fresh member's verdict.
const heardFor = 10 * time.Second

// probeVoters asks every other voter for its hello, in the background and
// at most once a second.
func (g *identity) probeVoters(voters []backend.Peer) {
	g.mu.Lock()
	if time.Since(g.probedAt) < time.Second || g.n.mux == nil {
		g.mu.Unlock()
		return
	}
	g.probedAt = time.Now()
	g.mu.Unlock()
	for _, p := range voters {
		if uint64(p.ID) == g.server {
			continue
		}
		go func(addr string) {
			if c, _, err := g.n.mux.openLevel(addr, streamProbe, time.Second); err == nil {
				c.Close()
			}
		}(p.Addr)
	}
}

// heardFrom records a peer's hello seen by dialing it (openLevel).
func (g *identity) heardFrom(peer hello) {
	g.mu.Lock()
	g.peers[peer.Server] = heard{hello: peer, at: time.Now()}
	g.mu.Unlock()
}
