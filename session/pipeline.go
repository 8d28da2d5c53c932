package session

import (
	"time"

	"go.uber.org/zap"

	"github.com/zkraft/zkraft/acl"
	"github.com/zkraft/zkraft/backend/audit"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// pendingWrite is a proposed write awaiting its application, with the reads
// of the same connection that arrived after it.
type pendingWrite struct {
	c      *conn
	xid    int32
	op     jute.Op
	start  time.Time
	parked []parkedRead // guarded by c.mu
	// syncPath is the path echoed in a sync reply (op sync only).
	syncPath string
	// silent barriers only release their parked reads (linearizable reads).
	silent bool
	// auditReq is the request body, kept for the audit log when it is on.
	auditReq []byte
}

// Abandoned implements ensemble.Abandoner: once the connection is going
// away, its later writes must not reach the log.
func (p *pendingWrite) Abandoned() bool { return p.c.out.isDead() }

// Session is the session whose write or sync this is (a backend that
// forwards syncs names it to the leader).
func (p *pendingWrite) Session() int64 { return p.c.sessionID }

// parkedRead is a read waiting for the writes before it.
type parkedRead struct {
	h     jute.RequestHeader
	body  []byte
	start time.Time
	after func() // if set, run instead of answering a read (auth replies)
}

// Applied implements ensemble.Waiter. It runs on the FSM goroutine with the
// tree write-locked, right after the write and its watch events: the reply
// and then the parked reads are answered against exactly this state.
func (p *pendingWrite) Applied(res *znode.Result, t *znode.Tree) {
	c := p.c
	parked, drained := c.popPending(p)
	c.writeDone()
	if len(parked) > 0 || drained {
		// After the parked reads are answered: a reader paused for
		// them, or waiting for the last write (awaitWrites), goes on.
		defer c.out.wakeReader()
	}
	if c.srv.audit != nil && audit.Audited(p.op) {
		// The audit log (ZooKeeper 3.6+'s audit.enable): every write, once
		// its outcome is known, by the member holding the connection.
		audit.LogWrite(c.srv.audit, audit.Client{Session: c.sessionID, Ids: acl.IdentityOrder(c.Ids()), IP: c.remote},
			p.op, p.auditReq, res)
	}
	switch {
	case p.silent:
	case p.op == jute.OpSync:
		c.out.reply(p.xid, t.LastZxid(), jute.OK, &jute.PathRequest{Path: p.syncPath})
		c.countSent()
	default:
		c.out.reply(p.xid, res.Zxid, res.Err, res.Resp)
		c.countSent()
	}
	kind := answeredWrite
	switch {
	case p.silent:
		kind = answeredBarrier
	case p.op == jute.OpSync:
		// ZooKeeper answers sync without a transaction (no header), so
		// its latency is a read's (readlatency), as there.
		kind = answeredRead
	}
	c.answered(p.start, res.Zxid, p.op, kind)
	if p.op == jute.OpCloseSession {
		c.out.closeAfterFlush()
		return
	}
	for _, r := range parked {
		if r.after != nil {
			r.after()
			continue
		}
		c.answerRead(t, r.h, r.body, nil)
		c.answered(r.start, t.LastZxid(), r.h.Type, answeredRead)
	}
}

// Failed implements ensemble.Waiter: the write's fate is unknown to the
// client, as after a lost connection, so the connection is closed and the
// client reconnects and retries (ZooKeeper does the same when it loses its
// leader).
func (p *pendingWrite) Failed(err error) {
	c := p.c
	c.popPending(p)
	c.out.kill()
	c.writeDone()
	c.logger().Warn("write not committed; closing connection", zap.Error(err))
	c.closeSocket()
}

// popPending removes p (the oldest pending write) and returns its parked
// reads, and whether no write is in flight any more.
func (c *conn) popPending(p *pendingWrite) ([]parkedRead, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.pending) > 0 && c.pending[0] == p {
		c.pending[0] = nil
		c.pending = c.pending[1:]
	} else {
		for i, x := range c.pending {
			if x == p {
				c.pending = append(c.pending[:i], c.pending[i+1:]...)
				break
			}
		}
	}
	parked := p.parked
	p.parked = nil
	c.parked.Add(-int32(len(parked)))
	return parked, len(c.pending) == 0
}
