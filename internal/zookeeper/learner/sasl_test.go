package learner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"

	"github.com/zkraft/zkraft/internal/security/saslmd5"
	"github.com/zkraft/zkraft/internal/testing/zkleader"
	"github.com/zkraft/zkraft/internal/testing/zktest"
	"github.com/zkraft/zkraft/jute"
)

// authLeader is the leader's side of quorum SASL on a scripted
// connection (SaslQuorumAuthServer): it reads the learner's
// QuorumAuthPackets and answers with users' DIGEST-MD5 server; spoil
// changes the final token. It reports whether the learner authenticated,
// and a protocol error (it calls no t.Fatal: it also runs in goroutines).
func authLeader(f *zkleader.Conn, users map[string]string, spoil func([]byte) []byte) (ok bool, _ error) {
	s := &saslmd5.Server{Realm: "zk-quorum-sasl-md5", DigestURI: quorumDigestURI, Users: users}
	in := f.Reader()
	for {
		_ = f.NetConn().SetReadDeadline(time.Now().Add(10 * time.Second))
		magic, status, token := in.Long(), in.Int(), in.Buffer()
		if err := in.Err(); err != nil {
			return false, fmt.Errorf("reading the learner's auth packet: %w", err)
		}
		if magic != quorumAuthMagic || status != authInProgress {
			return false, fmt.Errorf("auth packet magic %#x status %d", magic, status)
		}
		rsp, done, err := s.Next(token)
		var w jute.Writer
		w.Long(quorumAuthMagic)
		switch {
		case err != nil:
			w.Int(authError)
			w.Buffer([]byte{})
		case done:
			w.Int(authSuccess)
			if spoil != nil {
				rsp = spoil(rsp)
			}
			w.Buffer(rsp)
		default:
			w.Int(authInProgress)
			w.Buffer(rsp)
		}
		_ = f.WriteRaw(w.Buf)
		if err != nil || done {
			return err == nil, nil
		}
	}
}

// TestQuorumSASLScripted: with Config.SASL the learner authenticates
// before OBSERVERINFO (an empty initial token, the digest response, the
// leader's rspauth checked) and then follows; a leader refusing the
// password, or proving it does not know it, is errSASL.
func TestQuorumSASLScripted(t *testing.T) {
	users := map[string]string{"learner": "s3cret"}
	ldr := zkleader.Listen(t)
	leader := func(spoil func([]byte) []byte) (*zkleader.Conn, bool, func()) {
		f := ldr.Accept()
		ok, err := authLeader(f, users, spoil)
		if err != nil {
			t.Fatal(err)
		}
		return f, ok, f.Close
	}
	follow := func(cred DigestCredentials) chan error {
		l := New(Config{ID: 4, Servers: []string{ldr.Addr()}, SASL: &cred})
		errc := make(chan error, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			errc <- l.follow(ctx, ldr.Addr())
		}()
		return errc
	}

	errc := follow(DigestCredentials{User: "learner", Password: "s3cret"})
	f, ok, done := leader(nil)
	if !ok {
		t.Fatal("the leader refused the right password")
	}
	f.Handshake()
	done()
	if err := <-errc; errors.Is(err, errSASL) {
		t.Fatalf("after authenticating: %v", err)
	}

	errc = follow(DigestCredentials{User: "learner", Password: "wrong"})
	_, ok, done = leader(nil)
	if ok {
		t.Fatal("the leader accepted a wrong password")
	}
	if err := <-errc; !errors.Is(err, errSASL) || !strings.Contains(err.Error(), `"learner"`) {
		t.Errorf("a refused password: %v, want errSASL naming the user", err)
	}
	done()

	errc = follow(DigestCredentials{User: "learner", Password: "s3cret"})
	_, _, done = leader(func([]byte) []byte { return []byte("rspauth=" + strings.Repeat("0", 32)) })
	if err := <-errc; !errors.Is(err, errSASL) || !strings.Contains(err.Error(), "rspauth") {
		t.Errorf("a leader with a wrong rspauth: %v, want errSASL", err)
	}
	done()
}

// TestQuorumSASLFailureLoggedOnce: Run retrying a leader that refuses the
// password warns once, not on every round.
func TestQuorumSASLFailureLoggedOnce(t *testing.T) {
	ldr := zkleader.Listen(t)
	go func() {
		for {
			nc, err := ldr.Listener().Accept()
			if err != nil {
				return
			}
			_, _ = authLeader(ldr.Conn(nc), map[string]string{"learner": "s3cret"}, nil)
			nc.Close()
		}
	}()
	loggedOnce(t, Config{ID: 4, Servers: []string{ldr.Addr()}, SASL: &DigestCredentials{User: "learner", Password: "nope"}},
		"learner: quorum SASL authentication failed")
}

// loggedOnce runs a learner of cfg for a second of retries against a
// leader that refuses it, and checks that it warned once and repeated
// msg at debug level after.
func loggedOnce(t *testing.T, cfg Config, msg string) {
	t.Helper()
	core, logs := observer.New(zapcore.DebugLevel)
	cfg.Retry, cfg.Logger = 10*time.Millisecond, zap.New(core)
	l := New(cfg)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = l.Run(ctx)
	warns := logs.FilterLevelExact(zapcore.WarnLevel).Len()
	debugs := logs.FilterMessage(msg).Len()
	if warns != 1 || debugs < 2 {
		t.Errorf("%d warnings and %d repeats at debug level in 1s of retries, want 1 and several", warns, debugs)
	}
}

// TestObserverFollowsQuorumSASL: a ZooKeeper 3.8 ensemble whose quorum
// requires SASL DIGEST-MD5 (quorum.auth.enableSasl, learnerRequireSasl,
// serverRequireSasl; its servers authenticate among themselves with the
// same JAAS file) is followed by a learner with the QuorumLearner
// credentials: a SNAP, then live writes. A wrong password is refused and
// reported as errSASL, and a learner without SASL is not let in.
func TestObserverFollowsQuorumSASL(t *testing.T) {
	e := zktest.StartQuorumSASL(t, zktest.QuorumSASLJAAS(t, "learner", "s3cret"))
	lead := e.Leader()
	c := connect(t, lead.ClientAddr)
	workload(t, c, 1)

	followsSecured(t, e, lead, c, func(cfg *Config) { cfg.SASL = &DigestCredentials{User: "learner", Password: "s3cret"} })
	attempt := func(cred *DigestCredentials) error {
		return securedAttempt(t, e, lead, fmt.Sprintf("%+v", cred), func(cfg *Config) { cfg.SASL = cred })
	}
	if err := attempt(&DigestCredentials{User: "learner", Password: "wrong"}); !errors.Is(err, errSASL) {
		t.Errorf("a wrong password: %v, want errSASL", err)
	} else {
		t.Logf("a wrong password: %v", err)
	}
	if err := attempt(nil); err == nil || errors.Is(err, errSASL) {
		t.Errorf("no SASL: %v, want the connection refused", err)
	}
}

// followsSecured: a learner that secure configures (its quorum
// authentication) syncs with the leader of e by SNAP and follows live
// writes, its tree equal to ZooKeeper's, as c reads it.
func followsSecured(t *testing.T, e *zktest.Ensemble, lead *zktest.Server, c *zk.Conn, secure func(*Config)) {
	t.Helper()
	cfg := Config{ID: int64(e.ObserverID), Servers: e.QuorumAddrs(), SyncTimeout: 5 * time.Second, Logger: zaptest.NewLogger(t),
		CheckDigests: true}
	secure(&cfg)
	l := New(cfg)
	runLearner(t, l)
	st := caughtUp(t, e, lead, l)
	if st.LastSync != SyncSnap {
		t.Errorf("first sync %s, want SNAP", st.LastSync)
	}
	sameTree(t, c, l)
	workload(t, c, 2)
	if _, err := c.Create("/secured", []byte("live"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	caughtUp(t, e, lead, l)
	sameTree(t, c, l)
}

// securedAttempt makes one attempt of a learner that secure configures
// (described by what) to follow lead, which must not sync it, and returns
// why it ended.
func securedAttempt(t *testing.T, e *zktest.Ensemble, lead *zktest.Server, what string, secure func(*Config)) error {
	t.Helper()
	cfg := Config{ID: int64(e.ObserverID), Servers: e.QuorumAddrs()}
	secure(&cfg)
	other := New(cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err := other.follow(ctx, lead.QuorumAddr)
	if other.Status().Syncs > 0 {
		t.Errorf("a learner with %s synced", what)
	}
	return err
}
