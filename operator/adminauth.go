package operator

import (
	"net/http"

	"github.com/zkraft/zkraft/acl"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// Authorize checks an AdminServer request's credentials for a command
// that reads or changes everything (snapshot): the Authorization
// header's identities ("digest user:password", or "ip") must hold every
// permission on "/", as the super user does. ZooKeeper's checkACL with
// Perms.ALL passes on any one of them, so with "/" at world:anyone:r
// anyone could download every node and ACL digest; skipACL does not
// open it either. It returns 0, or the HTTP status and ZooKeeper's
// message to answer with.
func (a *Admin) Authorize(r *http.Request) (status int, msg string) {
	s := newView(a.srv)
	ids, status, msg := s.requestIdentities(r)
	if status != 0 {
		return status, msg
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
	ids, status, msg := s.requestIdentities(r)
	if status != 0 {
		return status, msg
	}
	for _, id := range ids {
		if id.Scheme == "super" {
			return 0, ""
		}
	}
	return http.StatusForbidden, "Not authorized: only the super user may"
}

// requestIdentities are the identities of a request's Authorization
// header, or the status and ZooKeeper's message refusing it.
func (s view) requestIdentities(r *http.Request) (ids []jute.Id, status int, msg string) {
	authInfo := r.Header.Get("Authorization")
	if authInfo == "" {
		return nil, http.StatusUnauthorized, "Auth info is missing for the command"
	}
	ids, ok := s.adminIdentities(r, authInfo)
	if !ok {
		s.srv.CountAuthFailure()
		return nil, http.StatusUnauthorized, "Not authenticated"
	}
	return ids, 0, ""
}
