package main

import (
	"fmt"
	"os"
	"strings"
	"unicode"
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

// saslUsers loads the SASL DIGEST-MD5 users of section (ZooKeeper's
// "Server", zookeeper.sasl.serverconfig) of the JAAS file at path: the
// user_<name>="<password>" options of its DigestLoginModule.
func saslUsers(path, section string) (map[string]string, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("jaas: %w", err)
	}
	sections, err := parseJAAS(string(text))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	entries, ok := sections[section]
	if !ok {
		return nil, fmt.Errorf("%s: no %q section", path, section)
	}
	users := map[string]string{}
	for _, e := range entries {
		if e.module != digestLoginModule {
			return nil, fmt.Errorf("%s: section %q: login module %s is not supported (only %s, SASL DIGEST-MD5)", path, section, e.module, digestLoginModule)
		}
		for k, v := range e.options {
			if name, ok := strings.CutPrefix(k, "user_"); ok {
				users[name] = v
			}
		}
	}
	if len(users) == 0 {
		return nil, fmt.Errorf("%s: section %q defines no user_<name> option", path, section)
	}
	return users, nil
}
