package ensemble

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"net"
	"sync"
	"sync/atomic"
	"time"

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
	// streamLost, if set, is told the leader address of an append stream
	// that ended without this transport closing it (leaderloss.go).
	streamLost atomic.Pointer[func(leader string)]

	// logs, if not nil, is this member's log store: a follower answers an
	// append only once its entries are on disk, and a leader sends no
	// commit index beyond its own durable one (asynclog.go). Fixed at
	// construction, before streams are accepted: an append served without
	// it would be answered before its entries are durable.
	logs *asyncLogStore

	mu   sync.Mutex
	pool map[raft.ServerAddress][]*appendConn // idle connections for single calls
	// templates holds, per member, the term and header of the last single
	// append or heartbeat sent to it: a new pipeline's commit notices need
	// them before Raft sends anything down the pipeline.
	templates map[raft.ServerAddress]*raft.AppendEntriesRequest
	// acked holds, per member, the last entry a single append got a
	// success for: a new pipeline starts from it (see appendPipeline.sent).
	acked map[raft.ServerAddress]ackedEntry
	// contact holds, per member, when it last answered a single append or
	// heartbeat (leader side): the followers in sync that mntr counts.
	contact   map[raft.ServerAddress]time.Time
	served    map[net.Conn]struct{}        // accepted append streams
	pipelines map[*appendPipeline]struct{} // open pipelines (leader side)
	closed    bool
	done      chan struct{}
	serving   sync.WaitGroup // serve goroutines; Close waits for them
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
func newAppendTransport(nt *raft.NetworkTransport, m *mux, logs *asyncLogStore, timeout time.Duration) *appendTransport {
	t := &appendTransport{
		NetworkTransport: nt,
		mux:              m,
		logs:             logs,
		timeout:          timeout,
		consumeCh:        make(chan raft.RPC),
		pool:             make(map[raft.ServerAddress][]*appendConn),
		templates:        make(map[raft.ServerAddress]*raft.AppendEntriesRequest),
		acked:            make(map[raft.ServerAddress]ackedEntry),
		contact:          make(map[raft.ServerAddress]time.Time),
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

// accept serves the append streams the mux routes here.
func (t *appendTransport) accept() {
	for {
		select {
		case c := <-t.mux.appendCh:
			t.mu.Lock()
			if t.closed {
				t.mu.Unlock()
				c.Close()
				continue
			}
			t.served[c] = struct{}{}
			t.serving.Add(1)
			t.mu.Unlock()
			go t.serve(c)
		case <-t.done:
			return
		case <-t.mux.done:
			return
		}
	}
}

// commitLimit is the highest commit index this member may tell others:
// its durable log index.
func (t *appendTransport) commitLimit() uint64 {
	if t.logs == nil {
		return math.MaxUint64
	}
	return t.logs.durableIndex()
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

// appendAnswer is a response waiting for its turn on an append stream.
type appendAnswer struct {
	resp *raft.AppendEntriesResponse
	err  error
	seq  uint64 // the log store's writes to wait for first (0: none)
}

// serve hands one append stream's requests to Raft in order; answer
// writes the responses, in the same order, once they may be sent.
func (t *appendTransport) serve(c net.Conn) {
	answers := make(chan appendAnswer, appendPipelineDepth)
	defer func() {
		close(answers)
		c.Close()
		t.mu.Lock()
		delete(t.served, c)
		t.mu.Unlock()
		t.serving.Done()
	}()
	t.serving.Add(1)
	go t.answer(c, answers)
	r := bufio.NewReaderSize(c, 64<<10)
	dec := appendDecoder{r: r}
	respCh := make(chan raft.RPCResponse, 1)
	var from []byte // the sender of the last request
	for {
		req := new(raft.AppendEntriesRequest)
		if err := dec.request(req); err != nil {
			if from != nil {
				t.lost(string(from))
			}
			return
		}
		from = req.RPCHeader.Addr
		if len(from) == 0 {
			from = req.Leader
		}
		if t.logs != nil && req.LeaderCommitIndex > 0 {
			t.logs.noteLeaderCommit(req.LeaderCommitIndex)
		}
		rpc := raft.RPC{Command: req, RespChan: respCh}
		if fn := t.heartbeat.Load(); fn != nil && isHeartbeat(req) {
			select {
			case <-t.done:
				return // closing: Raft has stopped, its stores may be closing too
			default:
			}
			(*fn)(rpc)
		} else {
			select {
			case t.consumeCh <- rpc:
			case <-t.done:
				return
			}
		}
		var a appendAnswer
		select {
		case resp := <-respCh:
			a.resp, _ = resp.Response.(*raft.AppendEntriesResponse)
			a.err = resp.Error
			if a.resp == nil && a.err == nil {
				a.err = errNotAppend
			}
		case <-t.done:
			return
		}
		if t.logs != nil && len(req.Entries) > 0 && a.resp != nil && a.resp.Success {
			// Raft queued the entries (asynclog.go) before answering; the
			// leader may count them only once they are on disk.
			a.seq = t.logs.acceptedSeq()
		}
		select {
		case answers <- a:
		case <-t.done:
			return
		}
	}
}

// answer writes a stream's responses, each once the log writes it waits
// for are done, flushing when no more are ready.
func (t *appendTransport) answer(c net.Conn, in <-chan appendAnswer) {
	defer t.serving.Done()
	enc := appendEncoder{w: bufio.NewWriterSize(c, 4<<10)}
	broken := false
	for a := range in {
		if broken {
			continue // serve sees the closed stream and stops
		}
		if a.seq != 0 {
			if err := t.logs.waitStored(a.seq, t.done); err != nil {
				broken = true
				c.Close()
				continue
			}
		}
		enc.response(a.resp, a.err)
		if len(in) == 0 {
			if err := enc.w.Flush(); err != nil {
				broken = true
				c.Close()
			}
		}
	}
}

// isHeartbeat is NetworkTransport's test for a heartbeat.
func isHeartbeat(req *raft.AppendEntriesRequest) bool {
	leader := req.RPCHeader.Addr
	if len(leader) == 0 {
		leader = req.Leader
	}
	return req.Term != 0 && leader != nil && req.PrevLogEntry == 0 && req.PrevLogTerm == 0 &&
		len(req.Entries) == 0 && req.LeaderCommitIndex == 0
}

// appendConn is the client side of an append stream.
type appendConn struct {
	c   net.Conn
	enc appendEncoder
	dec appendDecoder
}

func (t *appendTransport) dial(target raft.ServerAddress) (*appendConn, error) {
	c, err := t.mux.open(string(target), streamAppend, t.timeout)
	if err != nil {
		return nil, err
	}
	return &appendConn{
		c:   c,
		enc: appendEncoder{w: bufio.NewWriterSize(c, 64<<10), commitLimit: t.commitLimit},
		dec: appendDecoder{r: bufio.NewReaderSize(c, 4<<10)},
	}, nil
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
	if err := c.enc.request(args, 0); err != nil {
		c.c.Close()
		return fmt.Errorf("ensemble: append to %s: %w", target, err)
	}
	remote, err := c.dec.response(resp)
	if err != nil {
		c.c.Close()
		return fmt.Errorf("ensemble: append to %s: %w", target, err)
	}
	t.release(target, c)
	t.mu.Lock()
	t.contact[target] = time.Now()
	t.mu.Unlock()
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
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil, raft.ErrTransportShutdown
	}
	if conns := t.pool[target]; len(conns) > 0 {
		c := conns[len(conns)-1]
		t.pool[target] = conns[:len(conns)-1]
		t.mu.Unlock()
		return c, nil
	}
	t.mu.Unlock()
	return t.dial(target)
}

// release returns a connection to the pool.
func (t *appendTransport) release(target raft.ServerAddress, c *appendConn) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed || len(t.pool[target]) >= appendPoolSize {
		c.c.Close()
		return
	}
	t.pool[target] = append(t.pool[target], c)
}

// AppendEntriesPipeline implements raft.Transport.
func (t *appendTransport) AppendEntriesPipeline(_ raft.ServerID, target raft.ServerAddress) (raft.AppendPipeline, error) {
	c, err := t.dial(target)
	if err != nil {
		return nil, err
	}
	p := &appendPipeline{
		t:          t,
		conn:       c,
		timeout:    t.timeout,
		doneCh:     make(chan raft.AppendFuture, appendPipelineDepth),
		inprogress: make(chan *appendFuture, appendPipelineDepth),
		shutdown:   make(chan struct{}),
		notices:    make(chan struct{}, 1),
	}
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		c.c.Close()
		return nil, raft.ErrTransportShutdown
	}
	// Raft sends nothing down a new pipeline until it has new entries or
	// its commit timer fires; a notice due before then is built from the
	// last single append to the member (a follower that waited for a
	// commit index missed it for a whole CommitTimeout, forever in tests
	// that switch the timer off).
	p.last = t.templates[target]
	if a := t.acked[target]; p.last != nil && a.term == p.last.Term {
		p.sent = a.index
	}
	t.pipelines[p] = struct{}{}
	t.mu.Unlock()
	go p.decodeResponses()
	go p.sendNotices()
	return p, nil
}

// notifyCommit tells every follower with an open pipeline that entry
// index (of term) is committed, unless that pipeline already carried a
// commit index that high. It returns how many pipelines are open.
func (t *appendTransport) notifyCommit(index, term uint64) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	for p := range t.pipelines {
		p.notify(index, term)
	}
	return len(t.pipelines)
}

// appendPipeline sends requests without waiting for the responses, which
// come back in order on the same stream.
type appendPipeline struct {
	t          *appendTransport
	conn       *appendConn
	timeout    time.Duration
	doneCh     chan raft.AppendFuture
	inprogress chan *appendFuture
	shutdown   chan struct{}
	once       sync.Once

	// sending orders writes to the stream with their futures' places in
	// inprogress: Raft's requests and commit notices share the stream.
	sending    sync.Mutex
	last       *raft.AppendEntriesRequest // Raft's latest request: term and header for notices
	commitSent uint64                     // highest LeaderCommitIndex written
	// sent is the last entry sent to the follower (on this pipeline, or
	// acknowledged by a single append before it opened): a notice for a
	// later one would be refused, since the follower cannot have it.
	sent uint64

	notices     chan struct{} // cap 1: a notice is due
	noticeMu    sync.Mutex
	noticeIndex uint64
	noticeTerm  uint64
}

// AppendEntries implements raft.AppendPipeline.
func (p *appendPipeline) AppendEntries(args *raft.AppendEntriesRequest, resp *raft.AppendEntriesResponse) (raft.AppendFuture, error) {
	f := &appendFuture{start: time.Now(), args: args, resp: resp, done: make(chan struct{})}
	p.sending.Lock()
	defer p.sending.Unlock()
	if err := p.send(args); err != nil {
		return nil, err
	}
	p.last = args
	if n := len(args.Entries); n > 0 {
		p.sent = max(p.sent, args.Entries[n-1].Index)
	}
	select {
	case p.inprogress <- f:
		return f, nil
	case <-p.shutdown:
		return nil, raft.ErrPipelineShutdown
	}
}

// send writes a request; the caller holds sending.
//
// Every request carries at least the commit index of the latest notice
// asked for. Raft fixes a request's commit index when it builds it; a
// request built just before a commit but written just after that
// commit's notice (which the follower refused: it did not have the entry
// yet) would otherwise leave the follower a commit behind, with no notice
// left to send, until Raft's commit timer (50 ms; a test with the timer
// off waited forever). Any committed index is safe to send: the follower
// applies only up to its own last entry, which its check against the
// previous entry has just matched with the leader's log.
func (p *appendPipeline) send(args *raft.AppendEntriesRequest) error {
	if p.timeout > 0 {
		_ = p.conn.c.SetWriteDeadline(time.Now().Add(p.timeout))
	}
	p.noticeMu.Lock()
	committed := p.noticeIndex
	p.noticeMu.Unlock()
	if err := p.conn.enc.request(args, committed); err != nil {
		return fmt.Errorf("ensemble: pipelined append: %w", err)
	}
	p.commitSent = max(p.commitSent, p.conn.enc.commitSent)
	return nil
}

// notify asks for a commit notice for index unless one is on its way.
func (p *appendPipeline) notify(index, term uint64) {
	p.noticeMu.Lock()
	if index > p.noticeIndex {
		p.noticeIndex, p.noticeTerm = index, term
	}
	p.noticeMu.Unlock()
	select {
	case p.notices <- struct{}{}:
	default:
	}
}

// sendNotices writes commit notices. Raft tells a follower the commit
// index only with its next AppendEntries (new entries, or an empty one
// after CommitTimeout), so at light load a follower would apply — answer
// its clients, fire its watches — a CommitTimeout late. A notice is an
// AppendEntries from this leader's current term with no entries, whose
// previous entry is the committed one and whose commit index is that
// entry's: the follower's own consistency check on the previous entry
// makes it as safe as any AppendEntries, and a follower that lacks the
// entry just refuses it. Its response is read and dropped. No notice goes
// out for an entry not yet sent to the follower: under load the leader
// and the faster follower commit entries before the slower one is sent
// them, and each such notice cost that follower a log lookup and a
// warning in its log ("failed to get previous log"), dozens a second.
func (p *appendPipeline) sendNotices() {
	for {
		select {
		case <-p.notices:
		case <-p.shutdown:
			return
		}
		p.noticeMu.Lock()
		index, term := p.noticeIndex, p.noticeTerm
		p.noticeMu.Unlock()
		p.sending.Lock()
		last := p.last
		if last == nil || index <= p.commitSent || index > p.sent || len(p.inprogress) >= cap(p.inprogress)-1 {
			// Raft's own requests carry it, or soon will: the one
			// bringing an entry not sent yet carries the noticed
			// commit index (send).
			p.sending.Unlock()
			continue
		}
		req := &raft.AppendEntriesRequest{
			RPCHeader: last.RPCHeader, Term: last.Term, Leader: last.Leader,
			PrevLogEntry: index, PrevLogTerm: term, LeaderCommitIndex: index,
		}
		if p.send(req) != nil {
			p.sending.Unlock()
			return // the stream is broken: Raft's next request finds out
		}
		f := &appendFuture{args: req, resp: new(raft.AppendEntriesResponse), done: make(chan struct{}), notice: true}
		select {
		case p.inprogress <- f:
		case <-p.shutdown:
			p.sending.Unlock()
			return
		}
		p.sending.Unlock()
	}
}

func (p *appendPipeline) decodeResponses() {
	for {
		select {
		case f := <-p.inprogress:
			if p.timeout > 0 {
				_ = p.conn.c.SetReadDeadline(time.Now().Add(p.timeout))
			}
			remote, err := p.conn.dec.response(f.resp)
			if f.notice {
				if err != nil {
					p.Close() // Raft's requests behind it fail; it reopens
					return
				}
				continue
			}
			if err == nil {
				err = remote
			}
			f.respond(err)
			select {
			case p.doneCh <- f:
			case <-p.shutdown:
				return
			}
		case <-p.shutdown:
			return
		}
	}
}

// Consumer implements raft.AppendPipeline.
func (p *appendPipeline) Consumer() <-chan raft.AppendFuture { return p.doneCh }

// Close implements raft.AppendPipeline.
func (p *appendPipeline) Close() error {
	p.once.Do(func() {
		close(p.shutdown)
		p.conn.c.Close()
		p.t.mu.Lock()
		delete(p.t.pipelines, p)
		p.t.mu.Unlock()
	})
	return nil
}

// appendFuture is one pipelined request.
type appendFuture struct {
	start time.Time
	args  *raft.AppendEntriesRequest
	resp  *raft.AppendEntriesResponse
	err   error
	done  chan struct{}
	// notice marks a commit notice, whose response nobody awaits.
	notice bool
}

func (f *appendFuture) respond(err error) {
	f.err = err
	close(f.done)
}

// Error implements raft.Future.
func (f *appendFuture) Error() error {
	<-f.done
	return f.err
}

// Start implements raft.AppendFuture.
func (f *appendFuture) Start() time.Time { return f.start }

// Request implements raft.AppendFuture.
func (f *appendFuture) Request() *raft.AppendEntriesRequest { return f.args }

// Response implements raft.AppendFuture.
func (f *appendFuture) Response() *raft.AppendEntriesResponse { return f.resp }

// errNotAppend is answered when a response is not an AppendEntries one.
var errNotAppend = errors.New("ensemble: append stream answered with another response type")

// answeredWithin reports whether target answered an append or heartbeat
// in the last d.
func (t *appendTransport) answeredWithin(target raft.ServerAddress, d time.Duration) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	at, ok := t.contact[target]
	return ok && time.Since(at) <= d
}
