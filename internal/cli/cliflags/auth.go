package cliflags

import (
	"fmt"
	"os"
	"strings"

	"github.com/urfave/cli/v2"
)

// AuthEnv names the environment variable that holds credentials, one
// scheme:credential a line, so that secrets stay out of ps and shell
// history. They are added before those of --auth.
const AuthEnv = "ZKRAFT_AUTH"

// Credential is one addauth: a scheme and its credential bytes.
type Credential struct {
	Scheme string
	Cred   string
}

// String prints the scheme alone: the credential is a secret.
func (c Credential) String() string { return c.Scheme + ":..." }

// schemes are the auth schemes a scheme:credential may name; anything
// else before the first colon is a digest user name (super:secret is the
// super user's digest credential).
var schemes = map[string]bool{"digest": true, "ip": true, "x509": true, "sasl": true}

// ParseCredential reads "scheme:credential" (digest:user:password,
// ip:10.0.0.1...). "user:password", whose first part names no scheme, is
// digest: the form `zkraft members --auth` always took.
func ParseCredential(s string) (Credential, error) {
	scheme, cred, ok := strings.Cut(s, ":")
	if !ok || scheme == "" {
		return Credential{}, fmt.Errorf("credential %q: want scheme:credential (digest:user:password)", redact(s))
	}
	if schemes[scheme] && (scheme != "digest" || strings.Contains(cred, ":")) {
		return Credential{Scheme: scheme, Cred: cred}, nil
	}
	return Credential{Scheme: "digest", Cred: s}, nil
}

// redact keeps what precedes the first colon of a credential.
func redact(s string) string {
	if i := strings.IndexByte(s, ':'); i >= 0 {
		return s[:i] + ":..."
	}
	if s == "" {
		return ""
	}
	return "..."
}

// authList is the value of --auth: every occurrence adds one credential
// (commas are not separators: a password may hold them).
type authList struct{ creds []string }

// Set adds one scheme:credential.
func (a *authList) Set(s string) error {
	if _, err := ParseCredential(s); err != nil {
		return err
	}
	a.creds = append(a.creds, s)
	return nil
}

// String hides the credentials (urfave prints defaults in --help).
func (a *authList) String() string { return "" }

// Auth is --auth scheme:credential, repeatable.
func Auth(usage string) cli.Flag {
	if usage == "" {
		usage = "add credentials: scheme:credential (digest:user:password; user:password alone is digest); repeatable"
	}
	return &cli.GenericFlag{Name: AuthName, Value: &authList{}, Usage: usage + "; also from $" + AuthEnv + ", one a line"}
}

// Credentials returns the credentials of $ZKRAFT_AUTH and then of --auth.
func Credentials(c *cli.Context) ([]Credential, error) {
	var lines []string
	for _, l := range strings.Split(os.Getenv(AuthEnv), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if a, ok := c.Generic(AuthName).(*authList); ok {
		lines = append(lines, a.creds...)
	}
	out := make([]Credential, 0, len(lines))
	for _, l := range lines {
		cr, err := ParseCredential(l)
		if err != nil {
			return nil, fmt.Errorf("$%s: %w", AuthEnv, err)
		}
		out = append(out, cr)
	}
	return out, nil
}
