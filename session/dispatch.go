package session

import (
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/zkraft/zkraft/internal/base/stagetrace"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// authenticatedForEnforcement reports whether the connection holds an
// identity of one of the schemes the server enforces (enforce.auth.schemes).
func (c *conn) authenticatedForEnforcement() bool {
	for _, id := range c.Ids() {
		if slices.Contains(c.srv.cfg.EnforceAuthSchemes, id.Scheme) {
			return true
		}
	}
	return false
}

// opKind says how the pipeline treats an opcode.
type opKind uint8

const (
	kindUnsupported opKind = iota
	kindRead               // answered from the local tree, in order
	kindWrite              // proposed through the ensemble
)

func kindOf(op jute.Op) opKind {
	switch op {
	case jute.OpCreate, jute.OpCreate2, jute.OpCreateContainer, jute.OpCreateTTL,
		jute.OpDelete, jute.OpSetData, jute.OpSetACL, jute.OpMulti, jute.OpCloseSession:
		return kindWrite
	case jute.OpExists, jute.OpGetData, jute.OpGetChildren, jute.OpGetChildren2, jute.OpGetACL,
		jute.OpPing, jute.OpSetWatches, jute.OpSetWatches2, jute.OpGetEphemerals,
		jute.OpGetAllChildrenNumber, jute.OpWhoAmI, jute.OpAddWatch, jute.OpCheckWatches,
		jute.OpRemoveWatches, jute.OpMultiRead:
		return kindRead
	}
	return kindUnsupported
}

// dispatch routes one request. body is the frame after the RequestHeader and
// is only valid until the next frame is read. It reports whether the
// connection stays open.
func (c *conn) dispatch(h jute.RequestHeader, body []byte) bool {
	if len(c.srv.cfg.EnforceAuthSchemes) > 0 && h.Type != jute.OpAuth && h.Type != jute.OpSASL && !c.authenticatedForEnforcement() {
		// ZooKeeper's AuthenticationHelper.enforceAuthentication: answer
		// SessionClosedRequireSaslAuth and close the connection.
		c.logger().Warn("closing a connection without the authentication the server enforces",
			zap.Strings("schemes", c.srv.cfg.EnforceAuthSchemes))
		c.inOrder(h, func() {
			c.out.reply(h.Xid, 0, jute.ErrSessionClosedNoSASL, nil)
			c.out.closeAfterFlush()
		})
		return false
	}
	if c.readOnly && (kindOf(h.Type) == kindWrite || h.Type == jute.OpSync || h.Type == jute.OpReconfig ||
		h.Type == jute.OpCheck || h.Type == jute.OpDeleteContainer) {
		if h.Type == jute.OpCloseSession {
			c.inOrder(h, func() { c.out.reply(h.Xid, c.srv.backend().LastZxid(), jute.OK, nil); c.out.closeAfterFlush() })
			return false
		}
		c.refuseReadOnly(h)
		return true
	}
	switch h.Type {
	case jute.OpAuth:
		return c.auth(h.Xid, body)
	case jute.OpSync:
		return c.sync(h, body)
	case jute.OpReconfig:
		return c.reconfig(h, body)
	case jute.OpSASL:
		return c.sasl(h.Xid, body)
	case jute.OpDeleteContainer:
		// Only the container reaper deletes containers. ZooKeeper 3.8
		// answers a client's request BadArguments and keeps the
		// connection (it reads the body as a bare path, which a jute
		// string is not); 3.9 would delete any childless node that is not
		// ephemeral, without an ACL check, which zkraft does not copy.
		c.inOrder(h, func() { c.out.reply(h.Xid, c.srv.backend().LastZxid(), jute.ErrBadArguments, nil) })
		return true
	}
	switch kindOf(h.Type) {
	case kindWrite:
		if !jute.WellFormed(h.Type, body) {
			c.malformed(h) // checked before proposing: garbage never reaches the log
			return true
		}
		c.propose(h, body)
		return true
	case kindRead:
		c.read(h, body)
		return true
	}
	// Unknown or refused opcode (check outside multi, createSession,
	// notification, ...): ZooKeeper answers Unimplemented and closes. (It
	// proposes a check outside multi and answers -101 or -103, but sends
	// nothing when the check passes; zkraft refuses it.)
	c.out.reply(h.Xid, c.srv.backend().LastZxid(), jute.ErrUnimplemented, nil)
	c.out.closeAfterFlush()
	return false
}

// propose turns a write request into a transaction and proposes it. Reads
// that arrive before it is applied park on it.
func (c *conn) propose(h jute.RequestHeader, body []byte) {
	if h.Type == jute.OpCloseSession {
		c.closing.Store(true)
	}
	stagetrace.Mark(stagetrace.Propose, 0)
	key := c.writeIdentities()
	pw := c.enqueueWrite(h)
	txn := &znode.Txn{
		Type:    h.Type,
		Session: c.sessionID,
		Time:    time.Now().UnixMilli(),
		IdsKey:  key,
		Req:     body, // Propose encodes it before returning, while the frame is still ours
	}
	if c.srv.audit != nil {
		pw.auditReq = append([]byte(nil), body...) // logged once applied
	}
	c.srv.backend().Propose(txn, pw)
}

// sync answers once this member has applied everything the leader had
// committed when the sync was issued: a barrier through the log.
func (c *conn) sync(h jute.RequestHeader, body []byte) bool {
	var req jute.PathRequest
	if !decodeBody(body, &req) {
		c.malformed(h)
		return true
	}
	pw := c.enqueueWrite(h)
	pw.syncPath = req.Path
	c.srv.backend().Barrier(pw)
	return true
}

// reconfig changes the ensemble's membership. It is refused with -123
// unless reconfigEnabled, and is unimplemented (-6) on a lone member, as
// on a standalone ZooKeeper.
func (c *conn) reconfig(h jute.RequestHeader, body []byte) bool {
	var req jute.ReconfigRequest
	if !decodeBody(body, &req) {
		c.malformed(h)
		return true
	}
	var code jute.ErrCode
	switch {
	case !c.srv.cfg.ReconfigEnabled:
		code = jute.ErrReconfigDisabled
	case c.srv.backend().Mode() == "standalone":
		code = jute.ErrUnimplemented
	default:
		c.srv.backend().Reconfig(&req, c.Ids(), c.enqueueWrite(h))
		return true
	}
	c.inOrder(h, func() { c.out.reply(h.Xid, c.srv.backend().LastZxid(), code, nil) })
	return true
}

// enqueueWrite records a request that completes through the log.
func (c *conn) enqueueWrite(h jute.RequestHeader) *pendingWrite {
	pw := &pendingWrite{c: c, xid: h.Xid, op: h.Type, start: time.Now()}
	c.mu.Lock()
	c.pending = append(c.pending, pw)
	c.mu.Unlock()
	if n := c.srv.stats.outstanding.Add(1); n > c.srv.stats.outstandingPeak.Load() {
		c.srv.stats.outstandingPeak.Store(n)
	}
	return pw
}

// read answers a read now if no write of this connection is in flight,
// otherwise parks it behind the last such write. With linearizable reads
// every read waits for a barrier through the log first, so it reflects
// every write acknowledged anywhere before it was issued.
//
// A parked read is answered by the FSM under the tree's write lock, which
// it cannot let go, so a read larger than maxParkedBody (a multiRead or a
// SetWatches, whose work grows with its size) is not parked: the reader
// waits for the writes before it (reading nothing more meanwhile, so the
// replies keep their order) and answers it itself, as any read.
func (c *conn) read(h jute.RequestHeader, body []byte) {
	large := len(body) > maxParkedBody
	if c.srv.cfg.LinearizableReads && h.Type != jute.OpPing {
		pw := c.enqueueWrite(h)
		pw.silent = true
		if !large {
			c.mu.Lock()
			pw.parked = append(pw.parked, parkedRead{h: h, body: append([]byte(nil), body...), start: pw.start})
			c.parked.Add(1)
			c.mu.Unlock()
			c.srv.backend().Barrier(pw)
			return
		}
		c.srv.backend().Barrier(pw)
		c.awaitWrites()
	} else {
		c.mu.Lock()
		if n := len(c.pending); n > 0 {
			if !large {
				last := c.pending[n-1]
				last.parked = append(last.parked, parkedRead{h: h, body: append([]byte(nil), body...), start: time.Now()})
				c.parked.Add(1)
				c.mu.Unlock()
				return
			}
			c.mu.Unlock()
			c.awaitWrites()
		} else {
			c.mu.Unlock()
		}
	}
	start := time.Now()
	be := c.srv.backend()
	t := be.RLockTree()
	c.answerRead(t, h, body, be)
	zxid := t.LastZxid()
	be.RUnlockTree()
	c.answered(start, zxid, h.Type, answeredRead)
}

// decodeBody decodes a request body. Like ZooKeeper's deserializer it
// ignores trailing bytes.
func decodeBody(body []byte, rec jute.Record) bool {
	return rec.Decode(jute.NewReader(body)) == nil
}

// malformed answers a request whose body does not decode: ZooKeeper replies
// MarshallingError (-5) and keeps the connection.
func (c *conn) malformed(h jute.RequestHeader) {
	c.inOrder(h, func() { c.out.reply(h.Xid, c.srv.backend().LastZxid(), jute.ErrMarshallingError, nil) })
}
