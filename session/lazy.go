package session

import (
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// A large reply is not encoded where it is answered, under the tree's
// lock, but queued as a lazyFrame: its place among the connection's
// pending bytes and a function that encodes its body from immutable data
// (a znode.ChildNames, a znode's data, which setData replaces and never
// changes). The connection's writer encodes it when it reaches it, outside
// every lock, and writes it at once, so a reply of any size costs the tree
// lock only the time to take a reference, and costs memory only while its
// socket takes it: a client that pipelines requests for a huge directory
// and never reads holds references, not copies. Order is kept: a lazy
// frame goes out exactly where it was queued among the others.

// lazyReplyMin is the estimated body size from which a reply is queued
// lazily; smaller ones are encoded at once (cheaper than a closure).
const lazyReplyMin = 16 << 10

// lazyFrame is a reply frame whose body is encoded by the writer.
type lazyFrame struct {
	at   int   // its offset in the pending bytes (outbound.w.Buf)
	size int   // the bytes counted for it in the backlog
	xid  int32 // its ReplyHeader
	zxid int64
	body func(*jute.Writer) // encodes the body from immutable data
}

// frameOverhead is a reply frame's length prefix and ReplyHeader.
const frameOverhead = 4 + 16

// replyLazy queues an OK reply whose body body encodes later, outside
// every lock; size estimates the frame's bytes for the backlog. It
// reports false if the connection is closing or over its limit.
func (o *outbound) replyLazy(xid int32, zxid int64, size int, body func(*jute.Writer)) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.dead || o.closing {
		return false
	}
	before := o.unsentLocked()
	o.lazy = append(o.lazy, lazyFrame{at: len(o.w.Buf), size: size, xid: xid, zxid: zxid, body: body})
	o.lazyBytes += size
	o.queuedLocked(before, size)
	ok := o.checkLimitLocked()
	o.kickLocked()
	return ok
}

// encodeLazy encodes f's whole frame into the writer's scratch buffer and
// returns it (valid until dropScratch).
func (o *outbound) encodeLazy(f *lazyFrame) []byte {
	w := &o.scratch
	w.Reset()
	at := jute.BeginFrame(w)
	h := jute.ReplyHeader{Xid: f.xid, Zxid: f.zxid, Err: jute.OK}
	h.Encode(w)
	f.body(w)
	jute.EndFrame(w, at)
	return w.Buf
}

// dropScratch lets a large scratch buffer go once written (it is noted as
// garbage for the memory reclaimer, as a large pending buffer is).
func (o *outbound) dropScratch() {
	if c := cap(o.scratch.Buf); c > retainBufferSize {
		if o.budget != nil {
			o.budget.noteAllocated(c)
		}
		o.scratch.Buf = nil
	}
}

// namesSize is the encoded size of a vector of names.
func namesSize(names znode.ChildNames) int { return 4 + 4*names.Len() + names.Bytes() }

// encodeNames writes names as a Jute vector of strings.
func encodeNames(w *jute.Writer, names znode.ChildNames) {
	w.Int(int32(names.Len()))
	names.Each(w.String)
}

// statSize is a Stat's encoded size: czxid, mzxid, ctime, mtime (8
// bytes each), version, cversion, aversion (4), ephemeralOwner (8),
// dataLength, numChildren (4) and pzxid (8).
const statSize = 68

// childrenReply answers getChildren (withStat false) or getChildren2 with
// names and stat: lazily when large, at once otherwise.
func (c *conn) childrenReply(h jute.RequestHeader, zxid int64, names znode.ChildNames, stat jute.Stat, withStat bool) {
	size := namesSize(names)
	if withStat {
		size += statSize
	}
	if size >= lazyReplyMin {
		lazy := childrenBody{names: names, stat: stat, withStat: withStat}
		c.out.replyLazy(h.Xid, zxid, frameOverhead+size, lazy.encode)
	} else {
		now := childrenBody{names: names, stat: stat, withStat: withStat}
		c.out.replyWith(h.Xid, zxid, jute.OK, now.encode)
	}
	c.countSent()
}

// childrenBody is a getChildren or getChildren2 reply's body.
type childrenBody struct {
	names    znode.ChildNames
	stat     jute.Stat
	withStat bool
}

func (b *childrenBody) encode(w *jute.Writer) {
	encodeNames(w, b.names)
	if b.withStat {
		b.stat.Encode(w)
	}
}

// dataReply answers getData with data and stat: lazily when large (the
// data is immutable), at once otherwise.
func (c *conn) dataReply(h jute.RequestHeader, zxid int64, data []byte, stat jute.Stat) {
	if size := 4 + len(data) + statSize; size >= lazyReplyMin {
		lazy := &jute.GetDataResponse{Data: data, Stat: stat}
		c.out.replyLazy(h.Xid, zxid, frameOverhead+size, lazy.Encode)
	} else {
		now := jute.GetDataResponse{Data: data, Stat: stat}
		c.out.replyWith(h.Xid, zxid, jute.OK, now.Encode)
	}
	c.countSent()
}

// ephemeralsReply answers getEphemerals from all, the session's ephemeral
// paths: at once for a few, else lazily (selecting and ordering them is
// proportional to their number); the estimate counts every path.
func (c *conn) ephemeralsReply(h jute.RequestHeader, zxid int64, all znode.ChildNames, prefix string) {
	body := ephemeralsBody{all: all, prefix: prefix}
	if size := namesSize(all); size >= lazyReplyMin {
		lazy := &body
		c.out.replyLazy(h.Xid, zxid, frameOverhead+size, lazy.encode)
	} else {
		c.out.replyWith(h.Xid, zxid, jute.OK, body.encode)
	}
	c.countSent()
}

// ephemeralsBody is a getEphemerals reply's body: the paths of all that
// start with prefix, in the order ZooKeeper's HashSet clone gives them.
type ephemeralsBody struct {
	all    znode.ChildNames
	prefix string
}

func (b *ephemeralsBody) encode(w *jute.Writer) {
	w.Strings(javaClonedSetOrder(znode.FilterEphemerals(b.all, b.prefix), b.all.Len()))
}
