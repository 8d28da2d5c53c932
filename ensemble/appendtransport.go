package ensemble

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/zkraft/zkraft/ensemble/storage"

	"github.com/hashicorp/raft"
)

// appendTransport is Raft's transport between members: hashicorp's
// NetworkTransport for votes, snapshots and leadership transfer, and
// append streams (streamAppend on the member port, appendcodec.go) for
// AppendEntries, pipelined or not. Both feed one Consumer channel.
type appendTransport struct {
	*raft.NetworkTransport
	mux     *mux
	timeout time.Duration

	consumeCh chan raft.RPC
	heartbeat atomic.Pointer[func(raft.RPC)]
	// persist, if set, says whether to keep dialing a member that cannot
	// be reached (see dial); nil gives up at the first failed dial.
	persist atomic.Pointer[func(target string) bool]
	// unreachable, if set, is told (at most every unreachableEvery per
	// member) that dial is still trying a member it cannot reach, how long
	// it has, and why: Raft logs nothing until dial gives up.
	unreachable atomic.Pointer[func(target string, err error, trying time.Duration)]
	warned      map[raft.ServerAddress]time.Time // guarded by mu
	// matched is set once a leader's append (not a bare heartbeat) passed
	// Raft's log check here: this member's log then agrees with a leader's
	// (follower side; see Node.waitReady).
	matched atomic.Bool
	// streamLost, if set, is told the leader address of an append stream
	// that ended without this transport closing it (leaderloss.go).
	streamLost atomic.Pointer[func(leader string)]

	// logs, if not nil, is this member's log store: a follower answers an
	// append only once its entries are on disk, and a leader sends no
	// commit index beyond its own durable one (asynclog.go). Fixed at
	// construction, before streams are accepted: an append served without
	// it would be answered before its entries are durable.
	logs *storage.AsyncLogStore

	mu   sync.Mutex
	pool map[raft.ServerAddress][]*appendConn // idle connections for single calls
	// templates holds, per member, the term and header of the last single
	// append or heartbeat sent to it: a new pipeline's commit notices need
	// them before Raft sends anything down the pipeline.
	templates map[raft.ServerAddress]*raft.AppendEntriesRequest
	// acked holds, per member, the last entry a single append got a
	// success for: a new pipeline starts from it (see appendPipeline.sent).
	acked map[raft.ServerAddress]ackedEntry
	// contacts holds, per member, which requests it answered and whether
	// it has gone since (leader side, contact.go): the followers in sync
	// that mntr counts, and the quorum a leader keeps (quorum.go).
	contacts map[raft.ServerAddress]*memberContact
	// contactLost is signalled when a member is noted gone (contact.go).
	contactLost chan struct{}
	// epoch starts the transport's monotonic clock (contact.go).
	epoch time.Time
	// lastLog holds, per member, the last log index it reported in an
	// append's answer (leader side): its lag is the leader's last index
	// minus this (Node.FollowerLag).
	lastLog map[raft.ServerAddress]*atomic.Uint64
	// appendTook, if set, is told each append's round trip (leader
	// side; Config.Metrics.Append). Set before Raft starts.
	appendTook func(time.Duration)
	served     map[net.Conn]struct{}        // accepted append streams
	pipelines  map[*appendPipeline]struct{} // open pipelines (leader side)
	closed     bool
	done       chan struct{}
	serving    sync.WaitGroup // serve goroutines; Close waits for them
}

// appendPoolSize is how many idle connections are kept per member
// (heartbeats and non-pipelined appends run concurrently).
const appendPoolSize = 3

// appendPipelineDepth is how many pipelined requests may await responses,
// as in NetworkTransport.
const appendPipelineDepth = 128

var (
	_ raft.Transport   = (*appendTransport)(nil)
	_ raft.WithClose   = (*appendTransport)(nil)
	_ raft.WithPreVote = (*appendTransport)(nil)
)

// newAppendTransport wraps nt, taking append streams from m; logs is the
// member's log store (nil only in tests of the wire protocol alone).
func newAppendTransport(nt *raft.NetworkTransport, m *mux, logs *storage.AsyncLogStore, timeout time.Duration) *appendTransport {
	t := &appendTransport{
		NetworkTransport: nt,
		mux:              m,
		logs:             logs,
		timeout:          timeout,
		consumeCh:        make(chan raft.RPC),
		pool:             make(map[raft.ServerAddress][]*appendConn),
		templates:        make(map[raft.ServerAddress]*raft.AppendEntriesRequest),
		acked:            make(map[raft.ServerAddress]ackedEntry),
		contacts:         make(map[raft.ServerAddress]*memberContact),
		contactLost:      make(chan struct{}, 1),
		epoch:            time.Now(),
		lastLog:          make(map[raft.ServerAddress]*atomic.Uint64),
		warned:           make(map[raft.ServerAddress]time.Time),
		served:           make(map[net.Conn]struct{}),
		pipelines:        make(map[*appendPipeline]struct{}),
		done:             make(chan struct{}),
	}
	go t.relay()
	go t.accept()
	return t
}

// Consumer implements raft.Transport.
func (t *appendTransport) Consumer() <-chan raft.RPC { return t.consumeCh }

// SetHeartbeatHandler implements raft.Transport: heartbeats on append
// streams skip the consumer queue, as in NetworkTransport. The embedded
// NetworkTransport does not get the handler (members send it no
// AppendEntries, and its Close would not wait for a running handler), so
// anything arriving there goes through the consumer queue.
func (t *appendTransport) SetHeartbeatHandler(cb func(raft.RPC)) {
	if cb == nil {
		t.heartbeat.Store(nil)
	} else {
		t.heartbeat.Store(&cb)
	}
}

// Close implements raft.WithClose.
func (t *appendTransport) Close() error {
	t.mu.Lock()
	if !t.closed {
		t.closed = true
		close(t.done)
		for _, conns := range t.pool {
			for _, c := range conns {
				c.c.Close()
			}
		}
		t.pool = nil
		for c := range t.served {
			c.Close()
		}
	}
	t.mu.Unlock()
	// A heartbeat is handled on its stream's goroutine and writes Raft's
	// stable store; the store is closed once Raft's shutdown (which calls
	// this) returns, so no handler may still be running then.
	t.serving.Wait()
	return t.NetworkTransport.Close()
}

// relay passes the NetworkTransport's RPCs on to the consumer.
func (t *appendTransport) relay() {
	in := t.NetworkTransport.Consumer()
	for {
		select {
		case rpc := <-in:
			select {
			case t.consumeCh <- rpc:
			case <-t.done:
				return
			}
		case <-t.done:
			return
		}
	}
}

// errRaftBusy: Raft did not take an RPC handed to it within the wait.
var errRaftBusy = errors.New("ensemble: raft did not take the request")

// deliver hands rpc to this member's own Raft as if another member had
// sent it (campaign.go), giving up after wait or once the transport closes.
func (t *appendTransport) deliver(rpc raft.RPC, wait time.Duration) error {
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case t.consumeCh <- rpc:
		return nil
	case <-t.done:
		return net.ErrClosed
	case <-timer.C:
		return errRaftBusy
	}
}

// RequestVote implements raft.Transport: NetworkTransport's, on another
// connection when a pooled one turns out broken (oncePooled).
func (t *appendTransport) RequestVote(id raft.ServerID, target raft.ServerAddress, args *raft.RequestVoteRequest, resp *raft.RequestVoteResponse) error {
	return oncePooled(func() error { return t.NetworkTransport.RequestVote(id, target, args, resp) })
}

// RequestPreVote implements raft.WithPreVote, as RequestVote.
func (t *appendTransport) RequestPreVote(id raft.ServerID, target raft.ServerAddress, args *raft.RequestPreVoteRequest, resp *raft.RequestPreVoteResponse) error {
	return oncePooled(func() error { return t.NetworkTransport.RequestPreVote(id, target, args, resp) })
}

// TimeoutNow implements raft.Transport, as RequestVote.
func (t *appendTransport) TimeoutNow(id raft.ServerID, target raft.ServerAddress, args *raft.TimeoutNowRequest, resp *raft.TimeoutNowResponse) error {
	return oncePooled(func() error { return t.NetworkTransport.TimeoutNow(id, target, args, resp) })
}

// votePool is NetworkTransport's pool size per member (node.go's MaxPool).
const votePool = 3

// oncePooled runs call, a NetworkTransport RPC that is safe to send twice
// (a vote, a pre-vote, a TimeoutNow), again while it fails on a broken
// connection, at most once per pooled connection and once on a new one.
// NetworkTransport keeps the connections of the last election for the
// next, which may come long after: one to a member that restarted
// meanwhile is dead, and the RPC on it fails with EOF. Raft counts that as
// a vote refused and never asks again, and the candidate waits out its
// election timeout (P to 2P, timeouts.go) instead of winning at once.
func oncePooled(call func() error) error {
	var err error
	for range votePool + 1 {
		if err = call(); err == nil || !brokenConn(err) {
			return err
		}
	}
	return err
}

// brokenConn reports whether err is a connection's failure (not a dial's,
// nor the other member's answer).
func brokenConn(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, net.ErrClosed)
}

// commitLimit is the highest commit index this member may tell others:
// its durable log index.
func (t *appendTransport) commitLimit() uint64 {
	if t.logs == nil {
		return math.MaxUint64
	}
	return t.logs.DurableIndex()
}

// lost reports a served stream from leader that ended, unless this
// transport is closing (it closes them itself).
func (t *appendTransport) lost(leader string) {
	select {
	case <-t.done:
		return
	default:
	}
	if fn := t.streamLost.Load(); fn != nil {
		(*fn)(leader)
	}
}

// appendConn is the client side of an append stream.
type appendConn struct {
	c   net.Conn
	enc appendEncoder
	dec appendDecoder
	// watched is closed when watchIdle stops reading the connection
	// (nil while it is not in the pool), and watchErr is why it stopped.
	watched  chan struct{}
	watchErr error
}

// memberPatience is how long dial keeps trying a member it cannot reach,
// every memberRedial, before Raft is told the append failed.
const (
	memberPatience   = 5 * time.Minute
	memberRedial     = 50 * time.Millisecond
	unreachableEvery = 10 * time.Second
)

// dial opens an append stream to target. A member that cannot be reached
// is dialed again every memberRedial for up to memberPatience, while
// persist allows (this member still leads, is not closing, and target is
// still a member): Raft waits between failed appends to a follower,
// doubling the wait up to 10 s, so a follower down for more than a few
// seconds would otherwise go unheard for up to that long after it
// restarts, where a ZooKeeper follower rejoins its leader at once. Each
// failure Raft sees then stands for minutes of the member's absence, and
// its waits stay short.
func (t *appendTransport) dial(target raft.ServerAddress) (*appendConn, error) {
	c, err := t.mux.open(string(target), streamAppend, t.timeout)
	t.goneIf(target, err)
	start := time.Now()
	for until := start.Add(memberPatience); err != nil && t.redial(target, until); {
		t.stillTrying(target, err, time.Since(start))
		c, err = t.mux.open(string(target), streamAppend, t.timeout)
		t.goneIf(target, err)
	}
	if err != nil {
		return nil, err
	}
	return &appendConn{
		c:   c,
		enc: appendEncoder{w: bufio.NewWriterSize(c, 64<<10), commitLimit: t.commitLimit},
		dec: appendDecoder{r: bufio.NewReaderSize(c, 4<<10)},
	}, nil
}

// stillTrying tells the unreachable hook, at most every unreachableEvery
// per member, that dial keeps trying target.
func (t *appendTransport) stillTrying(target raft.ServerAddress, err error, trying time.Duration) {
	hook := t.unreachable.Load()
	if hook == nil {
		return
	}
	t.mu.Lock()
	if time.Since(t.warned[target]) < unreachableEvery {
		t.mu.Unlock()
		return
	}
	t.warned[target] = time.Now()
	t.mu.Unlock()
	(*hook)(string(target), err, trying)
}

// redial waits memberRedial and reports whether to dial once more.
func (t *appendTransport) redial(target raft.ServerAddress, until time.Time) bool {
	persist := t.persist.Load()
	if persist == nil || time.Now().After(until) {
		return false
	}
	select {
	case <-time.After(memberRedial):
	case <-t.done:
		return false
	}
	return (*persist)(string(target))
}

// AppendEntries implements raft.Transport for one request.
func (t *appendTransport) AppendEntries(_ raft.ServerID, target raft.ServerAddress, args *raft.AppendEntriesRequest, resp *raft.AppendEntriesResponse) error {
	tmpl := &raft.AppendEntriesRequest{RPCHeader: args.RPCHeader, Term: args.Term, Leader: args.Leader}
	t.mu.Lock()
	t.templates[target] = tmpl
	t.mu.Unlock()
	c, err := t.idle(target)
	if err != nil {
		return err
	}
	if t.timeout > 0 {
		_ = c.c.SetDeadline(time.Now().Add(t.timeout))
	}
	start := time.Now()
	if err := c.enc.request(args, 0); err != nil {
		c.c.Close()
		t.goneIf(target, err)
		return fmt.Errorf("ensemble: append to %s: %w", target, err)
	}
	remote, err := c.dec.response(resp)
	if err != nil {
		c.c.Close()
		t.goneIf(target, err)
		return fmt.Errorf("ensemble: append to %s: %w", target, err)
	}
	t.release(target, c)
	now := time.Now()
	if remote == nil {
		t.contactOf(target).heard(t.clockAt(start), t.clockAt(now))
		t.answered(t.lastLogOf(target), args, resp, now.Sub(start))
	} else {
		t.contactOf(target).answered.Store(t.clockAt(now))
	}
	if remote == nil && resp.Success && len(args.Entries) > 0 {
		last := args.Entries[len(args.Entries)-1].Index
		t.mu.Lock()
		if a := t.acked[target]; a.term != args.Term || last > a.index {
			t.acked[target] = ackedEntry{term: args.Term, index: last}
		}
		t.mu.Unlock()
	}
	return remote
}

// ackedEntry is the last entry a member acknowledged in a term.
type ackedEntry struct{ term, index uint64 }

// idle returns a pooled connection to target or dials one.
func (t *appendTransport) idle(target raft.ServerAddress) (*appendConn, error) {
	for {
		t.mu.Lock()
		if t.closed {
			t.mu.Unlock()
			return nil, raft.ErrTransportShutdown
		}
		conns := t.pool[target]
		if len(conns) == 0 {
			t.mu.Unlock()
			return t.dial(target)
		}
		c := conns[len(conns)-1]
		t.pool[target] = conns[:len(conns)-1]
		t.mu.Unlock()
		if t.unwatch(target, c) {
			return c, nil
		}
	}
}

// release returns a connection to the pool, where it is watched for the
// other side closing it (watchIdle).
func (t *appendTransport) release(target raft.ServerAddress, c *appendConn) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed || len(t.pool[target]) >= appendPoolSize {
		c.c.Close()
		return
	}
	t.pool[target] = append(t.pool[target], c)
	t.watchIdle(target, c)
}

// errNotAppend is answered when a response is not an AppendEntries one.
var errNotAppend = errors.New("ensemble: append stream answered with another response type")

// lastLogOf is target's lastLog counter, created at first use.
func (t *appendTransport) lastLogOf(target raft.ServerAddress) *atomic.Uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	v := t.lastLog[target]
	if v == nil {
		v = new(atomic.Uint64)
		t.lastLog[target] = v
	}
	return v
}

// answered notes a member's answer to an append: its last log index
// and, for an append that carried entries (not a heartbeat), the round
// trip. Raft's answer gives the follower's last index from before the
// request; after a successful append the follower has its entries.
func (t *appendTransport) answered(lastLog *atomic.Uint64, args *raft.AppendEntriesRequest, resp *raft.AppendEntriesResponse, took time.Duration) {
	n := len(args.Entries)
	if resp.Success && n > 0 {
		lastLog.Store(args.Entries[n-1].Index)
	} else {
		lastLog.Store(resp.LastLog)
	}
	if n > 0 && t.appendTook != nil {
		t.appendTook(took)
	}
}

// memberLastLog is the last log index target reported (ok false if it
// has not answered an append yet).
func (t *appendTransport) memberLastLog(target raft.ServerAddress) (uint64, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	v := t.lastLog[target]
	if v == nil {
		return 0, false
	}
	return v.Load(), true
}

// answeredWithin reports whether target answered an append or heartbeat
// in the last d.
func (t *appendTransport) answeredWithin(target raft.ServerAddress, d time.Duration) bool {
	t.mu.Lock()
	m := t.contacts[target]
	t.mu.Unlock()
	if m == nil {
		return false
	}
	at := m.answered.Load()
	return at != 0 && t.now()-at <= int64(d)
}
