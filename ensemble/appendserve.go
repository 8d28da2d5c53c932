package ensemble

import (
	"bufio"
	"net"

	"github.com/hashicorp/raft"

	"github.com/zkraft/zkraft/internal/base/stagetrace"
)

// The follower side of the append streams: each stream's requests go to
// Raft in order and their responses back in the same order.

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

// appendAnswer is a response waiting for its turn on an append stream.
type appendAnswer struct {
	resp *raft.AppendEntriesResponse
	err  error
	seq  uint64 // the log store's writes to wait for first (0: none)
	last uint64 // the request's last entry (0: none), for stage tracing
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
			if from != nil && !timedOut(err) { // a timed-out stream was idle, not its leader's
				t.lost(string(from))
			}
			return
		}
		if n := len(req.Entries); n > 0 {
			stagetrace.Mark(stagetrace.Received, req.Entries[n-1].Index)
		}
		from = req.RPCHeader.Addr
		if len(from) == 0 {
			from = req.Leader
		}
		if t.logs != nil && req.LeaderCommitIndex > 0 {
			t.logs.NoteLeaderCommit(req.LeaderCommitIndex)
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
		if n := len(req.Entries); n > 0 {
			a.last = req.Entries[n-1].Index
			stagetrace.Mark(stagetrace.Handled, a.last)
		}
		if a.resp != nil && a.resp.Success && !isHeartbeat(req) {
			t.matched.Store(true)
		}
		if t.logs != nil && len(req.Entries) > 0 && a.resp != nil && a.resp.Success {
			// Raft queued the entries (asynclog.go) before answering; the
			// leader may count them only once they are on disk.
			a.seq = t.logs.AcceptedSeq()
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
			if err := t.logs.WaitStored(a.seq, t.done); err != nil {
				broken = true
				c.Close()
				continue
			}
		}
		enc.response(a.resp, a.err)
		if len(in) == 0 {
			err := enc.w.Flush()
			if a.last != 0 {
				stagetrace.Mark(stagetrace.Acked, a.last)
			}
			if err != nil {
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
