package e2e

import (
	"fmt"
	"sort"

	"github.com/zkraft/zkraft/jute"
)

// wmodel is what a client library remembers about one session to resume
// it: the last zxid it saw and the watches it holds, which it re-arms with
// SetWatches2 after reconnecting, as ZooKeeper's ClientCnxn does.
type wmodel struct {
	lastZxid   int64
	data       map[string]bool // getData, or exists on an existing node
	exist      map[string]bool // exists on a missing node
	child      map[string]bool // getChildren / getChildren2
	persistent map[string]bool // addWatch PERSISTENT
	recursive  map[string]bool // addWatch PERSISTENT_RECURSIVE
}

func newWModel() *wmodel {
	return &wmodel{data: map[string]bool{}, exist: map[string]bool{}, child: map[string]bool{},
		persistent: map[string]bool{}, recursive: map[string]bool{}}
}

// saw records a reply zxid (notifications and zero zxids do not count).
func (m *wmodel) saw(zxid int64) {
	if zxid > m.lastZxid {
		m.lastZxid = zxid
	}
}

// request updates the watches after a request's reply.
func (m *wmodel) request(op jute.Op, req jute.Record, err jute.ErrCode) {
	switch r := req.(type) {
	case *jute.PathWatchRequest:
		if !r.Watch || op == jute.OpMultiRead {
			return
		}
		switch {
		case op == jute.OpExists && err == jute.ErrNoNode:
			m.exist[r.Path] = true
		case err != jute.OK:
		case op == jute.OpExists || op == jute.OpGetData:
			m.data[r.Path] = true
		case op == jute.OpGetChildren || op == jute.OpGetChildren2:
			m.child[r.Path] = true
		}
	case *jute.PathTypeRequest:
		if err != jute.OK {
			return
		}
		switch {
		case op == jute.OpAddWatch && r.Type == 0:
			m.persistent[r.Path] = true
		case op == jute.OpAddWatch:
			m.recursive[r.Path] = true
		case op == jute.OpRemoveWatches && r.Type == jute.WatcherChildren:
			delete(m.child, r.Path)
		case op == jute.OpRemoveWatches && r.Type == jute.WatcherData:
			delete(m.data, r.Path)
			delete(m.exist, r.Path)
		case op == jute.OpRemoveWatches:
			for _, set := range []map[string]bool{m.data, m.exist, m.child, m.persistent, m.recursive} {
				delete(set, r.Path)
			}
		}
	}
}

// event drops the one-shot watches a notification consumed.
func (m *wmodel) event(ev rawEvent) {
	switch ev.Type {
	case jute.EventNodeCreated, jute.EventNodeDataChanged:
		delete(m.data, ev.Path)
		delete(m.exist, ev.Path)
	case jute.EventNodeDeleted:
		delete(m.data, ev.Path)
		delete(m.exist, ev.Path)
		delete(m.child, ev.Path)
	case jute.EventNodeChildrenChanged:
		delete(m.child, ev.Path)
	}
}

// keys returns the set's paths, sorted.
func keys(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// disconnect drops slot i's connection without closing its session; the
// server forgets the connection's watches.
func (d *dside) disconnect(i int) string {
	d.slots[i].conn.Close()
	return "disconnected"
}

// reconnect resumes slot i's session on a new connection, as a client
// library does: handshake with the last zxid seen, auth again, then
// SetWatches2 with every watch it still holds. Catch-up notifications
// arrive before the SetWatches reply and are compared like any others.
func (d *dside) reconnect(i int) string {
	old, m := d.slots[i], d.models[i]
	c := dialRaw(d.t, d.srv)
	resp, _, err := c.tryHandshake(&jute.ConnectRequest{LastZxidSeen: m.lastZxid, TimeOut: old.Timeout,
		SessionID: old.SessionID, Passwd: old.Passwd, HasReadOnly: true})
	if err != nil || resp.SessionID != old.SessionID {
		// Go on with a fresh session in the slot; the outcome tells.
		var ping int64 = -1
		if d.super != nil {
			ping = d.super.ping()
		}
		d.t.Logf("%s: resuming session 0x%x with lastZxidSeen 0x%x failed (server's zxid now 0x%x): %v %+v",
			d.name, old.SessionID, m.lastZxid, ping, err, resp)
		d.open(i)
		if err != nil {
			return "reconnect failed: " + errKind(err)
		}
		return fmt.Sprintf("reconnect refused: timeout %d", resp.TimeOut)
	}
	d.slots[i] = c
	if i != 0 {
		d.auth(c, "alice:secret")
	}
	sw := &jute.SetWatches{V2: true, RelativeZxid: m.lastZxid, DataWatches: keys(m.data), ExistWatches: keys(m.exist),
		ChildWatches: keys(m.child), PersistentWatches: keys(m.persistent), PersistentRecursive: keys(m.recursive)}
	n := len(sw.DataWatches) + len(sw.ExistWatches) + len(sw.ChildWatches) + len(sw.PersistentWatches) + len(sw.PersistentRecursive)
	if n == 0 {
		return "reconnected"
	}
	if err := c.writeRaw(encodeRequest(jute.XidSetWatches, jute.OpSetWatches2, sw)); err != nil {
		d.t.Fatalf("%s: setWatches2: %v", d.name, err)
	}
	r := c.recv()
	if r.Hdr.Xid != jute.XidSetWatches || r.Hdr.Err != jute.OK {
		return fmt.Sprintf("setWatches2 reply %+v", r.Hdr)
	}
	return fmt.Sprintf("reconnected, %d watches re-armed", n)
}

// tryCall is rawConn.call returning a lost connection as an error instead
// of failing the test, so that a server closing the connection on a
// request becomes a comparable outcome.
func (c *rawConn) tryCall(op jute.Op, body, resp jute.Record) (jute.ReplyHeader, error) {
	xid := c.nextXid()
	if op == jute.OpPing {
		xid = jute.XidPing
	}
	if err := c.writeRaw(encodeRequest(xid, op, body)); err != nil {
		return jute.ReplyHeader{}, err
	}
	for {
		r, err := c.readAny()
		if err != nil {
			return jute.ReplyHeader{}, err
		}
		if r.Hdr.Xid == jute.XidNotification {
			var ev jute.WatcherEvent
			if err := jute.Unmarshal(r.Body, &ev); err != nil {
				return r.Hdr, err
			}
			c.Events = append(c.Events, rawEvent{Zxid: r.Hdr.Zxid, Type: ev.Type, Path: ev.Path})
			continue
		}
		if r.Hdr.Xid != xid {
			return r.Hdr, fmt.Errorf("reply xid %d, want %d", r.Hdr.Xid, xid)
		}
		if r.Hdr.Err == jute.OK && resp != nil {
			if err := jute.Unmarshal(r.Body, resp); err != nil {
				return r.Hdr, fmt.Errorf("decode reply %x: %w", r.Body, err)
			}
		}
		return r.Hdr, nil
	}
}
