package session

import (
	"crypto/rand"
	"crypto/subtle"
	"time"

	"github.com/zkraft/zkraft/jute"
	"go.uber.org/zap"
)

// Read-only mode (ZooKeeper's readonlymode.enabled). A member without a
// quorum cannot create sessions or apply writes. If read-only mode is on,
// it still accepts clients that set the readOnly flag: they get a session
// answered with readOnly=true, reads from the local tree, and NotReadOnly
// (-119) for writes and sync. Clients without the flag are turned away so
// they try another member. When the quorum state changes, the connections
// that no longer fit it are closed and their clients reconnect.

// readOnlyHandshake opens a read-only session on a member without quorum.
// A known session resumes read-only; otherwise a local session is made up
// (it is not replicated and ends with the connection).
func (c *conn) readOnlyHandshake(req *jute.ConnectRequest, timeout int32) bool {
	if !c.srv.cfg.ReadOnlyMode || !req.ReadOnly {
		if c.debugOn() {
			c.logger().Debug("no quorum: refusing connection")
		}
		return false
	}
	passwd := make([]byte, passwdLen)
	id := int64(0)
	if req.SessionID != 0 {
		t := c.srv.backend().RLockTree()
		info, ok := t.Session(req.SessionID)
		c.srv.backend().RUnlockTree()
		if ok && subtle.ConstantTimeCompare(info.Passwd, req.Passwd) == 1 {
			id, passwd = req.SessionID, info.Passwd
		}
	}
	if id == 0 {
		if _, err := rand.Read(passwd); err != nil {
			return false
		}
		id = c.srv.newSessionID()
	}
	if !c.srv.bind(c, id, timeout, true, false) {
		return false
	}
	c.out.record(&jute.ConnectResponse{
		TimeOut: timeout, SessionID: id, Passwd: passwd, ReadOnly: true, HasReadOnly: req.HasReadOnly,
	})
	c.countSent()
	return true
}

// refuseReadOnly answers a write-class request on a read-only connection.
func (c *conn) refuseReadOnly(h jute.RequestHeader) {
	c.inOrder(h, func() { c.out.reply(h.Xid, c.srv.backend().LastZxid(), jute.ErrNotReadOnly, nil) })
}

// watchQuorum closes connections that no longer fit the member's quorum
// state: all read-write ones when the quorum is lost (their clients move to
// the majority), all read-only ones when it returns (their clients come
// back read-write); and, with leaderServes=no, every client connection
// when this member becomes leader.
//
// A change counts once two samples in a row (half a tick apart) see it:
// the election after a leader's death takes tens of milliseconds here, and
// a member that happened to sample inside it closed every one of its
// clients' connections, turning one member's loss into a reconnect storm
// of the whole ensemble. A quorum lost for good is still acted on within a
// tick.
func (s *Server) watchQuorum() {
	interval := s.cfg.TickTime / 2
	if interval < 20*time.Millisecond {
		interval = 20 * time.Millisecond
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	had, led := true, false
	seen := 0 // samples in a row that differ from had
	for {
		select {
		case <-s.closed:
			return
		case <-tick.C:
		}
		s.closeSilentReadOnly()
		if s.cfg.LeaderServesNot {
			leads := s.backend().Mode() == "leader"
			switch {
			case leads && !led:
				s.DropClients("this member became leader and leaderServes=no")
			case leads && s.boundSessions() > 0:
				// Leadership lost and won back between two samples: the
				// sessions bound in between were never dropped.
				s.DropClients("sessions bound on this leader (leaderServes=no)")
			}
			led = leads
		}
		has := s.backend().HasQuorum()
		if has == had {
			seen = 0
			continue
		}
		if seen++; seen < quorumSamples {
			continue
		}
		had, seen = has, 0
		s.log.Info("quorum state changed")
		s.mu.Lock()
		for c := range s.allConnsLocked() {
			if sess := c.session(); sess.id != 0 && sess.readOnly == has {
				c.out.kill()
			}
		}
		s.mu.Unlock()
	}
}

// closeSilentReadOnly closes each read-only connection whose client sent
// nothing for its session timeout. No expiry closes them: a member
// without a quorum cannot expire a session through the log, and a session
// made up for a read-only client lives only in its connection. A client
// that died without closing its socket would otherwise hold the
// connection, its slot and its watches until the quorum came back, where
// ZooKeeper's read-only server expires such a session and closes its
// connection. A live client pings every third of its timeout.
func (s *Server) closeSilentReadOnly() {
	now := time.Now().UnixNano()
	var closed []*conn
	s.mu.Lock()
	for c := range s.readOnlyConns {
		if silent := now - c.stats.heard.Load(); silent > int64(c.session().timeout)*int64(time.Millisecond) {
			delete(s.readOnlyConns, c) // once: forget deletes it too
			c.out.kill()
			closed = append(closed, c)
		}
	}
	s.mu.Unlock()
	for _, c := range closed { // logged off the server's lock
		c.logger().Info("closed a read-only connection: nothing heard for its session timeout",
			zap.String("session", hexID(c.session().id)))
	}
}

// boundSessions is how many connections hold a session here.
func (s *Server) boundSessions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.bySession)
}

// quorumSamples is how many samples in a row must see a change of the
// quorum state before connections are closed for it.
const quorumSamples = 2

// quorumLost closes every read-write connection at once, without
// watchQuorum's samples: the member led, and lost contact with a quorum
// (ensemble/quorum.go). A leader elsewhere may change the tree from now
// on, and a ZooKeeper leader drops its clients then too. Read-only
// sessions stay (a read-only client asked for no more).
func (s *Server) quorumLost() {
	s.log.Info("closing read-write client connections: this leader lost its quorum")
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.allConnsLocked() {
		if sess := c.session(); sess.id != 0 && !sess.readOnly {
			c.out.kill()
		}
	}
}

// DropClients closes every client connection with a session (they
// reconnect to another member, or here, with their session).
func (s *Server) DropClients(why string) {
	s.log.Info("closing client connections", zap.String("why", why))
	s.mu.Lock()
	defer s.mu.Unlock()
	s.drops.Add(1)
	for c := range s.allConnsLocked() {
		if c.session().id != 0 {
			c.out.kill()
		}
	}
}
