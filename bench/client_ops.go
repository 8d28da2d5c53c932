package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/zkraft/zkraft/jute"
)

// GetData sends getData(path, watch).
func (c *conn) GetData(path string, watch bool, class opClass, h replyHandler, arg int64) error {
	return c.pathWatch(jute.OpGetData, path, watch, class, h, arg)
}

// Exists sends exists(path, watch).
func (c *conn) Exists(path string, watch bool, class opClass, h replyHandler, arg int64) error {
	return c.pathWatch(jute.OpExists, path, watch, class, h, arg)
}

// pathWatch sends a {path, watch} request (getData, exists).
func (c *conn) pathWatch(op jute.Op, path string, watch bool, class opClass, h replyHandler, arg int64) error {
	at, err := c.begin(op, class, h, arg)
	if err != nil {
		return err
	}
	c.wbuf.String(path)
	c.wbuf.Bool(watch)
	c.end(at)
	return nil
}

// SetData sends setData(path, data, version).
func (c *conn) SetData(path string, data []byte, version int32, class opClass, h replyHandler, arg int64) error {
	at, err := c.begin(jute.OpSetData, class, h, arg)
	if err != nil {
		return err
	}
	c.wbuf.String(path)
	c.wbuf.Buffer(data)
	c.wbuf.Int(version)
	c.end(at)
	return nil
}

// openACL is world:anyone with every permission.
var openACL = []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "world", ID: "anyone"}}}

// Create sends create(path, data, open ACL, flags).
func (c *conn) Create(path string, data []byte, flags int32, class opClass, h replyHandler, arg int64) error {
	at, err := c.begin(jute.OpCreate, class, h, arg)
	if err != nil {
		return err
	}
	c.wbuf.String(path)
	c.wbuf.Buffer(data)
	jute.WriteACLs(&c.wbuf, openACL)
	c.wbuf.Int(flags)
	c.end(at)
	return nil
}

// Delete sends delete(path, version).
func (c *conn) Delete(path string, version int32, class opClass, h replyHandler, arg int64) error {
	at, err := c.begin(jute.OpDelete, class, h, arg)
	if err != nil {
		return err
	}
	c.wbuf.String(path)
	c.wbuf.Int(version)
	c.end(at)
	return nil
}

// GetAllChildrenNumber sends getAllChildrenNumber(path) (ZooKeeper 3.6+).
func (c *conn) GetAllChildrenNumber(path string, class opClass, h replyHandler, arg int64) error {
	at, err := c.begin(jute.OpGetAllChildrenNumber, class, h, arg)
	if err != nil {
		return err
	}
	c.wbuf.String(path)
	c.end(at)
	return nil
}

// GetChildren sends getChildren(path, watch=false).
func (c *conn) GetChildren(path string, class opClass, h replyHandler, arg int64) error {
	at, err := c.begin(jute.OpGetChildren, class, h, arg)
	if err != nil {
		return err
	}
	c.wbuf.String(path)
	c.wbuf.Bool(false)
	c.end(at)
	return nil
}

// closeWaiter is the reply handler of closeSession.
type closeWaiter struct{ ch chan jute.ErrCode }

func (w closeWaiter) handleReply(_ *pendingOp, err jute.ErrCode, _ []byte) {
	select {
	case w.ch <- err:
	default:
	}
}

// Close ends the session with closeSession (bounded by wait) and closes the
// connection. It returns the server's answer to closeSession.
func (c *conn) Close(wait time.Duration, class opClass) error {
	w := closeWaiter{ch: make(chan jute.ErrCode, 1)}
	at, err := c.begin(jute.OpCloseSession, class, w, 0)
	if err != nil {
		c.nc.Close()
		<-c.done
		return err
	}
	c.closing.Store(true)
	c.end(at)
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case code := <-w.ch:
		c.nc.Close()
		<-c.done
		if code != jute.OK {
			return fmt.Errorf("closeSession: %w", code)
		}
		return nil
	case <-t.C:
		c.nc.Close()
		<-c.done
		return fmt.Errorf("closeSession: no reply within %v: %w", wait, jute.ErrOperationTimeout)
	}
}

// Abort closes the connection without closing the session.
func (c *conn) Abort() {
	c.closing.Store(true)
	c.nc.Close()
	<-c.done
}

// barrier is a reply handler that signals when its request is answered.
type barrier struct{ ch chan jute.ErrCode }

func (b barrier) handleReply(_ *pendingOp, err jute.ErrCode, _ []byte) { b.ch <- err }

// Barrier waits until every request issued before it has been answered (a
// cheap exists("/") rides behind them: replies come in order).
func (c *conn) Barrier(ctx context.Context) error {
	b := barrier{ch: make(chan jute.ErrCode, 1)}
	if err := c.Exists("/", false, classNone, b, 0); err != nil {
		return err
	}
	select {
	case code := <-b.ch:
		if code != jute.OK {
			if e := c.Err(); e != nil {
				return fmt.Errorf("barrier: %w", e)
			}
			return fmt.Errorf("barrier: %w", code)
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
