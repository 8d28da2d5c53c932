package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/zkraft/zkraft/internal/zklearner"
)

// quorumSASL is ZooKeeper's quorum.auth.* as a following observer uses
// them: the learner side of quorum SASL.
type quorumSASL struct {
	Enable         bool   // quorum.auth.enableSasl
	LearnerRequire bool   // quorum.auth.learnerRequireSasl
	LearnerContext string // quorum.auth.learner.saslLoginContext ("QuorumLearner")
}

// errNoJAASSection: the JAAS file has no section of the name looked for.
var errNoJAASSection = errors.New("jaas")

// quorumLearnerLogin is the login a following observer gives ZooKeeper's
// leader: with quorum.auth.enableSasl and learnerRequireSasl, the
// DigestLoginModule username and password of the JAAS file's
// QuorumLearner section; otherwise none, as a ZooKeeper learner without
// learnerRequireSasl skips the exchange. Kerberos (Krb5LoginModule, SASL
// GSSAPI) is refused: only DIGEST-MD5 is spoken.
func quorumLearnerLogin(st settings) (*zklearner.DigestCredentials, error) {
	q := st.QuorumSASL
	if !q.Enable || !q.LearnerRequire {
		return nil, nil
	}
	if st.JAASConfig == "" {
		return nil, fmt.Errorf("quorum.auth.learnerRequireSasl=true: --jaas-config must name the JAAS file with the %s section (ZooKeeper's -Djava.security.auth.login.config)", q.LearnerContext)
	}
	text, err := os.ReadFile(st.JAASConfig)
	if err != nil {
		return nil, fmt.Errorf("quorum SASL: jaas: %w", err)
	}
	sections, err := parseJAAS(string(text))
	if err != nil {
		return nil, fmt.Errorf("quorum SASL: %s: %w", st.JAASConfig, err)
	}
	entries, ok := sections[q.LearnerContext]
	if !ok {
		return nil, fmt.Errorf("quorum SASL: %w: %s: no %q section (quorum.auth.learner.saslLoginContext)", errNoJAASSection, st.JAASConfig, q.LearnerContext)
	}
	var cred *zklearner.DigestCredentials
	for _, e := range entries {
		switch e.module {
		case digestLoginModule:
			user, uok := e.options["username"]
			password, pok := e.options["password"]
			if !uok || !pok {
				return nil, fmt.Errorf("quorum SASL: %s: section %q: %s needs username and password", st.JAASConfig, q.LearnerContext, digestLoginModule)
			}
			cred = &zklearner.DigestCredentials{User: user, Password: password}
		case krb5LoginModule:
			return nil, fmt.Errorf("quorum SASL: %s: section %q: Kerberos (GSSAPI) for the quorum is not supported: give the learner a %s (DIGEST-MD5)", st.JAASConfig, q.LearnerContext, digestLoginModule)
		default:
			return nil, fmt.Errorf("quorum SASL: %s: section %q: login module %s is not supported (%s for DIGEST-MD5)", st.JAASConfig, q.LearnerContext, e.module, digestLoginModule)
		}
	}
	if cred == nil {
		return nil, fmt.Errorf("quorum SASL: %s: section %q has no %s", st.JAASConfig, q.LearnerContext, digestLoginModule)
	}
	return cred, nil
}

// memberQuorumSASLWarning is the warning for a member of a zkraft
// ensemble whose zoo.cfg asks for ZooKeeper's quorum SASL (as an
// observer's does after its cutover): zkraft's members do not speak it,
// so it authenticates nothing between them; sslQuorum does. "" when
// that does not apply.
func memberQuorumSASLWarning(st settings) string {
	if !st.QuorumSASL.Enable || st.SSLQuorum || len(st.Members) < 2 {
		return ""
	}
	return "quorum.auth.enableSasl is set, but zkraft's members do not authenticate each other with SASL:" +
		" their connections are plain and unauthenticated; set sslQuorum=true with ssl.quorum.* stores to secure them"
}
