// Package audit renders ZooKeeper's audit log events (audit.enable, ZooKeeper
// 3.6+): AuditEvent's tab-separated key=value layout and the helpers
// ZooKeeper uses to fill it (AuthUtil.getUsers, CreateMode names,
// ZKUtil.aclToString).
package audit

import (
	"strings"

	"go.uber.org/zap"

	"github.com/zkraft/zkraft/jute"
)

// LoggerName is the name of the logger audit events go to.
const LoggerName = "audit"

// Event is one audit event; empty fields are left out, as ZooKeeper leaves
// out nulls. Result is "success", "failure" or "invoked".
type Event struct {
	Session, User, IP, Operation, Znode, ZnodeType, ACL, Result string
}

// String is the event as ZooKeeper's AuditEvent.toString writes it:
// session, user, ip, operation, znode, znode_type, acl, then result.
func (e Event) String() string {
	var b strings.Builder
	for _, f := range [...][2]string{
		{"session", e.Session}, {"user", e.User}, {"ip", e.IP}, {"operation", e.Operation},
		{"znode", e.Znode}, {"znode_type", e.ZnodeType}, {"acl", e.ACL}, {"result", e.Result},
	} {
		if f[1] == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\t')
		}
		b.WriteString(f[0])
		b.WriteByte('=')
		b.WriteString(f[1])
	}
	return b.String()
}

// Log writes e to log: at error level for a failure, as ZooKeeper's
// Slf4jAuditLogger does, else at info.
func Log(log *zap.Logger, e Event) {
	if e.Result == "failure" {
		log.Error(e.String())
		return
	}
	log.Info(e.String())
}

// Result is "success" when ok, else "failure".
func Result(ok bool) string {
	if ok {
		return "success"
	}
	return "failure"
}

// Users is ZooKeeper's AuthUtil.getUsers: each identity's user name (the
// address for ip, the user before the colon for digest, the whole id for
// sasl and x509; none for super), comma-joined in the order given (the
// caller passes ZooKeeper's, its identity set's).
func Users(ids []jute.Id) string {
	var names []string
	for _, id := range ids {
		switch id.Scheme {
		case "ip", "sasl", "x509":
			names = append(names, id.ID)
		case "digest":
			user, _, _ := strings.Cut(id.ID, ":")
			names = append(names, user)
		}
	}
	return strings.Join(names, ",")
}

// CreateMode is CreateMode.fromFlag(flags).toString().toLowerCase().
func CreateMode(flags int32) string {
	switch flags {
	case jute.FlagPersistent:
		return "persistent"
	case jute.FlagEphemeral:
		return "ephemeral"
	case jute.FlagPersistentSequential:
		return "persistent_sequential"
	case jute.FlagEphemeralSequential:
		return "ephemeral_sequential"
	case jute.FlagContainer:
		return "container"
	case jute.FlagPersistentTTL:
		return "persistent_with_ttl"
	case jute.FlagPersistentSequentialTTL:
		return "persistent_sequential_with_ttl"
	}
	return ""
}

// ACLString is ZKUtil.aclToString: scheme:id:perms for each entry, with no
// separator between entries (as ZooKeeper writes it).
func ACLString(list []jute.ACL) string {
	var b strings.Builder
	for _, a := range list {
		b.WriteString(a.ID.Scheme)
		b.WriteByte(':')
		b.WriteString(a.ID.ID)
		b.WriteByte(':')
		for _, p := range [...]struct {
			bit int32
			c   byte
		}{{jute.PermCreate, 'c'}, {jute.PermDelete, 'd'}, {jute.PermRead, 'r'}, {jute.PermWrite, 'w'}, {jute.PermAdmin, 'a'}} {
			if a.Perms&p.bit != 0 {
				b.WriteByte(p.c)
			}
		}
	}
	return b.String()
}
