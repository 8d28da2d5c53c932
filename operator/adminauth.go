package operator

import (
	"net/http"

	"github.com/zkraft/zkraft/acl"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// Authorize checks an AdminServer request's credentials for a command
// that reads or changes everything (snapshot, a migration's cutover):
// the Authorization header's identities ("digest user:password", or
// "ip") must hold every permission on "/", as the super user does.
// ZooKeeper's checkACL with Perms.ALL passes on any one of them, so with
// "/" at world:anyone:r anyone could download every node and ACL digest;
// skipACL does not open it either. It returns 0, or the HTTP status and
// ZooKeeper's message to answer with.
func (a *Admin) Authorize(r *http.Request) (status int, msg string) {
	s := newView(a.srv)
	authInfo := r.Header.Get("Authorization")
	if authInfo == "" {
		return http.StatusUnauthorized, "Auth info is missing for the command"
	}
	ids, ok := s.adminIdentities(r, authInfo)
	if !ok {
		s.srv.CountAuthFailure()
		return http.StatusUnauthorized, "Not authenticated"
	}
	tree := s.node.RLockTree()
	rootACL, _ := tree.NodeACL(znode.RootPath)
	s.node.RUnlockTree()
	if acl.Granted(rootACL, ids)&jute.PermAll != jute.PermAll {
		return http.StatusForbidden, "Not authorized"
	}
	return 0, ""
}

// AuthorizeSuper checks an AdminServer request's credentials for a
// command that changes what the server is (a live migration's cutover):
// only the super user (superDigest) may, whatever "/"'s ACL grants (a
// ZooKeeper ensemble's "/" is often open to anyone).
func (a *Admin) AuthorizeSuper(r *http.Request) (status int, msg string) {
	s := newView(a.srv)
	if s.cfg.SuperDigest == "" {
		return http.StatusForbidden, "this command needs the super user, and no superDigest is set"
	}
	authInfo := r.Header.Get("Authorization")
	if authInfo == "" {
		return http.StatusUnauthorized, "Auth info is missing for the command"
	}
	ids, ok := s.adminIdentities(r, authInfo)
	if !ok {
		s.srv.CountAuthFailure()
		return http.StatusUnauthorized, "Not authenticated"
	}
	for _, id := range ids {
		if id.Scheme == "super" {
			return 0, ""
		}
	}
	return http.StatusForbidden, "Not authorized: only the super user may"
}
