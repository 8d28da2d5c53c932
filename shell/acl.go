package shell

import (
	"fmt"
	"io"
	"strings"

	"github.com/go-zookeeper/zk"
)

// parseACL is zkCli's AclParser: comma-separated scheme:id:perms entries,
// split at the first and last colon (so digest:user:hash:perms works).
// Malformed entries and unknown permission letters are reported on errw and
// skipped, as zkCli does.
func parseACL(s string, errw io.Writer) []zk.ACL {
	var acl []zk.ACL
	for _, a := range strings.Split(s, ",") {
		first := strings.Index(a, ":")
		last := strings.LastIndex(a, ":")
		if first == -1 || first == last {
			fmt.Fprintf(errw, "%s does not have the form scheme:id:perm\n", a)
			continue
		}
		acl = append(acl, zk.ACL{
			Scheme: a[:first],
			ID:     a[first+1 : last],
			Perms:  parsePerms(a[last+1:], errw),
		})
	}
	return acl
}

// parsePerms turns "cdrwa" letters into a permission mask.
func parsePerms(s string, errw io.Writer) int32 {
	var p int32
	for _, c := range s {
		switch c {
		case 'r':
			p |= zk.PermRead
		case 'w':
			p |= zk.PermWrite
		case 'c':
			p |= zk.PermCreate
		case 'd':
			p |= zk.PermDelete
		case 'a':
			p |= zk.PermAdmin
		default:
			fmt.Fprintf(errw, "Unknown perm type: %c\n", c)
		}
	}
	return p
}

// permString is ZKUtil.getPermString: letters in the order c d r w a.
func permString(p int32) string {
	var b strings.Builder
	for _, x := range []struct {
		bit int32
		c   byte
	}{{zk.PermCreate, 'c'}, {zk.PermDelete, 'd'}, {zk.PermRead, 'r'}, {zk.PermWrite, 'w'}, {zk.PermAdmin, 'a'}} {
		if p&x.bit != 0 {
			b.WriteByte(x.c)
		}
	}
	return b.String()
}

// csvString is Jute's Utils.toCSVString: the quote prefix and the escapes
// of the characters CSV archives reserve.
func csvString(s string) string {
	var b strings.Builder
	b.WriteByte('\'')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case 0:
			b.WriteString("%00")
		case '\n':
			b.WriteString("%0A")
		case '\r':
			b.WriteString("%0D")
		case ',':
			b.WriteString("%2C")
		case '}':
			b.WriteString("%7D")
		case '%':
			b.WriteString("%25")
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// aclText is how getAcl prints one entry: the Jute toString of the Id (a
// CSV record ending in a newline) followed by ": " and the permissions.
func aclText(a zk.ACL) string {
	return csvString(a.Scheme) + "," + csvString(a.ID) + "\n: " + permString(a.Perms)
}

// aclJSON is the --output json form of an ACL entry.
type aclJSON struct {
	Scheme string `json:"scheme"`
	ID     string `json:"id"`
	Perms  string `json:"perms"`
}
