package learner

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jcmturner/gokrb5/v8/client"
	"go.uber.org/zap"

	"github.com/zkraft/zkraft/backend"
	"github.com/zkraft/zkraft/internal/zookeeper/datadir"
	"github.com/zkraft/zkraft/internal/zookeeper/importer"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// Config says which ensemble to follow and as whom.
type Config struct {
	// ID is this observer's server id (its server.M line in the
	// ensemble's configuration).
	ID int64
	// Servers are the quorum addresses (host:port, the first port of each
	// server.N line) of the ensemble's voting servers. Only the leader
	// listens there; they are tried in turn until one takes the
	// handshake, and then the voters of the configuration the followed
	// tree holds that Servers lacks.
	Servers []string
	// Options are this server's own options (extended types, quotas,
	// skipACL): they decide the tree's reads and, after a cutover, what
	// its clients may ask for. They never decide whether a transaction
	// ZooKeeper committed applies: every one does, as ZooKeeper's leader
	// decided it (importer's replay options), a TTL create without
	// ExtendedTypes included.
	Options znode.Options
	// DialTimeout bounds one connection attempt, its TLS handshake
	// included (default 2s).
	DialTimeout time.Duration
	// TLS, when set, is the client side of the ensemble's quorum TLS
	// (ZooKeeper's sslQuorum=true): every connection to a server begins
	// with a TLS handshake, presenting TLS.Certificates (ZooKeeper's
	// quorum TLS is mutual). Without a ServerName the dialed host is
	// verified, unless InsecureSkipVerify. Nil: plain TCP.
	TLS *tls.Config
	// SASL, when set, is the learner side of the ensemble's quorum SASL
	// (ZooKeeper's quorum.auth.enableSasl and learnerRequireSasl): every
	// connection to a server, after its TLS handshake if any, begins
	// with a DIGEST-MD5 exchange with these credentials, before
	// OBSERVERINFO. Nil: no authentication, as a ZooKeeper learner
	// without learnerRequireSasl.
	SASL *DigestCredentials
	// Kerberos, when set, makes that exchange SASL GSSAPI with this
	// login instead (a QuorumLearner section with Krb5LoginModule); it
	// takes precedence over SASL.
	Kerberos *KerberosLogin
	// InitTimeout bounds the wait for each packet while syncing
	// (ZooKeeper's initLimit*tickTime; default 20s), SyncTimeout the wait
	// for each packet after it (syncLimit*tickTime; default 10s): the
	// leader pings every tickTime/2, so a silent connection is dead.
	InitTimeout, SyncTimeout time.Duration
	// Retry is the pause after a failed round over Servers (default 200ms).
	Retry time.Duration
	// Logger logs connections and syncs (default: none).
	Logger *zap.Logger
	// CheckDigests compares the tree's digest (TreeDigest) with each
	// streamed transaction's TxnDigest (ZooKeeper 3.6+ stamps it with the
	// leader's digest after the transaction). It walks the whole tree per
	// transaction: a check for tests and diagnosis, not for production.
	CheckDigests bool
	// OnApply, if set, is called after each transaction is applied, with
	// what applying it gave (one result per change: the replies and watch
	// events a server fires) and the tree. It runs with the Learner's lock
	// held and must not call back into the Learner.
	OnApply func(t datadir.Txn, results []*znode.Result, tree *znode.Tree)
}

// SyncKind is how the leader brought the learner up to date.
type SyncKind string

// The leader's three ways to sync a learner.
const (
	SyncDiff  SyncKind = "DIFF"
	SyncSnap  SyncKind = "SNAP"
	SyncTrunc SyncKind = "TRUNC"
)

// Status is a Learner's state.
type Status struct {
	Leader   string // the quorum address followed, "" when not connected
	Synced   bool   // UPTODATE received on the current connection
	LastZxid int64
	Epoch    int64    // the leader's epoch (currentEpoch)
	LastSync SyncKind // the last sync's kind
	Syncs    int      // syncs completed
	// Replaced counts the trees replaced (a SNAP) or dropped (a TRUNC
	// below the last zxid): changes made without a transaction applied,
	// so without watch events.
	Replaced int
	Applied  int // transactions applied
	// Stopped: the Learner stopped following at the zxid StopAt named
	// (LastZxid), or short of it when it could not get there.
	Stopped bool
	// DigestsChecked and DigestMismatches count the streamed
	// transactions whose digest was compared, and those that differed
	// (Config.CheckDigests).
	DigestsChecked, DigestMismatches int
	// NotApplied counts the changes of committed transactions the tree
	// refused other than as a fuzzy snapshot's (importer.Result's
	// NotApplied; each is logged): a divergence from ZooKeeper.
	NotApplied int
}

// Learner follows one ZooKeeper ensemble as an Observer.
type Learner struct {
	cfg Config
	log *zap.Logger
	// failLogged is the last TLS or SASL failure logged per server
	// (Run's goroutine only): a repeat is logged at debug level.
	failLogged map[string]string

	mu sync.RWMutex
	// f holds the followed tree; replaced by a SNAP or TRUNC.
	f *importer.Follower
	// acceptedEpoch is the last epoch a LEADERINFO gave, currentEpoch
	// the last one synced with (NEWLEADER).
	acceptedEpoch, currentEpoch int64
	status                      Status
	// changed is closed and replaced whenever status changes.
	changed chan struct{}
	// cur is the connection to the leader once synced, nil otherwise.
	cur *conn
	// fw holds the requests forwarded to the leader (forward.go).
	fw forwarding
	// lastZxid and synced copy status.LastZxid and status.Synced, for
	// readers that may not take mu (they run inside OnApply or a Done).
	lastZxid atomic.Int64
	synced   atomic.Bool
	// stopAt is the zxid StopAt named, 0 when none.
	stopAt int64
	// ttlWarned: the warning that ZooKeeper commits TTL nodes while
	// Options.ExtendedTypes is off was logged (mu held).
	ttlWarned bool
	// krb is the Kerberos login of Config.Kerberos once it succeeded.
	krbMu sync.Mutex
	krb   *client.Client
}

// New returns a Learner starting from an empty tree (zxid 0): its first
// sync replays the ensemble's history by DIFF or loads it by SNAP.
func New(cfg Config) *Learner {
	if cfg.DialTimeout == 0 {
		cfg.DialTimeout = 2 * time.Second
	}
	if cfg.InitTimeout == 0 {
		cfg.InitTimeout = 20 * time.Second
	}
	if cfg.SyncTimeout == 0 {
		cfg.SyncTimeout = 10 * time.Second
	}
	if cfg.Retry == 0 {
		cfg.Retry = 200 * time.Millisecond
	}
	log := cfg.Logger
	if log == nil {
		log = zap.NewNop()
	}
	return &Learner{cfg: cfg, log: log, f: importer.NewFollower(cfg.Options), changed: make(chan struct{})}
}

// Run follows the ensemble until ctx ends: it finds the leader, syncs and
// applies the stream, and on any failure (the leader gone, a new leader
// elected) starts over from the state it holds, so the next sync is a
// DIFF when the leader still has the transactions since. It returns
// ctx's error.
func (l *Learner) Run(ctx context.Context) error {
	defer l.dropKerberos()
	for {
		for _, addr := range l.servers() {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if l.Status().Stopped {
				return ErrStopped
			}
			err := l.follow(ctx, addr)
			l.setDisconnected()
			switch {
			case ctx.Err() != nil:
				return ctx.Err()
			case l.Status().Stopped:
				return ErrStopped
			case errors.Is(err, errTLS):
				l.logTLS(addr, err)
			case errors.Is(err, errSASL):
				l.logSASL(addr, err)
			case errors.Is(err, errNotLeader):
				l.log.Debug("learner: not the leader", zap.String("server", addr), zap.Error(err))
			default:
				l.log.Info("learner: connection to the leader ended", zap.String("leader", addr), zap.Error(err))
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(l.cfg.Retry):
		}
	}
}

// servers are the quorum addresses Run tries in a round: Config.Servers,
// then the other voters of the configuration the followed tree holds (a
// reconfig may have added the leader), as a ZooKeeper observer looks for
// the leader among the voters of the last configuration it saw.
func (l *Learner) servers() []string {
	addrs := slices.Clone(l.cfg.Servers)
	peers, _, _ := l.Configuration()
	for _, p := range peers {
		if !p.Observer && !slices.Contains(addrs, p.Addr) {
			addrs = append(addrs, p.Addr)
		}
	}
	return addrs
}

// Configuration is the ensemble's configuration the followed tree holds
// in /zookeeper/config (a SNAP's, or the last reconfig's): its servers and
// version, and false if it holds none that parses.
func (l *Learner) Configuration() (peers []backend.Peer, version int64, ok bool) {
	l.mu.RLock()
	data, _, err := l.f.Tree().GetData(znode.ConfigPath, []jute.Id{{Scheme: "super"}})
	l.mu.RUnlock()
	if err != nil || len(data) == 0 {
		return nil, 0, false
	}
	peers, version, err = backend.ParseMembers(string(data))
	if err != nil || len(peers) == 0 {
		return nil, 0, false
	}
	return peers, max(version, 0), true
}

// Read calls fn with the followed tree, which no transaction changes
// until fn returns. fn must not keep the tree.
func (l *Learner) Read(fn func(*znode.Tree)) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	fn(l.f.Tree())
}

// RLockTree returns the followed tree, read-locked: no transaction
// changes it until RUnlockTree. Read is the safer form.
func (l *Learner) RLockTree() *znode.Tree {
	l.mu.RLock()
	return l.f.Tree()
}

// RUnlockTree releases RLockTree's lock.
func (l *Learner) RUnlockTree() { l.mu.RUnlock() }

// LastZxid is the zxid of the last transaction applied. Unlike Status it
// takes no lock, so OnApply and a Done may call it.
func (l *Learner) LastZxid() int64 { return l.lastZxid.Load() }

// Synced reports whether the Learner is up to date with a leader now (it
// takes no lock).
func (l *Learner) Synced() bool { return l.synced.Load() }

// Status returns the Learner's state.
func (l *Learner) Status() Status {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.status
}

// WaitFor waits until cond holds for the Learner's status, or ctx ends.
func (l *Learner) WaitFor(ctx context.Context, cond func(Status) bool) (Status, error) {
	for {
		l.mu.RLock()
		st, ch := l.status, l.changed
		l.mu.RUnlock()
		if cond(st) {
			return st, nil
		}
		select {
		case <-ctx.Done():
			return st, fmt.Errorf("learner: waiting: %w", ctx.Err())
		case <-ch:
		}
	}
}

// notify wakes WaitFor; l.mu must be held for writing.
func (l *Learner) notify() {
	l.lastZxid.Store(l.status.LastZxid)
	l.synced.Store(l.status.Synced)
	close(l.changed)
	l.changed = make(chan struct{})
}

func (l *Learner) setDisconnected() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.status.Leader, l.status.Synced = "", false
	l.cur = nil
	l.notify()
	l.fw.lost()
}

// apply applies one transaction of the leader's.
func (l *Learner) apply(t datadir.Txn) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopBefore(t.Zxid) {
		return ErrStopped
	}
	notApplied := l.f.NotApplied
	results, err := l.f.ApplyResults(t)
	if err != nil {
		return err
	}
	l.noteApplied(t, notApplied)
	l.status.LastZxid = l.f.Tree().LastZxid()
	l.status.Applied++
	if l.cfg.CheckDigests && l.status.Synced {
		l.checkDigest(t)
	}
	if l.cfg.OnApply != nil {
		l.cfg.OnApply(t, results, l.f.Tree())
	}
	l.notify()
	l.fw.delivered(t, results, l.f.Tree())
	if l.stopAt != 0 && t.Zxid == l.stopAt {
		l.stopLocked()
		return ErrStopped
	}
	return nil
}

// noteApplied logs what applying t showed that an operator must know
// (l.mu held): a change of it the tree refused (notApplied was the count
// before), and, once, that ZooKeeper commits TTL nodes while this
// server's extended types are off. Both apply here regardless; the
// second matters after the cutover, when this server's own setting
// decides whether its clients may create TTL nodes and whether they
// expire.
func (l *Learner) noteApplied(t datadir.Txn, notApplied int) {
	if n := l.f.NotApplied; n > notApplied {
		l.status.NotApplied += n - notApplied
		l.log.Warn("learner: a change ZooKeeper committed was not applied here: the tree differs from ZooKeeper's",
			zap.String("change", l.f.LastUnapplied), zap.Int("notApplied", l.status.NotApplied))
	}
	if l.f.TTLCreates > 0 && !l.cfg.Options.ExtendedTypes && !l.ttlWarned {
		l.ttlWarned = true
		l.log.Warn("learner: ZooKeeper commits TTL nodes, applied here, but extendedTypesEnabled is off on this server: "+
			"set it (ZooKeeper's -Dzookeeper.extendedTypesEnabled=true) before the cutover, or the zkraft ensemble will "+
			"refuse TTL creates and never expire TTL nodes", zap.String("zxid", fmt.Sprintf("%#x", t.Zxid)))
	}
}

// checkDigest compares the tree's digest with the one t carries, if any;
// l.mu must be held.
func (l *Learner) checkDigest(t datadir.Txn) {
	want, ok := txnDigest(t)
	if !ok {
		return
	}
	l.status.DigestsChecked++
	if got := TreeDigest(l.f.Tree()); got != want {
		l.status.DigestMismatches++
		l.log.Warn("learner: the tree's digest differs from the leader's", zap.String("zxid", fmt.Sprintf("%#x", t.Zxid)),
			zap.Int32("type", int32(t.Type)), zap.Int64("digest", got), zap.Int64("leaderDigest", want))
	}
}
