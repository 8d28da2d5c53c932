package ensemble

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"

	"github.com/zkraft/zkraft/internal/base/stagetrace"
)

// The leader side of a pipelined append stream, and the commit notices
// that ride on it.

// AppendEntriesPipeline implements raft.Transport.
func (t *appendTransport) AppendEntriesPipeline(_ raft.ServerID, target raft.ServerAddress) (raft.AppendPipeline, error) {
	c, err := t.dial(target)
	if err != nil {
		return nil, err
	}
	p := &appendPipeline{
		t:          t,
		target:     target,
		contact:    t.contactOf(target),
		lastLog:    t.lastLogOf(target),
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
	target     raft.ServerAddress
	contact    *memberContact // the follower's (contact.go)
	lastLog    *atomic.Uint64 // the follower's, as it answers (appendTransport.lastLog)
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
		stagetrace.Mark(stagetrace.Sent, args.Entries[n-1].Index)
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
		p.t.goneIf(p.target, err)
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
		f := &appendFuture{start: time.Now(), args: req, resp: new(raft.AppendEntriesResponse), done: make(chan struct{}), notice: true}
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
			if err != nil {
				p.lost(err)
			} else if remote == nil {
				p.contact.heard(p.t.clockAt(f.start), p.t.now())
			}
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
			if n := len(f.args.Entries); n > 0 {
				stagetrace.Mark(stagetrace.Answered, f.args.Entries[n-1].Index)
			}
			if err == nil {
				p.t.answered(p.lastLog, f.args, f.resp, time.Since(f.start))
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

// lost notes the follower gone when err, the stream's read error, is its
// side closing it; not when this side closed the pipeline.
func (p *appendPipeline) lost(err error) {
	select {
	case <-p.shutdown:
	default:
		p.t.goneIf(p.target, err)
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
