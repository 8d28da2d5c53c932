package server

import (
	"fmt"
	"strings"
)

// checkEnforcedAuth validates enforce.auth.*: schemes are required when it
// is on, and each must be one this server authenticates (ZooKeeper refuses
// to start otherwise, too).
func (s *Config) checkEnforcedAuth() error {
	if !s.EnforceAuth {
		s.EnforceSchemes = nil
		return nil
	}
	if len(s.EnforceSchemes) == 0 {
		return fmt.Errorf("zoo.cfg enforce.auth.enabled is true: enforce.auth.schemes must be configured")
	}
	for _, scheme := range s.EnforceSchemes {
		switch scheme {
		case "ip", "digest", "x509", "sasl":
		default:
			return fmt.Errorf("zoo.cfg enforce.auth.schemes: authentication scheme %q is not available", scheme)
		}
	}
	return nil
}

// applySecurityKey takes one of ZooKeeper's security keys: ssl.* for the
// secure client port (and the client port under client.portUnification),
// sslQuorum and ssl.quorum.* for member connections,
// the x509 and SASL super users and enforce.auth.* (in zoo.cfg with or
// without the "zookeeper." of their system properties). It reports whether
// key was one.
func (s *Config) applySecurityKey(key, v string) bool {
	t := &s.TLS
	if rest, ok := strings.CutPrefix(key, "ssl.quorum."); ok {
		t, key = &s.QuorumTLS, "ssl."+rest
	}
	switch key {
	case "ssl.keyStore.location":
		t.KeyStore = v
	case "ssl.keyStore.password":
		t.KeyStorePassword = v
	case "ssl.keyStore.type":
		t.KeyStoreType = v
	case "ssl.trustStore.location":
		t.TrustStore = v
	case "ssl.trustStore.password":
		t.TrustStorePassword = v
	case "ssl.trustStore.type":
		t.TrustStoreType = v
	case "ssl.clientAuth":
		t.ClientAuth = v
	case "ssl.protocol":
		t.Protocol = v
	case "ssl.enabledProtocols":
		t.EnabledProtocols = splitList(v)
	case "ssl.ciphersuites":
		t.CipherSuites = splitList(v)
	case "X509AuthenticationProvider.superUser":
		s.X509SuperUser = v
	case "ssl.hostnameVerification":
		// Checked only for members, which dial each other by host name;
		// ZooKeeper's check of clients' reverse-resolved names is not done.
		if t == &s.QuorumTLS {
			s.QuorumVerifyHost = v != "false"
		}
	case "client.portUnification":
		s.PortUnification = javaTrue(v)
	case "sslQuorum":
		s.SSLQuorum = javaTrue(v)
	case "superUser":
		s.SASLSuperUser = v
	case "enforce.auth.enabled":
		s.EnforceAuth = javaTrue(v)
	case "enforce.auth.schemes":
		s.EnforceSchemes = splitList(v)
	case "sessionRequireClientSASLAuth":
		if javaTrue(v) {
			s.EnforceAuth, s.EnforceSchemes = true, []string{"sasl"}
		}
	case "kerberos.removeHostFromPrincipal":
		s.KerberosRemoveHost = javaTrue(v)
	case "kerberos.removeRealmFromPrincipal":
		s.KerberosRemoveRealm = javaTrue(v)
	case "allowSaslFailedClients":
		s.AllowSASLFailed = javaTrue(v)
	case "sasl.serverconfig":
		s.JAASSection = v
	case "quorum.auth.enableSasl":
		s.QuorumSASL.Enable = javaTrue(v)
	case "quorum.auth.learnerRequireSasl":
		s.QuorumSASL.LearnerRequire = javaTrue(v)
	case "quorum.auth.learner.saslLoginContext":
		s.QuorumSASL.LearnerContext = v
	case "quorum.auth.kerberos.servicePrincipal":
		s.QuorumSASL.ServicePrincipal = v
	case "ssl.authProvider", "serverCnxnFactory", "clientCnxnSocket", "ssl.context.supplier.class":
		// ZooKeeper's checks of clients' host names and its Java class
		// choices: nothing to configure here.
	default:
		return false
	}
	return true
}

// javaTrue reads a zoo.cfg boolean as ZooKeeper does with Java's
// Boolean.parseBoolean: "true" in any case is true, anything else false.
func javaTrue(v string) bool { return strings.EqualFold(strings.TrimSpace(v), "true") }
