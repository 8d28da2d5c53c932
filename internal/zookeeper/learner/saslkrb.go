package learner

import (
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/jcmturner/gokrb5/v8/client"
	"github.com/jcmturner/gokrb5/v8/config"
	"github.com/jcmturner/gokrb5/v8/keytab"

	"github.com/zkraft/zkraft/internal/security/saslgssapi"
)

// KerberosLogin is a quorum learner's Kerberos login for quorum SASL
// with GSSAPI: the Krb5LoginModule of ZooKeeper's JAAS QuorumLearner
// section (useKeyTab, keyTab, principal) and the leader's service
// principal.
type KerberosLogin struct {
	// Principal is the learner's principal, "zkquorum/<learner host>@REALM";
	// ZooKeeper's leader admits it only if its host part is one of the
	// ensemble's server hosts as its configuration names them.
	Principal string
	// Keytab holds Principal's keys.
	Keytab *keytab.Keytab
	// Krb5Conf is the Kerberos configuration (the realm's KDCs), as
	// java.security.krb5.conf names it for ZooKeeper.
	Krb5Conf *config.Config
	// ServicePrincipal is ZooKeeper's quorum.auth.kerberos.servicePrincipal
	// (default "zkquorum/localhost"); "_HOST" in "service/_HOST" becomes
	// the host of the server the learner connects to, as its address
	// names it.
	ServicePrincipal string
}

// errKerberosPrincipal: Principal lacks a realm.
var errKerberosPrincipal = errors.New("learner: Kerberos principal must be name@REALM")

// kerberosClient returns the learner's Kerberos client, logged in: the
// same for every connection while its login holds (gokrb5 renews the
// ticket-granting ticket), a new login after a failed one.
func (l *Learner) kerberosClient() (*client.Client, error) {
	l.krbMu.Lock()
	defer l.krbMu.Unlock()
	if l.krb != nil {
		return l.krb, nil
	}
	k := l.cfg.Kerberos
	name, realm, ok := strings.Cut(k.Principal, "@")
	if !ok || name == "" || realm == "" {
		return nil, fmt.Errorf("%w: %q", errKerberosPrincipal, k.Principal)
	}
	cl := client.NewWithKeytab(name, realm, k.Keytab, k.Krb5Conf, client.DisablePAFXFAST(true))
	if err := cl.Login(); err != nil {
		return nil, fmt.Errorf("Kerberos login as %s: %w", k.Principal, err)
	}
	l.krb = cl
	return cl, nil
}

// dropKerberos ends the Kerberos login, if any, and its ticket renewal.
func (l *Learner) dropKerberos() {
	l.krbMu.Lock()
	defer l.krbMu.Unlock()
	if l.krb != nil {
		l.krb.Destroy()
		l.krb = nil
	}
}

// gssapiClient is quorum SASL with GSSAPI (Kerberos), as ZooKeeper's
// learner runs it when its QuorumLearner section logs in with Kerberos.
type gssapiClient struct {
	l         *Learner
	addr      string
	principal string
	service   string // the resolved service principal, for messages
	cl        *saslgssapi.Client
}

func newGSSAPIClient(l *Learner, addr string) *gssapiClient {
	return &gssapiClient{l: l, addr: addr, principal: l.cfg.Kerberos.Principal}
}

// start logs in (once), resolves the service principal for the server's
// host and returns the AP-REQ.
func (g *gssapiClient) start() ([]byte, error) {
	krb, err := g.l.kerberosClient()
	if err != nil {
		return nil, err
	}
	host, _, err := net.SplitHostPort(g.addr)
	if err != nil {
		host = g.addr
	}
	sp := g.l.cfg.Kerberos.ServicePrincipal
	if sp == "" {
		sp = "zkquorum/localhost"
	}
	svc, h, err := saslgssapi.ServicePrincipal(sp, host)
	if err != nil {
		return nil, err
	}
	g.service = svc + "/" + h
	// ZooKeeper's learner sends its principal as the authorization id,
	// which the leader requires to equal the authenticated principal.
	g.cl = saslgssapi.NewClient(krb, svc, h, g.principal)
	return g.cl.Start()
}

func (g *gssapiClient) next(ch []byte) ([]byte, error) { return g.cl.Next(ch) }

func (g *gssapiClient) finish([]byte) error {
	if !g.cl.Complete() {
		return errors.New("the leader reported SUCCESS before the GSSAPI exchange ended")
	}
	return nil
}

func (g *gssapiClient) refused() string {
	return fmt.Sprintf("the leader refused Kerberos principal %s for service %s (its host part must be one of the ensemble's server hosts as the leader's zoo.cfg names them; check quorum.auth.kerberos.servicePrincipal and the leader's QuorumServer section)", g.principal, g.service)
}
