package server

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/jcmturner/gokrb5/v8/config"
	"github.com/jcmturner/gokrb5/v8/keytab"

	"github.com/zkraft/zkraft/internal/zookeeper/learner"
)

// quorumSASL is ZooKeeper's quorum.auth.* as a following observer uses
// them: the learner side of quorum SASL.
type quorumSASL struct {
	Enable           bool   // quorum.auth.enableSasl
	LearnerRequire   bool   // quorum.auth.learnerRequireSasl
	LearnerContext   string // quorum.auth.learner.saslLoginContext ("QuorumLearner")
	ServicePrincipal string // quorum.auth.kerberos.servicePrincipal ("zkquorum/localhost")
}

// DefaultKrb5Conf is where the Kerberos configuration is read without
// --krb5-conf, as Java reads it without java.security.krb5.conf.
const DefaultKrb5Conf = "/etc/krb5.conf"

// errNoJAASSection: the JAAS file has no section of the name looked for.
var errNoJAASSection = errors.New("jaas")

// learnerLogin is how a following observer authenticates to ZooKeeper's
// leader: DIGEST-MD5 credentials or a Kerberos login; neither when the
// ensemble's learners skip quorum SASL.
type learnerLogin struct {
	digest   *learner.DigestCredentials
	kerberos *learner.KerberosLogin
}

// quorumLearnerLogin is the login a following observer gives ZooKeeper's
// leader: with quorum.auth.enableSasl and learnerRequireSasl, the JAAS
// file's QuorumLearner section: a DigestLoginModule's username and
// password (SASL DIGEST-MD5), or a Krb5LoginModule's key table and
// principal (SASL GSSAPI, with the Kerberos configuration of --krb5-conf
// and quorum.auth.kerberos.servicePrincipal); otherwise none, as a
// ZooKeeper learner without learnerRequireSasl skips the exchange.
func quorumLearnerLogin(st Config) (learnerLogin, error) {
	q := st.QuorumSASL
	if !q.Enable || !q.LearnerRequire {
		return learnerLogin{}, nil
	}
	if st.JAASConfig == "" {
		return learnerLogin{}, fmt.Errorf("quorum.auth.learnerRequireSasl=true: --jaas-config must name the JAAS file with the %s section (ZooKeeper's -Djava.security.auth.login.config)", q.LearnerContext)
	}
	text, err := os.ReadFile(st.JAASConfig)
	if err != nil {
		return learnerLogin{}, fmt.Errorf("quorum SASL: jaas: %w", err)
	}
	sections, err := parseJAAS(string(text))
	if err != nil {
		return learnerLogin{}, fmt.Errorf("quorum SASL: %s: %w", st.JAASConfig, err)
	}
	entries, ok := sections[q.LearnerContext]
	if !ok {
		return learnerLogin{}, fmt.Errorf("quorum SASL: %w: %s: no %q section (quorum.auth.learner.saslLoginContext)", errNoJAASSection, st.JAASConfig, q.LearnerContext)
	}
	var login learnerLogin
	for _, e := range entries {
		switch e.module {
		case digestLoginModule:
			user, uok := e.options["username"]
			password, pok := e.options["password"]
			if !uok || !pok {
				return learnerLogin{}, fmt.Errorf("quorum SASL: %s: section %q: %s needs username and password", st.JAASConfig, q.LearnerContext, digestLoginModule)
			}
			login.digest = &learner.DigestCredentials{User: user, Password: password}
		case krb5LoginModule:
			if login.kerberos, err = quorumKerberos(st, e.options); err != nil {
				return learnerLogin{}, fmt.Errorf("quorum SASL: %s: section %q: %w", st.JAASConfig, q.LearnerContext, err)
			}
		default:
			return learnerLogin{}, fmt.Errorf("quorum SASL: %s: section %q: login module %s is not supported (%s for DIGEST-MD5, %s for Kerberos)", st.JAASConfig, q.LearnerContext, e.module, digestLoginModule, krb5LoginModule)
		}
	}
	if login.digest != nil && login.kerberos != nil {
		// ZooKeeper's learner takes GSSAPI whenever its subject has a
		// Kerberos principal; saying so beats a silent choice.
		return learnerLogin{}, fmt.Errorf("quorum SASL: %s: section %q has both %s and %s: keep one", st.JAASConfig, q.LearnerContext, digestLoginModule, krb5LoginModule)
	}
	if login.digest == nil && login.kerberos == nil {
		return learnerLogin{}, fmt.Errorf("quorum SASL: %s: section %q has no %s or %s", st.JAASConfig, q.LearnerContext, digestLoginModule, krb5LoginModule)
	}
	return login, nil
}

// quorumKerberos reads a QuorumLearner section's Krb5LoginModule: the
// learner logs in from keyTab (useKeyTab=true) as principal
// ("zkquorum/<this host>@REALM"), with the Kerberos configuration of
// --krb5-conf.
func quorumKerberos(st Config, opts map[string]string) (*learner.KerberosLogin, error) {
	if opts["useKeyTab"] != "true" || opts["keyTab"] == "" {
		return nil, fmt.Errorf("%s: only useKeyTab=true with a keyTab is supported (no ticket cache)", krb5LoginModule)
	}
	principal := opts["principal"]
	if name, realm, ok := strings.Cut(principal, "@"); !ok || name == "" || realm == "" {
		return nil, fmt.Errorf("%s: principal %q: want zkquorum/host@REALM", krb5LoginModule, principal)
	}
	kt, err := keytab.Load(opts["keyTab"])
	if err != nil {
		return nil, fmt.Errorf("%s: keyTab %s: %w", krb5LoginModule, opts["keyTab"], err)
	}
	confPath := st.Krb5Conf
	if confPath == "" {
		confPath = DefaultKrb5Conf
	}
	conf, err := config.Load(confPath)
	if err != nil {
		return nil, fmt.Errorf("%s: the Kerberos configuration %s (--krb5-conf, as -Djava.security.krb5.conf): %w", krb5LoginModule, confPath, err)
	}
	return &learner.KerberosLogin{Principal: principal, Keytab: kt, Krb5Conf: conf, ServicePrincipal: st.QuorumSASL.ServicePrincipal}, nil
}

// memberQuorumSASLWarning is the warning for a member of a zkraft
// ensemble whose zoo.cfg asks for ZooKeeper's quorum SASL (as an
// observer's does after its cutover): zkraft's members do not speak it,
// so it authenticates nothing between them; sslQuorum does. "" when
// that does not apply.
func memberQuorumSASLWarning(st Config) string {
	if !st.QuorumSASL.Enable || st.SSLQuorum || len(st.Members) < 2 {
		return ""
	}
	return "quorum.auth.enableSasl is set, but zkraft's members do not authenticate each other with SASL:" +
		" their connections are plain and unauthenticated; set sslQuorum=true with ssl.quorum.* stores to secure them"
}
