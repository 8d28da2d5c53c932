package session

import (
	"bufio"
	"crypto/rand"
	"crypto/subtle"
	"strconv"
	"time"

	"go.uber.org/zap"

	"github.com/zkraft/zkraft/backend"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// passwdLen is the session password length ZooKeeper clients expect.
const passwdLen = 16

// handshake reads the first frame of a connection: a four-letter word or a
// ConnectRequest. It reports whether the connection continues as a session.
func (c *conn) handshake(br *bufio.Reader) bool {
	head, err := br.Peek(4)
	if err != nil {
		return false
	}
	if h := c.srv.cfg.FourLetter; h != nil && lowerLetters(head) {
		if cmd := string(head); h.IsFourLetterWord(cmd) {
			_, _ = br.Discard(4)
			c.fourLetter(h, cmd)
			return false
		}
	}
	frame, err := jute.ReadFrame(br, nil, c.srv.cfg.MaxBuffer)
	if err != nil {
		if c.debugOn() {
			c.logger().Debug("bad handshake frame", zap.Error(err))
		}
		return false
	}
	c.srv.stats.packetsReceived.Add(1)
	var req jute.ConnectRequest
	if err := jute.Unmarshal(frame, &req); err != nil {
		if c.debugOn() {
			c.logger().Debug("bad ConnectRequest", zap.Error(err))
		}
		return false
	}
	c.dropsAtConnect = c.srv.drops.Load()
	c.settle(&req)
	if c.srv.cfg.LeaderServesNot && c.srv.backend().Mode() == "leader" {
		// leaderServes=no: ZooKeeper's leader has no server for clients and
		// closes the connection; the client tries its next address.
		c.logger().Info("refusing client: this member leads and leaderServes=no")
		return false
	}
	if last := c.srv.backend().LastZxid(); req.LastZxidSeen > last {
		// The client has seen a newer state than this member has: it must
		// go elsewhere. ZooKeeper closes without answering.
		c.logger().Info("refusing client ahead of this server",
			zap.Int64("clientZxid", req.LastZxidSeen), zap.Int64("serverZxid", last))
		return false
	}
	timeout := c.srv.cfg.negotiate(req.TimeOut)
	if !c.srv.backend().HasQuorum() {
		return c.readOnlyHandshake(&req, timeout)
	}
	if req.SessionID == 0 {
		return c.createSession(&req, timeout)
	}
	return c.resumeSession(&req, timeout)
}

// handshakeSettle is how long a handshake may wait for the member to be
// able to take the client (settle).
const handshakeSettle = time.Second

// settle gives a member between leaders, or a commit or two behind a
// client that has seen more, up to handshakeSettle to catch up before the
// handshake goes on (and turns the client away if it still cannot take
// it). Elections here take a few hundred milliseconds, and right after one
// the new leader applies the old term's last entries only once it commits
// one of its own; a client turned away in that moment backs off before it
// tries again (go-zookeeper a second), so waiting is the faster answer.
// ZooKeeper turns such clients away at once; to them the wait is only a
// slower handshake.
func (c *conn) settle(req *jute.ConnectRequest) {
	deadline := time.Now().Add(handshakeSettle)
	// Backing off keeps a reconnect storm during an election (thousands of
	// handshakes waiting) from becoming a storm of timer wake-ups.
	pause := 5 * time.Millisecond
	for {
		served := c.srv.backend().HasQuorum() || (c.srv.cfg.ReadOnlyMode && req.ReadOnly)
		if served && req.LastZxidSeen <= c.srv.backend().LastZxid() {
			return
		}
		if time.Now().After(deadline) {
			return
		}
		select {
		case <-c.srv.closed:
			return
		case <-time.After(pause):
		}
		pause = min(2*pause, 50*time.Millisecond)
	}
}

func (c *conn) createSession(req *jute.ConnectRequest, timeout int32) bool {
	passwd := make([]byte, passwdLen)
	if _, err := rand.Read(passwd); err != nil {
		c.logger().Error("no randomness for a session password", zap.Error(err))
		return false
	}
	for attempt := 0; attempt < 8; attempt++ {
		id := c.srv.newSessionID()
		res, err := c.srv.backend().ProposeWait(&znode.Txn{
			Type: jute.OpCreateSession, Session: id, Time: time.Now().UnixMilli(),
			Timeout: timeout, Passwd: passwd,
		})
		if err != nil {
			c.logger().Warn("createSession not committed", zap.Error(err))
			return false
		}
		if res.Err != jute.OK {
			c.srv.skipAfterCollision() // a live session holds the id
			continue
		}
		// The password is the one the tree holds: this one, unless the
		// backend's ensemble makes its own (ZooKeeper's, which every
		// ZooKeeper server derives from the id).
		t := c.srv.backend().RLockTree()
		if info, ok := t.Session(id); ok {
			passwd = info.Passwd
		}
		c.srv.backend().RUnlockTree()
		if !c.srv.bind(c, id, timeout, false, false) {
			return false
		}
		c.connected(req, passwd)
		if c.debugOn() {
			c.logger().Debug("session created", zap.String("session", hexID(id)), zap.Int32("timeout", timeout))
		}
		return true
	}
	return false
}

func (c *conn) resumeSession(req *jute.ConnectRequest, timeout int32) bool {
	t := c.srv.backend().RLockTree()
	info, ok := t.Session(req.SessionID)
	c.srv.backend().RUnlockTree()
	local := ok
	rv, revalidates := c.srv.backend().(backend.Revalidator)
	if !ok && revalidates {
		// Created elsewhere and not applied here yet, maybe: the
		// ensemble's leader knows.
		info.Passwd, ok = rv.SessionPasswd(req.SessionID), true
	}
	if ok && subtle.ConstantTimeCompare(info.Passwd, req.Passwd) == 1 {
		if revalidates {
			valid, err := rv.Revalidate(req.SessionID, timeout)
			if err != nil {
				c.logger().Info("could not revalidate a session; closing", zap.String("session", hexID(req.SessionID)), zap.Error(err))
				return false
			}
			ok = valid
		}
	} else {
		ok = false
	}
	if !ok {
		c.expired(req)
		return false
	}
	if !c.srv.bind(c, req.SessionID, timeout, false, true) {
		return false
	}
	if local && !c.srv.sessionInTree(req.SessionID) {
		// Closed or expired after the check above and before bind made
		// c findable: sessionClosed ran then and did not see c. Bound
		// first and checked after, c is either seen here or closed by
		// sessionClosed, never left serving a dead session (its client
		// pinging on, unaware that its ephemerals are gone).
		c.logger().Info("session closed while its client resumed it", zap.String("session", hexID(req.SessionID)))
		c.expired(req)
		return false
	}
	c.srv.backend().TouchSession(c.sessionID)
	c.connected(req, info.Passwd)
	return true
}

// expired answers a resume as ZooKeeper answers one of an unknown or
// expired session, or with a wrong password (the client cannot tell
// them apart): timeout 0, session 0, a zero password, then close.
func (c *conn) expired(req *jute.ConnectRequest) {
	c.out.record(&jute.ConnectResponse{
		Passwd: make([]byte, passwdLen), HasReadOnly: req.HasReadOnly,
	})
	c.out.closeAfterFlush()
}

// sessionInTree reports whether session id is open in the local tree.
func (s *Server) sessionInTree(id int64) bool {
	t := s.backend().RLockTree()
	_, ok := t.Session(id)
	s.backend().RUnlockTree()
	return ok
}

// connected sends the ConnectResponse of an open session. The reader
// writes it itself when the client has sent nothing after its connect
// request (endHold), as it writes a lone read's reply.
func (c *conn) connected(req *jute.ConnectRequest, passwd []byte) {
	c.out.hold()
	c.out.record(&jute.ConnectResponse{
		TimeOut: c.timeout, SessionID: c.sessionID, Passwd: passwd, HasReadOnly: req.HasReadOnly,
	})
	c.countSent()
	c.out.endHold(c.fr.buffered())
}

// hexID formats a session id as ZooKeeper logs it.
func hexID(id int64) string { return "0x" + strconv.FormatUint(uint64(id), 16) }
