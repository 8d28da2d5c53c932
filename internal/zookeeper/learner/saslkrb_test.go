package learner

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jcmturner/gokrb5/v8/config"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/zkraft/zkraft/internal/testing/krbtest"
	"github.com/zkraft/zkraft/internal/testing/zktest"
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
	followsSecured(t, e, lead, c, func(cfg *Config) { cfg.Kerberos = good })
	attempt := func(login *KerberosLogin) error {
		return securedAttempt(t, e, lead, login.Principal+" for "+login.ServicePrincipal, func(cfg *Config) { cfg.Kerberos = login })
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
	debugs := logs.FilterMessage("learner: quorum SASL authentication failed").Len()
	if warns != 1 || debugs < 2 {
		t.Errorf("%d warnings and %d repeats at debug level in 2s of retries, want 1 and several", warns, debugs)
	}
}
