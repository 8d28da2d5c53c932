package learner

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/zkraft/zkraft/internal/zookeeper/datadir"
	"github.com/zkraft/zkraft/internal/zookeeper/importer"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// Errors of forwarded requests.
var (
	// ErrNotSynced: the learner follows no leader now.
	ErrNotSynced = errors.New("learner: not following a leader")
	// ErrLeaderLost: the connection to the leader ended before the
	// request's outcome arrived; it may or may not have been applied.
	ErrLeaderLost = errors.New("learner: the connection to the leader ended before the outcome")
)

// Outcome is what became of a request forwarded to the leader: the
// transaction the leader made of it, applied here.
type Outcome struct {
	Txn datadir.Txn
	// Err is an error transaction's code (the request failed on the
	// leader); OK otherwise. A failed multi is a multi of error
	// transactions, its codes in Txn.
	Err jute.ErrCode
	// Results are what applying the transaction here gave, one per
	// change (none for an error transaction).
	Results []*znode.Result
}

// reqKey names a forwarded request: its session and cxid, which the
// leader's transaction header carries back.
type reqKey struct {
	session int64
	cxid    int32
}

type reply struct {
	out Outcome
	err error
}

// Done receives a forwarded request's outcome: once, either with the
// outcome and the tree, locked, right after the transaction is applied
// here (OnApply has run), or with an error and a nil tree. It must not
// call back into the Learner.
type Done func(out Outcome, tree *znode.Tree, err error)

// waiter is one forwarded request's Done; a pointer, so that a canceled
// wait removes its own entry and no other.
type waiter struct{ done Done }

// forwarding is the state of requests forwarded to the leader
// (Learner.request, Observer's REVALIDATE and SYNC).
type forwarding struct {
	mu      sync.Mutex
	waiting map[reqKey]*waiter
	// revalidations are the waiters of each session's REVALIDATEs, in
	// the order sent: the leader answers them in that order.
	revalidations map[int64][]chan bool
	syncs         []*waiter
	touched       map[int64]int32
	nextSession   int64
}

// Submit forwards a client's request to the leader and waits until the
// transaction the leader made of it is applied here (Forward).
func (l *Learner) Submit(ctx context.Context, session int64, cxid int32, op jute.Op, req []byte, auth []jute.Id) (Outcome, error) {
	ch := make(chan reply, 1)
	w := l.forward(session, cxid, op, req, auth, func(out Outcome, _ *znode.Tree, err error) { ch <- reply{out, err} })
	select {
	case r := <-ch:
		return r.out, r.err
	case <-ctx.Done():
		l.fw.drop(reqKey{session, cxid}, w)
		return Outcome{}, fmt.Errorf("learner: waiting for the leader: %w", ctx.Err())
	}
}

// Forward forwards a client's request to the leader as ZooKeeper's
// learners do (REQUEST {long session, int cxid, int type, request}, the
// session's identities as authinfo) and returns at once; done receives
// the transaction the leader made of it once it is applied here, or
// ErrNotSynced or ErrLeaderLost. A session's requests are forwarded, and
// so applied, in the order of the calls; (session, cxid) must not repeat
// among the requests in flight.
func (l *Learner) Forward(session int64, cxid int32, op jute.Op, req []byte, auth []jute.Id, done Done) {
	l.forward(session, cxid, op, req, auth, done)
}

func (l *Learner) forward(session int64, cxid int32, op jute.Op, req []byte, auth []jute.Id, done Done) *waiter {
	key := reqKey{session, cxid}
	w := &waiter{done: done}
	fw := &l.fw
	fw.mu.Lock()
	if fw.waiting == nil {
		fw.waiting = make(map[reqKey]*waiter)
	}
	fw.waiting[key] = w
	fw.mu.Unlock()
	data := make([]byte, 0, 16+len(req))
	data = binary.BigEndian.AppendUint64(data, uint64(session))
	data = binary.BigEndian.AppendUint32(data, uint32(cxid))
	data = binary.BigEndian.AppendUint32(data, uint32(op))
	data = append(data, req...)
	if auth == nil {
		auth = []jute.Id{}
	}
	if err := l.send(packet{typ: pktRequest, zxid: -1, data: data, auth: auth}); err != nil {
		if fw.drop(key, w) { // else the lost connection failed it already
			done(Outcome{}, nil, err)
		}
	}
	return w
}

// drop removes key's waiter if it is still w, and reports whether it was.
func (fw *forwarding) drop(key reqKey, w *waiter) bool {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	if fw.waiting[key] != w {
		return false
	}
	delete(fw.waiting, key)
	return true
}

// CreateSession opens a session on the ensemble for a client of this
// learner, as a ZooKeeper observer does: the id is this server's (its id
// in the top byte, SessionTrackerImpl.initializeNextSessionId), the
// request a createSession of the timeout, and the password ZooKeeper's
// for that id, so the session is valid on every server of the ensemble.
func (l *Learner) CreateSession(ctx context.Context, timeout int32) (id int64, passwd []byte, err error) {
	l.fw.mu.Lock()
	if l.fw.nextSession == 0 {
		l.fw.nextSession = int64(uint64(time.Now().UnixMilli()<<24)>>8) | l.cfg.ID<<56
	}
	id = l.fw.nextSession
	l.fw.nextSession++
	l.fw.mu.Unlock()
	out, err := l.Submit(ctx, id, 0, jute.OpCreateSession, binary.BigEndian.AppendUint32(nil, uint32(timeout)), nil)
	if err != nil {
		return 0, nil, err
	}
	if out.Err != jute.OK {
		return 0, nil, fmt.Errorf("learner: createSession: %w", out.Err)
	}
	return id, importer.Passwd(id), nil
}

// Touch notes that a client of this learner used session, so the next
// reply to the leader's PING keeps it alive (ZooKeeper's touch table).
func (l *Learner) Touch(session int64, timeout int32) {
	l.fw.mu.Lock()
	defer l.fw.mu.Unlock()
	if l.fw.touched == nil {
		l.fw.touched = make(map[int64]int32)
	}
	l.fw.touched[session] = timeout
}

// Revalidate asks the leader whether a session a client brings from
// another server is still valid (REVALIDATE {long id, int timeout},
// answered {long id, bool valid}); a valid one is owned by this learner
// from then on, so the leader accepts its writes from here.
func (l *Learner) Revalidate(ctx context.Context, session int64, timeout int32) (bool, error) {
	ch := make(chan bool, 1)
	l.fw.mu.Lock()
	if l.fw.revalidations == nil {
		l.fw.revalidations = make(map[int64][]chan bool)
	}
	l.fw.revalidations[session] = append(l.fw.revalidations[session], ch)
	l.fw.mu.Unlock()
	data := binary.BigEndian.AppendUint64(nil, uint64(session))
	data = binary.BigEndian.AppendUint32(data, uint32(timeout))
	if err := l.send(packet{typ: pktRevalidate, zxid: -1, data: data}); err != nil {
		l.fw.mu.Lock()
		l.fw.dropRevalidation(session, ch)
		l.fw.mu.Unlock()
		return false, err
	}
	select {
	case ok, open := <-ch:
		if !open {
			return false, ErrLeaderLost
		}
		return ok, nil
	case <-ctx.Done():
		return false, fmt.Errorf("learner: waiting for revalidation: %w", ctx.Err())
	}
}

// Sync forwards a client's sync (a REQUEST of type sync with its
// SyncRequest) and waits for the leader's SYNC: everything the leader
// committed before it is applied here by then.
func (l *Learner) Sync(ctx context.Context, session int64, cxid int32, path string) error {
	ch := make(chan error, 1)
	w := l.forwardSync(session, cxid, path, func(_ Outcome, _ *znode.Tree, err error) { ch <- err })
	select {
	case err := <-ch:
		return err
	case <-ctx.Done():
		l.fw.dropSync(w)
		return fmt.Errorf("learner: waiting for sync: %w", ctx.Err())
	}
}

// ForwardSync forwards a sync as Sync does and returns at once; done
// receives the tree, locked, once the leader's SYNC arrives (Outcome is
// empty), or an error and a nil tree.
func (l *Learner) ForwardSync(session int64, cxid int32, path string, done Done) {
	l.forwardSync(session, cxid, path, done)
}

func (l *Learner) forwardSync(session int64, cxid int32, path string, done Done) *waiter {
	w := &waiter{done: done}
	l.fw.mu.Lock()
	l.fw.syncs = append(l.fw.syncs, w)
	l.fw.mu.Unlock()
	data := binary.BigEndian.AppendUint64(nil, uint64(session))
	data = binary.BigEndian.AppendUint32(data, uint32(cxid))
	data = binary.BigEndian.AppendUint32(data, uint32(jute.OpSync))
	data = append(data, jute.Marshal(&jute.PathRequest{Path: path})...)
	if err := l.send(packet{typ: pktRequest, zxid: -1, data: data, auth: []jute.Id{}}); err != nil {
		// Not sent: no SYNC will answer it, so it must not take the
		// answer to a later one.
		if l.fw.dropSync(w) {
			done(Outcome{}, nil, err)
		}
	}
	return w
}

// send writes p to the leader followed now.
func (l *Learner) send(p packet) error {
	l.mu.RLock()
	c := l.cur
	l.mu.RUnlock()
	if c == nil {
		return ErrNotSynced
	}
	return c.write(p)
}

// delivered hands a transaction's outcome to the request waiting for it,
// if any; l.mu is held, so tree is the state right after it.
func (fw *forwarding) delivered(t datadir.Txn, results []*znode.Result, tree *znode.Tree) {
	fw.mu.Lock()
	w := fw.waiting[reqKey{t.ClientID, t.Cxid}]
	delete(fw.waiting, reqKey{t.ClientID, t.Cxid})
	fw.mu.Unlock()
	if w == nil {
		return
	}
	out := Outcome{Txn: t, Results: results, Err: jute.OK}
	if t.Type == jute.OpError && len(t.Body) >= 4 {
		out.Err = jute.ErrCode(int32(binary.BigEndian.Uint32(t.Body)))
	}
	w.done(out, tree, nil)
}

// revalidated hands a REVALIDATE answer to its waiter.
func (fw *forwarding) revalidated(data []byte) error {
	if len(data) < 9 {
		return fmt.Errorf("learner: REVALIDATE of %d bytes", len(data))
	}
	id := int64(binary.BigEndian.Uint64(data))
	fw.mu.Lock()
	var ch chan bool
	if waiting := fw.revalidations[id]; len(waiting) > 0 {
		ch = waiting[0]
		fw.dropRevalidation(id, ch)
	}
	fw.mu.Unlock()
	if ch != nil {
		ch <- data[8] != 0
	}
	return nil
}

// dropRevalidation removes ch from session's waiters; fw.mu must be held.
func (fw *forwarding) dropRevalidation(session int64, ch chan bool) {
	waiting := fw.revalidations[session]
	for i, c := range waiting {
		if c == ch {
			waiting = append(waiting[:i:i], waiting[i+1:]...)
			break
		}
	}
	if len(waiting) == 0 {
		delete(fw.revalidations, session)
		return
	}
	fw.revalidations[session] = waiting
}

// synced completes the oldest sync waiting; l.mu is held.
func (fw *forwarding) synced(tree *znode.Tree) {
	fw.mu.Lock()
	var w *waiter
	if len(fw.syncs) > 0 {
		w = fw.syncs[0]
		fw.syncs = fw.syncs[1:]
	}
	fw.mu.Unlock()
	if w != nil {
		w.done(Outcome{}, tree, nil)
	}
}

// dropSync removes w from the syncs waiting, and reports whether it was
// there still.
func (fw *forwarding) dropSync(w *waiter) bool {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	for i, x := range fw.syncs {
		if x == w {
			fw.syncs = append(fw.syncs[:i:i], fw.syncs[i+1:]...)
			return true
		}
	}
	return false
}

// touches takes the sessions touched since the last PING reply.
func (fw *forwarding) touches() map[int64]int32 {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	t := fw.touched
	fw.touched = nil
	return t
}

// lost fails everything waiting on the leader: its connection ended.
func (fw *forwarding) lost() {
	fw.mu.Lock()
	waiting, syncs := fw.waiting, fw.syncs
	fw.waiting, fw.syncs = nil, nil
	for id, chans := range fw.revalidations {
		for _, ch := range chans {
			close(ch)
		}
		delete(fw.revalidations, id)
	}
	fw.mu.Unlock()
	for _, w := range waiting {
		w.done(Outcome{}, nil, ErrLeaderLost)
	}
	for _, w := range syncs {
		w.done(Outcome{}, nil, ErrLeaderLost)
	}
}
