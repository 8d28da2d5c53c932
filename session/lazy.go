package session

import (
	"errors"
	"net"

	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// A large reply is not encoded where it is answered, under the tree's
// lock, but queued as a lazyFrame: its place among the connection's
// pending bytes and a function that encodes its body from immutable data
// (a znode.ChildNames, a znode's data, which setData replaces and never
// changes). The connection's writer encodes it when it reaches it, outside
// every lock, a chunk of about lazyChunk bytes at a time, each written
// before the next is encoded, so a reply of any size costs the tree lock
// only the time to take a reference, and costs memory only a chunk while
// its socket takes it: a client that pipelines requests for a huge
// directory, or sends one multiRead asking for the same listing thousands
// of times, and never reads holds references, not copies. Order is kept:
// a lazy frame goes out exactly where it was queued among the others.

// lazyReplyMin is the estimated body size from which a reply is queued
// lazily; smaller ones are encoded at once (cheaper than a closure).
const lazyReplyMin = 16 << 10

// lazyChunk is about how many bytes of a lazy frame the writer encodes
// before it writes them (below retainBufferSize, so the scratch buffer is
// kept from one chunk to the next).
const lazyChunk = 32 << 10

// lazyBody encodes a lazy frame's body from immutable data. A body whose
// frame size is exact calls spill between its items (names, results):
// the writer then writes what is encoded once it passes lazyChunk. One
// whose size is an estimate never is asked to: it is encoded whole.
type lazyBody func(w *jute.Writer, spill func())

// lazyFrame is a reply frame whose body is encoded by the writer.
type lazyFrame struct {
	at   int   // its offset in the pending bytes (outbound.w.Buf)
	size int   // the bytes counted for it in the backlog
	xid  int32 // its ReplyHeader
	zxid int64
	body lazyBody
	// exact: size is the frame's encoded length, prefix included, so
	// its length goes out before its body is encoded, a chunk at a time.
	exact bool
}

// frameOverhead is a reply frame's length prefix and ReplyHeader.
const frameOverhead = 4 + 16

// replyLazy queues an OK reply whose body body encodes later, outside
// every lock; size is the frame's bytes for the backlog: exactly them
// when exact (the body is then written a chunk at a time), else an
// estimate. It reports false if the connection is closing or over its
// limit.
func (o *outbound) replyLazy(xid int32, zxid int64, size int, exact bool, body lazyBody) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.dead || o.closing {
		return false
	}
	before := o.unsentLocked()
	o.lazy = append(o.lazy, lazyFrame{at: len(o.w.Buf), size: size, xid: xid, zxid: zxid, body: body, exact: exact})
	o.lazyBytes += size
	o.queuedLocked(before, size)
	ok := o.checkLimitLocked()
	o.kickLocked()
	return ok
}

// errLazySize is an exact lazy frame whose body did not encode to the
// length its prefix announced: the stream is no longer framed.
var errLazySize = errors.New("session: a reply's body did not match its length")

// writeLazy writes before (the frames queued ahead of f), then f, encoded
// in the writer's scratch buffer: a chunk at a time when its size is
// exact, else whole.
func (o *outbound) writeLazy(before []byte, f *lazyFrame) error {
	w := &o.scratch
	w.Reset()
	var err error
	sent := 0
	send := func() {
		if err == nil {
			o.armDeadline()
			bufs := net.Buffers{before, w.Buf}
			_, err = bufs.WriteTo(o.nc)
			before = nil
		}
		sent += len(w.Buf) // after an error, the rest is encoded and dropped
		w.Reset()
	}
	at := 0
	spill := func() {}
	if f.exact {
		w.Int(int32(f.size - 4))
		spill = func() {
			if len(w.Buf) >= lazyChunk {
				send()
			}
		}
	} else {
		at = jute.BeginFrame(w)
	}
	h := jute.ReplyHeader{Xid: f.xid, Zxid: f.zxid, Err: jute.OK}
	h.Encode(w)
	f.body(w, spill)
	if !f.exact {
		jute.EndFrame(w, at)
	}
	send()
	o.dropScratch()
	if err == nil && f.exact && sent != f.size {
		err = errLazySize
	}
	return err
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

// encodeNames writes names as a Jute vector of strings, calling spill
// after each.
func encodeNames(w *jute.Writer, names znode.ChildNames, spill func()) {
	w.Int(int32(names.Len()))
	names.Each(func(name string) {
		w.String(name)
		spill()
	})
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
		c.out.replyLazy(h.Xid, zxid, frameOverhead+size, true, lazy.encode)
	} else {
		now := childrenBody{names: names, stat: stat, withStat: withStat}
		c.out.replyWith(h.Xid, zxid, jute.OK, now.encodeWhole)
	}
	c.countSent()
}

// childrenBody is a getChildren or getChildren2 reply's body.
type childrenBody struct {
	names    znode.ChildNames
	stat     jute.Stat
	withStat bool
}

func (b *childrenBody) encode(w *jute.Writer, spill func()) {
	encodeNames(w, b.names, spill)
	if b.withStat {
		b.stat.Encode(w)
	}
}

// encodeWhole encodes the body at once.
func (b *childrenBody) encodeWhole(w *jute.Writer) { b.encode(w, noSpill) }

// noSpill is the spill of a body encoded whole.
func noSpill() {}

// dataReply answers getData with data and stat: lazily when large (the
// data is immutable), at once otherwise.
func (c *conn) dataReply(h jute.RequestHeader, zxid int64, data []byte, stat jute.Stat) {
	if size := 4 + len(data) + statSize; size >= lazyReplyMin {
		lazy := &jute.GetDataResponse{Data: data, Stat: stat}
		c.out.replyLazy(h.Xid, zxid, frameOverhead+size, true, func(w *jute.Writer, _ func()) { lazy.Encode(w) })
	} else {
		now := jute.GetDataResponse{Data: data, Stat: stat}
		c.out.replyWith(h.Xid, zxid, jute.OK, now.Encode)
	}
	c.countSent()
}

// ephemeralsReply answers getEphemerals from all, the session's ephemeral
// paths: at once for a few, else lazily (selecting and ordering them is
// proportional to their number); the estimate counts every path, so the
// body is encoded whole.
func (c *conn) ephemeralsReply(h jute.RequestHeader, zxid int64, all znode.ChildNames, prefix string) {
	body := ephemeralsBody{all: all, prefix: prefix}
	if size := namesSize(all); size >= lazyReplyMin {
		lazy := &body
		c.out.replyLazy(h.Xid, zxid, frameOverhead+size, false, func(w *jute.Writer, _ func()) { lazy.encode(w) })
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
