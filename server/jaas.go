package server

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"unicode"

	"github.com/jcmturner/gokrb5/v8/keytab"

	"github.com/zkraft/zkraft/session"
)

// digestLoginModule is ZooKeeper's JAAS login module for SASL DIGEST-MD5.
const digestLoginModule = "org.apache.zookeeper.server.auth.DigestLoginModule"

// jaasEntry is one login module line of a JAAS configuration section.
type jaasEntry struct {
	module  string
	flag    string
	options map[string]string
}

// parseJAAS reads a JAAS login configuration (the file ZooKeeper is given
// with -Djava.security.auth.login.config): sections `Name { module flag
// key="value" ...; ... };`, with // and /* */ comments.
func parseJAAS(text string) (map[string][]jaasEntry, error) {
	toks, err := jaasTokens(text)
	if err != nil {
		return nil, err
	}
	out := map[string][]jaasEntry{}
	i := 0
	next := func() string {
		if i >= len(toks) {
			return ""
		}
		i++
		return toks[i-1]
	}
	for i < len(toks) {
		name := next()
		if next() != "{" {
			return nil, fmt.Errorf("jaas: section %q: want {", name)
		}
		for {
			module := next()
			if module == "}" {
				break
			}
			if module == "" {
				return nil, fmt.Errorf("jaas: section %q is not closed", name)
			}
			e := jaasEntry{module: module, flag: next(), options: map[string]string{}}
			for {
				t := next()
				if t == ";" {
					break
				}
				if t == "" || t == "}" {
					return nil, fmt.Errorf("jaas: section %q: %s: want ;", name, module)
				}
				if next() != "=" {
					return nil, fmt.Errorf("jaas: section %q: option %s: want =", name, t)
				}
				e.options[t] = strings.Trim(next(), "\"")
			}
			out[name] = append(out[name], e)
		}
		if t := next(); t != ";" && t != "" {
			return nil, fmt.Errorf("jaas: section %q: want ; after }", name)
		} else if t == "" {
			break
		}
	}
	return out, nil
}

// jaasTokens splits a JAAS file into words, quoted strings (kept with
// their quotes) and the punctuation { } ; =.
func jaasTokens(s string) ([]string, error) {
	var toks []string
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case unicode.IsSpace(rune(c)):
			i++
		case strings.HasPrefix(s[i:], "//"):
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case strings.HasPrefix(s[i:], "/*"):
			end := strings.Index(s[i+2:], "*/")
			if end < 0 {
				return nil, fmt.Errorf("jaas: unterminated comment")
			}
			i += end + 4
		case strings.IndexByte("{};=", c) >= 0:
			toks = append(toks, string(c))
			i++
		case c == '"':
			end := strings.IndexByte(s[i+1:], '"')
			if end < 0 {
				return nil, fmt.Errorf("jaas: unterminated string")
			}
			toks = append(toks, s[i:i+end+2])
			i += end + 2
		default:
			j := i
			for j < len(s) && !unicode.IsSpace(rune(s[j])) && strings.IndexByte("{};=\"", s[j]) < 0 {
				j++
			}
			toks = append(toks, s[i:j])
			i = j
		}
	}
	return toks, nil
}

// saslServer is what a JAAS Server section configures: DIGEST-MD5 users,
// or a Kerberos service for GSSAPI.
type saslServer struct {
	users    map[string]string
	kerberos *session.Kerberos
}

// loadSASLServer reads section (ZooKeeper's "Server",
// zookeeper.sasl.serverconfig) of the JAAS file at path: the
// user_<name>="<password>" options of a DigestLoginModule (SASL
// DIGEST-MD5), or a Krb5LoginModule's keyTab and principal (SASL GSSAPI,
// Kerberos).
func loadSASLServer(path, section string) (saslServer, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return saslServer{}, fmt.Errorf("jaas: %w", err)
	}
	sections, err := parseJAAS(string(text))
	if err != nil {
		return saslServer{}, fmt.Errorf("%s: %w", path, err)
	}
	entries, ok := sections[section]
	if !ok {
		return saslServer{}, fmt.Errorf("%w: %s: no %q section", errNoJAASSection, path, section)
	}
	users := map[string]string{}
	var krb *session.Kerberos
	for _, e := range entries {
		switch e.module {
		case digestLoginModule:
			for k, v := range e.options {
				if name, ok := strings.CutPrefix(k, "user_"); ok {
					users[name] = v
				}
			}
		case krb5LoginModule:
			if krb, err = kerberosService(e.options); err != nil {
				return saslServer{}, fmt.Errorf("%s: section %q: %w", path, section, err)
			}
		default:
			return saslServer{}, fmt.Errorf("%s: section %q: login module %s is not supported (%s for SASL DIGEST-MD5, %s for Kerberos)", path, section, e.module, digestLoginModule, krb5LoginModule)
		}
	}
	if krb != nil {
		return saslServer{kerberos: krb}, nil
	}
	if len(users) == 0 {
		return saslServer{}, fmt.Errorf("%s: section %q defines no user_<name> option", path, section)
	}
	return saslServer{users: users}, nil
}

// krb5LoginModule is the JDK's Kerberos login module, which ZooKeeper's
// Server section names for SASL GSSAPI.
const krb5LoginModule = "com.sun.security.auth.module.Krb5LoginModule"

// kerberosService reads a Krb5LoginModule's options: the service keys
// come from keyTab (useKeyTab=true), the service principal from
// principal ("zookeeper/host@REALM").
func kerberosService(opts map[string]string) (*session.Kerberos, error) {
	if opts["useKeyTab"] != "true" || opts["keyTab"] == "" {
		return nil, errors.New("Krb5LoginModule: only useKeyTab=true with a keyTab is supported")
	}
	principal := opts["principal"]
	if !strings.Contains(principal, "@") {
		return nil, fmt.Errorf("Krb5LoginModule: principal %q: want service/host@REALM", principal)
	}
	kt, err := keytab.Load(opts["keyTab"])
	if err != nil {
		return nil, fmt.Errorf("Krb5LoginModule: keyTab %s: %w", opts["keyTab"], err)
	}
	return &session.Kerberos{Keytab: kt, Principal: principal}, nil
}
