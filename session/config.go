package session

import (
	"math"
	"time"

	"go.uber.org/zap"

	"github.com/zkraft/zkraft/internal/base/netguard"
	"github.com/zkraft/zkraft/jute"
)

// Config configures a Server.
type Config struct {
	// ServerID is this member's id, any long as ZooKeeper's (0 included);
	// its low byte is the top byte of session ids (firstSessionID).
	ServerID int64
	// TickTime is ZooKeeper's tick; session timeout bounds derive from it.
	TickTime time.Duration
	// MinSessionTimeout and MaxSessionTimeout bound negotiated timeouts;
	// zero means 2 and 20 ticks.
	MinSessionTimeout time.Duration
	MaxSessionTimeout time.Duration
	// MaxClientCnxns limits concurrent connections per client IP; 0 = none.
	MaxClientCnxns int
	// MaxCnxns limits concurrent client connections in all (maxCnxns);
	// 0 = none.
	MaxCnxns int
	// ConnLimit caps the client ports' connections in all whatever
	// MaxCnxns says: cmd/zkraft sets it to the client ports' share of the
	// process's file limit (netguard.Plan), so that clients can never
	// take the descriptors the member's files and peers need, even with
	// maxCnxns at ZooKeeper's default, no limit. 0 = none.
	ConnLimit int
	// Rejected counts the connections the client ports refused (MaxCnxns,
	// MaxClientCnxns, ConnLimit) and their failed accepts: mntr's
	// zk_connection_rejected, shared with the process's other listeners.
	// Nil: the server counts its own.
	Rejected *netguard.Rejections
	// LeaderServesNot keeps the leader of an ensemble from serving
	// clients (leaderServes=no): it refuses their handshakes and drops its
	// client connections when it becomes leader, so they go to the
	// followers. Four-letter words are still answered.
	LeaderServesNot bool
	// OutstandingLimit is globalOutstandingLimit: with more writes than
	// this in flight on the member, connections with writes in flight stop
	// reading until it is back within the limit (throttle.go). Zero means
	// DefaultOutstandingLimit (1000, ZooKeeper's), negative none.
	OutstandingLimit int
	// InitLimit and SyncLimit are zoo.cfg's, shown by conf.
	InitLimit, SyncLimit int
	// MaxBuffer is jute.maxbuffer: the largest frame accepted.
	MaxBuffer int
	// SuperDigest is "user:base64(sha1(user:password))"; a digest auth
	// matching it is the super user.
	SuperDigest string
	// EnforceAuthSchemes, when set, closes every connection that sends a
	// request (other than auth and SASL) before it holds an identity of
	// one of these schemes (zookeeper.enforce.auth.enabled and
	// enforce.auth.schemes; sessionRequireClientSASLAuth is "sasl").
	EnforceAuthSchemes []string
	// SASLUsers are the user names and passwords SASL DIGEST-MD5 clients
	// authenticate with (the user_<name>="<password>" options of a JAAS
	// "Server" section); nil leaves SASL unconfigured.
	SASLUsers map[string]string
	// AdminSnapshotInterval is the least time between two AdminServer
	// snapshot commands (admin.rateLimiterIntervalInMS, default 5 minutes,
	// ZooKeeper's intent): each clones the whole tree, so a caller cannot
	// make the member hold many copies. Negative: no limit.
	AdminSnapshotInterval time.Duration
	// Audit logs every client write's outcome in ZooKeeper's audit format
	// (audit.enable) to the logger named "audit".
	Audit bool
	// AllowSASLFailedClients keeps a connection whose SASL authentication
	// failed, unauthenticated, unless SASL is enforced
	// (zookeeper.allowSaslFailedClients).
	AllowSASLFailedClients bool
	// Kerberos, when set, makes SASL GSSAPI (Kerberos) the mechanism
	// instead of DIGEST-MD5 with SASLUsers, as a JAAS Server section with
	// Krb5LoginModule does for ZooKeeper.
	Kerberos *Kerberos
	// SASLSuperUser is the SASL user that is the super user
	// (zookeeper.superUser).
	SASLSuperUser string
	// X509SuperUser is the distinguished name of the client certificate
	// that is the super user on the secure port
	// (zookeeper.X509AuthenticationProvider.superUser).
	X509SuperUser string
	// FourLetter answers the four-letter words (package operator's
	// FourLetter); nil: a connection sending one is closed as one sending
	// an oversized frame.
	FourLetter FourLetterHandler
	// FourLetterWhitelist lists the enabled four-letter words ("*" = all),
	// for FourLetter.
	FourLetterWhitelist []string
	// LinearizableReads makes every read wait for a barrier through the
	// log (etcd-style reads) instead of answering from the local tree.
	LinearizableReads bool
	// ReadOnlyMode (readonlymode.enabled) lets a member cut off from the
	// quorum keep serving clients that asked for read-only sessions.
	ReadOnlyMode bool
	// ReconfigEnabled allows the reconfig operation (reconfigEnabled).
	ReconfigEnabled bool
	// FirstFrameTimeout is how long a new connection may take to send its
	// ConnectRequest (or four-letter word) before it is closed, as
	// ZooKeeper closes a connection without a session after
	// zookeeper.nio.sessionlessCnxnTimeout. Zero means 10 s, ZooKeeper's
	// default.
	FirstFrameTimeout time.Duration
	// WriteTimeout is how long one write to a client may block (a client
	// that stopped reading) before its connection is closed; zero means
	// 30 seconds.
	WriteTimeout time.Duration
	// Env is reported by the conf and envi four-letter words.
	Env map[string]string
	// InitialConfig is the text of the configuration file the server
	// started from ("" without one), for the AdminServer's
	// initial_configuration.
	InitialConfig string
	// Logger receives structured logs.
	Logger *zap.Logger
	// Requests, if set, is told each answered request's latency (the
	// metrics' per-op histograms).
	Requests RequestObserver
}

// RequestObserver is told the latency of each request answered, from the
// moment it was read to its reply being queued: write is true for a
// transaction, a change that went through the log (ZooKeeper's
// updatelatency); the rest, sync included (ZooKeeper answers it without a
// transaction), are its readlatency. ObserveRequest runs for every request on the
// connection's or the FSM's goroutine: it must not block or allocate.
type RequestObserver interface {
	ObserveRequest(op jute.Op, write bool, took time.Duration)
}

func (c *Config) setDefaults() {
	if c.OutstandingLimit == 0 {
		c.OutstandingLimit = DefaultOutstandingLimit
	}
	if c.TickTime <= 0 {
		c.TickTime = 2 * time.Second
	}
	if c.MinSessionTimeout <= 0 {
		c.MinSessionTimeout = 2 * c.TickTime
	}
	if c.MaxSessionTimeout <= 0 {
		c.MaxSessionTimeout = 20 * c.TickTime
	}
	if c.MaxBuffer <= 0 {
		c.MaxBuffer = jute.DefaultMaxBuffer
	}
	if c.AdminSnapshotInterval == 0 {
		c.AdminSnapshotInterval = 5 * time.Minute
	}
	if c.FourLetterWhitelist == nil {
		c.FourLetterWhitelist = []string{"srvr"}
	}
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
	if c.FirstFrameTimeout <= 0 {
		c.FirstFrameTimeout = 10 * time.Second
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = 30 * time.Second
	}
	if c.Rejected == nil {
		c.Rejected = new(netguard.Rejections)
	}
}

// connCap is the most connections the client ports hold together:
// maxCnxns, lowered to ConnLimit; 0 = none.
func (c *Config) connCap() int {
	if c.ConnLimit > 0 && (c.MaxCnxns <= 0 || c.MaxCnxns > c.ConnLimit) {
		return c.ConnLimit
	}
	return max(c.MaxCnxns, 0)
}

// negotiate clamps a requested session timeout (ms) to the configured bounds.
// A bound past what the protocol's int32 of milliseconds holds (about 24.8
// days) counts as math.MaxInt32: converted as it is, it would wrap, a
// negative timeout for every client.
func (c *Config) negotiate(requested int32) int32 {
	lo, hi := timeoutMillis(c.MinSessionTimeout), timeoutMillis(c.MaxSessionTimeout)
	switch {
	case requested < lo:
		return lo
	case requested > hi:
		return hi
	}
	return requested
}

// timeoutMillis is d in whole milliseconds, capped at math.MaxInt32.
func timeoutMillis(d time.Duration) int32 {
	return int32(min(d/time.Millisecond, math.MaxInt32))
}
