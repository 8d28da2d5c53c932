package zklearner

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/jcmturner/gokrb5/v8/config"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"

	"github.com/zkraft/zkraft/internal/krbtest"
	"github.com/zkraft/zkraft/internal/zktest"
)

// kerberosLogin loads a learner login for principal (no realm) from the
// key table at path.
func kerberosLogin(t *testing.T, kdc *krbtest.KDC, path, principal, service string) *KerberosLogin {
	t.Helper()
	kt, err := keytab.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	conf, err := config.Load(kdc.Conf)
	if err != nil {
		t.Fatal(err)
	}
	return &KerberosLogin{Principal: principal + "@" + krbtest.Realm, Keytab: kt, Krb5Conf: conf, ServicePrincipal: service}
}

// TestObserverFollowsQuorumKerberos: a ZooKeeper 3.8 ensemble whose
// quorum requires SASL GSSAPI (a real MIT KDC; its servers authenticate
// among themselves as zkquorum/127.0.0.1 with service principal
// zkquorum/_HOST) is followed by a learner logging in with that key
// table: a SNAP, then live writes, the trees equal. A principal the KDC
// does not know, one whose host the leader does not list, and a wrong
// service principal are errSASL; a learner retrying with a bad login
// warns once.
func TestObserverFollowsQuorumKerberos(t *testing.T) {
	kdc := krbtest.Start(t)
	e, q := zktest.StartQuorumKerberos(t, kdc)
	lead := e.Leader()
	c := connect(t, lead.ClientAddr)
	workload(t, c, 1)

	good := kerberosLogin(t, kdc, q.Keytab, zktest.QuorumKerberosPrincipal, zktest.QuorumKerberosServicePrincipal)
	l := New(Config{ID: int64(e.ObserverID), Servers: e.QuorumAddrs(), SyncTimeout: 5 * time.Second, Logger: zaptest.NewLogger(t),
		Kerberos: good, CheckDigests: true})
	runLearner(t, l)
	st := caughtUp(t, e, lead, l)
	if st.LastSync != SyncSnap {
		t.Errorf("first sync %s, want SNAP", st.LastSync)
	}
	sameTree(t, c, l)
	workload(t, c, 2)
	if _, err := c.Create("/krb", []byte("live"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	caughtUp(t, e, lead, l)
	sameTree(t, c, l)

	attempt := func(login *KerberosLogin) error {
		other := New(Config{ID: int64(e.ObserverID), Servers: e.QuorumAddrs(), Kerberos: login})
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		err := other.follow(ctx, lead.QuorumAddr)
		if other.Status().Syncs > 0 {
			t.Errorf("a learner as %s for %s synced", login.Principal, login.ServicePrincipal)
		}
		return err
	}
	gone := kdc.Keytab(t, "gone/127.0.0.1")
	kdc.Forget(t, "gone/127.0.0.1")
	otherHost := kdc.Keytab(t, "zkquorum/localhost")
	for _, tc := range []struct {
		name  string
		login *KerberosLogin
		want  string
	}{
		{"a principal the KDC does not know", kerberosLogin(t, kdc, gone, "gone/127.0.0.1", zktest.QuorumKerberosServicePrincipal), "login"},
		{"a learner host the leader does not list", kerberosLogin(t, kdc, otherHost, "zkquorum/localhost", zktest.QuorumKerberosServicePrincipal), "refused"},
		{"a service principal the leader has no key for", kerberosLogin(t, kdc, q.Keytab, zktest.QuorumKerberosPrincipal, "zkquorum/localhost"), "refused"},
		{"a service principal the KDC does not know", kerberosLogin(t, kdc, q.Keytab, zktest.QuorumKerberosPrincipal, "nosuch/_HOST"), "service ticket"},
	} {
		err := attempt(tc.login)
		if !errors.Is(err, errSASL) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want errSASL with %q", tc.name, err, tc.want)
		} else {
			t.Logf("%s: %v", tc.name, err)
		}
	}

	core, logs := observer.New(zapcore.DebugLevel)
	bad := New(Config{ID: int64(e.ObserverID), Servers: []string{lead.QuorumAddr}, Retry: 10 * time.Millisecond, Logger: zap.New(core),
		Kerberos: kerberosLogin(t, kdc, otherHost, "zkquorum/localhost", zktest.QuorumKerberosServicePrincipal)})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = bad.Run(ctx)
	warns := logs.FilterLevelExact(zapcore.WarnLevel).Len()
	debugs := logs.FilterMessage("zklearner: quorum SASL authentication failed").Len()
	if warns != 1 || debugs < 2 {
		t.Errorf("%d warnings and %d repeats at debug level in 2s of retries, want 1 and several", warns, debugs)
	}
}
