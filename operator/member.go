package operator

import (
	"github.com/zkraft/zkraft/backend"
	"github.com/zkraft/zkraft/session"
)

// memberSource is what memberOf needs of a session.Server (an interface so
// tests can stand in servers without a member).
type memberSource interface {
	Backend() backend.Backend
}

// memberOf is the Member the operator surfaces read for srv: its Backend,
// or a member that is not serving when it has none, so no command panics.
func memberOf(srv *session.Server) backend.Member { return memberFrom(srv) }

func memberFrom(src memberSource) backend.Member {
	if b := src.Backend(); b != nil {
		return b
	}
	return newAbsentMember()
}
