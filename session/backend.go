package session

import (
	"go.uber.org/zap"

	"github.com/zkraft/zkraft/backend"
)

// backendRef boxes a Backend for an atomic pointer.
type backendRef struct{ backend.Backend }

// backend is the Backend served now. A request reads it once per use:
// across SwitchBackend, a request begun on the old backend completes
// there (SwitchBackend's caller drains them first).
func (s *Server) backend() backend.Backend { return s.be.Load().Backend }

// hooks are what the server asks its backend to call.
func (s *Server) hooks() backend.Hooks {
	return backend.Hooks{SessionClosed: s.sessionClosed, SessionMoved: s.sessionMoved, QuorumLost: s.quorumLost,
		TreeReplaced: func() { s.DropClients("a leader's snapshot replaced this member's tree") }}
}

// SwitchBackend makes b the backend served from now on, keeping every
// connection, its session and its watches: a live migration's cutover,
// from an observer of ZooKeeper to the new zkraft ensemble's member. The
// caller first stops the old backend taking requests and completes
// those it holds (b's tree holds the same sessions, and b uses the old
// backend's watch registry), and afterwards hands b the requests it
// held back. Each connection's identities, which writes name by key,
// must be in b's log: the caller proposes them (the old backend knows
// them).
func (s *Server) SwitchBackend(b backend.Backend) {
	b.SetHooks(s.hooks())
	s.be.Store(&backendRef{b})
	s.log.Info("serving a new backend", zap.String("mode", b.Mode()))
}
