package ensemble

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"reflect"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/zkraft/zkraft/ensemble/storage"

	"github.com/hashicorp/raft"
)

// newTestAppendTransport starts a transport on a fresh port; logs is its
// member's log store (nil: the wire protocol alone).
func newTestAppendTransport(t *testing.T, logs *storage.AsyncLogStore) (*appendTransport, raft.ServerAddress) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	m := newMux(ln, defaultDialer, nil)
	nt := raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{Stream: raftLayer{m: m}, MaxPool: 1, Timeout: 2 * time.Second})
	tr := newAppendTransport(nt, m, logs, 2*time.Second)
	t.Cleanup(func() { tr.Close() })
	return tr, raft.ServerAddress(ln.Addr().String())
}

func sampleAppendRequest(prev uint64, n int) *raft.AppendEntriesRequest {
	req := &raft.AppendEntriesRequest{
		RPCHeader:    raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax, ID: []byte("1"), Addr: []byte("127.0.0.1:1")},
		Term:         7,
		PrevLogEntry: prev, PrevLogTerm: 6, LeaderCommitIndex: prev,
	}
	for i := 0; i < n; i++ {
		l := testEntry(prev+1+uint64(i), 7)
		req.Entries = append(req.Entries, l)
	}
	return req
}

func TestAppendCodecRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	enc := appendEncoder{w: bufio.NewWriter(&buf)}
	want := sampleAppendRequest(40, 30)
	hb := &raft.AppendEntriesRequest{RPCHeader: raft.RPCHeader{Addr: []byte("x")}, Term: 3}
	if err := enc.request(want, 0); err != nil {
		t.Fatal(err)
	}
	if err := enc.request(hb, 0); err != nil {
		t.Fatal(err)
	}
	wantResp := &raft.AppendEntriesResponse{RPCHeader: raft.RPCHeader{ProtocolVersion: 3, ID: []byte("2")}, Term: 7, LastLog: 70, Success: true, NoRetryBackoff: true}
	enc.response(wantResp, nil)
	enc.response(nil, errors.New("boom"))
	if err := enc.w.Flush(); err != nil {
		t.Fatal(err)
	}

	dec := appendDecoder{r: bufio.NewReader(&buf)}
	var got, gotHB raft.AppendEntriesRequest
	if err := dec.request(&got); err != nil {
		t.Fatal(err)
	}
	if err := dec.request(&gotHB); err != nil {
		t.Fatal(err)
	}
	if len(got.Entries) != len(want.Entries) {
		t.Fatalf("%d entries", len(got.Entries))
	}
	for i := range want.Entries {
		if !sameEntry(got.Entries[i], want.Entries[i]) {
			t.Fatalf("entry %d: %+v want %+v", i, *got.Entries[i], *want.Entries[i])
		}
	}
	got.Entries, want.Entries = nil, nil
	if !reflect.DeepEqual(&got, want) {
		t.Fatalf("request %+v want %+v", got, *want)
	}
	if !isHeartbeat(&gotHB) || isHeartbeat(&got) {
		t.Fatal("heartbeat not recognised after the round trip")
	}
	var resp raft.AppendEntriesResponse
	if remote, err := dec.response(&resp); err != nil || remote != nil || !reflect.DeepEqual(&resp, wantResp) {
		t.Fatalf("response %+v %v %v", resp, remote, err)
	}
	if remote, err := dec.response(&resp); err != nil || remote == nil || remote.Error() != "boom" {
		t.Fatalf("error response: %v %v", remote, err)
	}
}

// TestAppendDecoderSlab: small entries' data share slabs, each capped so an
// append cannot overwrite the next; large entries get memory of their own;
// every entry reads back intact across requests and slab boundaries.
func TestAppendDecoderSlab(t *testing.T) {
	var buf bytes.Buffer
	enc := appendEncoder{w: bufio.NewWriter(&buf)}
	sizes := []int{100, 1, 0, slabMax, slabMax + 1, 200 << 10, 3000}
	var want []*raft.Log
	for r := 0; r < 40; r++ { // 40 requests: past several slabs
		req := &raft.AppendEntriesRequest{Term: 1, PrevLogEntry: uint64(len(want))}
		for _, n := range sizes {
			l := &raft.Log{Index: uint64(len(want) + 1), Term: 1, Type: raft.LogCommand, Data: bytes.Repeat([]byte{byte(len(want))}, n)}
			if n == 0 {
				l.Data = nil
			}
			req.Entries = append(req.Entries, l)
			want = append(want, l)
		}
		if err := enc.request(req, 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := enc.w.Flush(); err != nil {
		t.Fatal(err)
	}
	dec := appendDecoder{r: bufio.NewReader(&buf)}
	var got []*raft.Log
	for r := 0; r < 40; r++ {
		var req raft.AppendEntriesRequest
		if err := dec.request(&req); err != nil {
			t.Fatal(err)
		}
		got = append(got, req.Entries...)
	}
	for i, l := range got {
		if !bytes.Equal(l.Data, want[i].Data) || len(l.Data) <= slabMax && cap(l.Data) != len(l.Data) {
			t.Fatalf("entry %d: %d bytes, cap %d, want %d", i, len(l.Data), cap(l.Data), len(want[i].Data))
		}
	}
	_ = append(got[0].Data, 0xff) // capped: must not touch entry 1
	if got[1].Data[0] != want[1].Data[0] {
		t.Fatal("an append to one entry's data overwrote the next")
	}
	// consecutive small entries sit side by side in one slab
	if unsafe.Add(unsafe.Pointer(unsafe.SliceData(got[0].Data)), 100) != unsafe.Pointer(unsafe.SliceData(got[1].Data)) {
		t.Error("small entries not read into one slab")
	}
}

// TestAppendTransportPipelineAndCalls sends pipelined and single appends
// and a heartbeat between two transports.
func TestAppendTransportPipelineAndCalls(t *testing.T) {
	sender, _ := newTestAppendTransport(t, nil)
	receiver, addr := newTestAppendTransport(t, nil)
	heartbeats := make(chan struct{}, 10)
	receiver.SetHeartbeatHandler(func(rpc raft.RPC) {
		heartbeats <- struct{}{}
		rpc.Respond(&raft.AppendEntriesResponse{Term: 99, Success: true}, nil)
	})
	go func() {
		for rpc := range receiver.Consumer() {
			req := rpc.Command.(*raft.AppendEntriesRequest)
			if req.PrevLogEntry == 666 {
				rpc.Respond(nil, errors.New("refused"))
				continue
			}
			rpc.Respond(&raft.AppendEntriesResponse{Term: req.Term, LastLog: req.PrevLogEntry + uint64(len(req.Entries)), Success: true}, nil)
		}
	}()

	p, err := sender.AppendEntriesPipeline("2", addr)
	if err != nil {
		t.Fatal(err)
	}
	const n = 300 // more than the pipeline depth
	go func() {
		for i := 0; i < n; i++ {
			if _, err := p.AppendEntries(sampleAppendRequest(uint64(i*10), 10), new(raft.AppendEntriesResponse)); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for i := 0; i < n; i++ {
		f := <-p.Consumer()
		if err := f.Error(); err != nil {
			t.Fatal(err)
		}
		if want := uint64(i*10 + 10); f.Response().LastLog != want || f.Request().PrevLogEntry != uint64(i*10) {
			t.Fatalf("response %d out of order: last log %d", i, f.Response().LastLog)
		}
	}
	p.Close()
	if _, err := p.AppendEntries(sampleAppendRequest(1, 1), new(raft.AppendEntriesResponse)); err == nil {
		t.Fatal("append on a closed pipeline succeeded")
	}

	var resp raft.AppendEntriesResponse
	if err := sender.AppendEntries("2", addr, sampleAppendRequest(5, 3), &resp); err != nil || resp.LastLog != 8 {
		t.Fatalf("single append: %v %+v", err, resp)
	}
	if err := sender.AppendEntries("2", addr, sampleAppendRequest(666, 1), &resp); err == nil || err.Error() != "refused" {
		t.Fatalf("remote error: %v", err)
	}
	// The connection survives a remote error and is reused.
	if err := sender.AppendEntries("2", addr, &raft.AppendEntriesRequest{RPCHeader: raft.RPCHeader{Addr: []byte("a")}, Term: 4}, &resp); err != nil || resp.Term != 99 {
		t.Fatalf("heartbeat: %v %+v", err, resp)
	}
	select {
	case <-heartbeats:
	default:
		t.Fatal("heartbeat did not take the fast path")
	}
	sender.mu.Lock()
	pooled := len(sender.pool[addr])
	sender.mu.Unlock()
	if pooled != 1 {
		t.Fatalf("%d pooled connections, want 1", pooled)
	}
}

// TestAppendTransportCloseWaitsForHeartbeats checks Close returns only
// after a heartbeat handler running on a stream's goroutine has finished:
// Raft's stores are closed right after its shutdown closes the transport,
// and a heartbeat writing the term into a closed store panicked (CI).
func TestAppendTransportCloseWaitsForHeartbeats(t *testing.T) {
	sender, _ := newTestAppendTransport(t, nil)
	receiver, addr := newTestAppendTransport(t, nil)
	entered, release := make(chan struct{}), make(chan struct{})
	var finished atomic.Bool
	receiver.SetHeartbeatHandler(func(rpc raft.RPC) {
		close(entered)
		<-release
		finished.Store(true)
		rpc.Respond(&raft.AppendEntriesResponse{Success: true}, nil)
	})
	go func() {
		var resp raft.AppendEntriesResponse
		_ = sender.AppendEntries("2", addr, &raft.AppendEntriesRequest{RPCHeader: raft.RPCHeader{Addr: []byte("a")}, Term: 4}, &resp)
	}()
	<-entered
	closed := make(chan struct{})
	go func() {
		receiver.Close()
		close(closed)
	}()
	select {
	case <-closed:
		t.Fatal("Close returned while a heartbeat handler was running")
	case <-time.After(200 * time.Millisecond):
	}
	close(release)
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return after the handler finished")
	}
	if !finished.Load() {
		t.Fatal("handler did not finish")
	}
}

// TestAppendTransportGarbageClosesStream checks a malformed stream is
// dropped without disturbing the member.
func TestAppendTransportGarbageClosesStream(t *testing.T) {
	receiver, addr := newTestAppendTransport(t, nil)
	c, err := receiver.mux.open(string(addr), streamAppend, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// Version 1, then an entry count far beyond the limit.
	if _, err := c.Write([]byte{appendCodecVersion, 0, 0, 0, 1, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f}); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Fatal("stream still open after garbage")
	}
}

// FuzzAppendRequest feeds arbitrary bytes to the request decoder.
func FuzzAppendRequest(f *testing.F) {
	var buf bytes.Buffer
	enc := appendEncoder{w: bufio.NewWriter(&buf)}
	_ = enc.request(sampleAppendRequest(3, 4), 0)
	f.Add(buf.Bytes())
	f.Add([]byte{appendCodecVersion, 0, 0, 0, 1, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, data []byte) {
		dec := appendDecoder{r: bufio.NewReader(bytes.NewReader(data))}
		var req raft.AppendEntriesRequest
		_ = dec.request(&req)
		var resp raft.AppendEntriesResponse
		_, _ = dec.response(&resp)
	})
}

// TestAppendTransportAnswersWhenDurable checks a follower's success for
// new entries leaves only once they are on its disk (asynclog.go).
func TestAppendTransportAnswersWhenDurable(t *testing.T) {
	logs, gate := newGatedAsyncStore(t)
	sender, _ := newTestAppendTransport(t, nil)
	receiver, addr := newTestAppendTransport(t, logs)
	go func() {
		for rpc := range receiver.Consumer() {
			req := rpc.Command.(*raft.AppendEntriesRequest)
			if err := logs.StoreLogs(req.Entries); err != nil {
				rpc.Respond(nil, err)
				continue
			}
			rpc.Respond(&raft.AppendEntriesResponse{Term: req.Term, LastLog: req.PrevLogEntry + uint64(len(req.Entries)), Success: true}, nil)
		}
	}()
	p, err := sender.AppendEntriesPipeline("2", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	req := sampleAppendRequest(0, 3)
	req.LeaderCommitIndex = 2 // as if the leader had it from an earlier exchange
	if _, err := p.AppendEntries(req, new(raft.AppendEntriesResponse)); err != nil {
		t.Fatal(err)
	}
	select {
	case f := <-p.Consumer():
		t.Fatalf("answered before the entries were on disk: %v", f.Error())
	case <-time.After(200 * time.Millisecond):
	}
	// The leader's commit index was noted on arrival: the FSM may apply
	// entry 2 before this member's own write.
	stop := make(chan struct{})
	timer := time.AfterFunc(5*time.Second, func() { close(stop) })
	defer timer.Stop()
	if err := logs.WaitApplicable(2, stop); err != nil {
		t.Fatalf("the leader's commit index was not noted: %v", err)
	}
	gate.gate <- struct{}{}
	select {
	case f := <-p.Consumer():
		if f.Error() != nil || f.Response().LastLog != 3 {
			t.Fatalf("answer %v %+v", f.Error(), f.Response())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no answer after the write")
	}
}

// TestAppendTransportCapsCommitIndex checks a leader tells no commit index
// beyond its own durable log.
func TestAppendTransportCapsCommitIndex(t *testing.T) {
	logs, gate := newGatedAsyncStore(t)
	sender, _ := newTestAppendTransport(t, logs)
	receiver, addr := newTestAppendTransport(t, nil)
	if err := logs.StoreLogs([]*raft.Log{testEntry(1, 1), testEntry(2, 1)}); err != nil {
		t.Fatal(err)
	}
	gate.gate <- struct{}{}
	if err := logs.WaitApplicable(2, nil); err != nil {
		t.Fatal(err)
	}
	if err := logs.StoreLogs([]*raft.Log{testEntry(3, 1)}); err != nil { // queued, not on disk
		t.Fatal(err)
	}
	got := make(chan uint64, 1)
	go func() {
		for rpc := range receiver.Consumer() {
			got <- rpc.Command.(*raft.AppendEntriesRequest).LeaderCommitIndex
			rpc.Respond(&raft.AppendEntriesResponse{Success: true}, nil)
		}
	}()
	req := sampleAppendRequest(3, 1)
	req.LeaderCommitIndex = 3
	if err := sender.AppendEntries("2", addr, req, new(raft.AppendEntriesResponse)); err != nil {
		t.Fatal(err)
	}
	if c := <-got; c != 2 {
		t.Fatalf("commit index %d sent, want the durable 2", c)
	}
}

// openTestPipeline connects a sender transport to a receiver that accepts
// every append and passes it on got, sends entries 1-5 (term 7) as one
// single append (Raft's template for notices), and opens a pipeline, as
// Raft does after a successful append. The pipeline closes with the test.
func openTestPipeline(t *testing.T) (*appendTransport, raft.AppendPipeline, chan *raft.AppendEntriesRequest) {
	t.Helper()
	sender, _ := newTestAppendTransport(t, nil)
	receiver, addr := newTestAppendTransport(t, nil)
	got := make(chan *raft.AppendEntriesRequest, 8)
	go func() {
		for rpc := range receiver.Consumer() {
			req := rpc.Command.(*raft.AppendEntriesRequest)
			got <- req
			rpc.Respond(&raft.AppendEntriesResponse{Term: req.Term, LastLog: req.PrevLogEntry + uint64(len(req.Entries)), Success: true}, nil)
		}
	}()
	if err := sender.AppendEntries("2", addr, sampleAppendRequest(0, 5), new(raft.AppendEntriesResponse)); err != nil {
		t.Fatal(err)
	}
	<-got
	p, err := sender.AppendEntriesPipeline("2", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return sender, p, got
}

// TestAppendTransportNoticeOnNewPipeline checks a commit notice goes down
// a pipeline Raft has sent nothing on yet, built from the last single
// append to that member. Raft opens a pipeline after a successful append
// and sends on it only for new entries or when its commit timer fires, so
// without this a follower waiting for a commit index (a member catching up
// at start) missed it for a CommitTimeout, and forever with the timer off.
func TestAppendTransportNoticeOnNewPipeline(t *testing.T) {
	sender, _, got := openTestPipeline(t)
	if n := sender.notifyCommit(5, 7); n != 1 {
		t.Fatalf("%d pipelines open", n)
	}
	select {
	case req := <-got:
		if req.LeaderCommitIndex != 5 || req.PrevLogEntry != 5 || req.PrevLogTerm != 7 || len(req.Entries) != 0 || req.Term != 7 {
			t.Fatalf("notice %+v", req)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no commit notice on a pipeline Raft has not used yet")
	}
}

// TestAppendTransportRequestsCarryNoticedCommit: a request Raft built
// before a commit but that is written after the commit's notice carries
// the noticed commit index, not the older one it was built with. The
// follower may have refused the notice (the request brings the entry it
// lacked), and nothing else would tell it until Raft's commit timer.
func TestAppendTransportRequestsCarryNoticedCommit(t *testing.T) {
	sender, p, got := openTestPipeline(t)
	built := sampleAppendRequest(5, 1) // entry 6, built while 5 was the commit index
	sender.notifyCommit(6, 7)          // entry 6 commits; its notice may go first
	if _, err := p.AppendEntries(built, new(raft.AppendEntriesResponse)); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(5 * time.Second)
	for {
		select {
		case req := <-got:
			if len(req.Entries) == 0 {
				continue // the notice
			}
			if req.LeaderCommitIndex != 6 {
				t.Fatalf("the request with entry 6 carried commit index %d, want the noticed 6", req.LeaderCommitIndex)
			}
			return
		case <-deadline:
			t.Fatal("the request never arrived")
		}
	}
}

// TestAppendTransportNoNoticeBeforeTheEntry: a commit notice for an entry
// the follower has not been sent is not written (it could only be
// refused); the request that brings the entry carries the commit index.
func TestAppendTransportNoNoticeBeforeTheEntry(t *testing.T) {
	sender, p, got := openTestPipeline(t) // entries 1-5 sent
	sender.notifyCommit(8, 7)             // committed by the leader and another follower
	time.Sleep(100 * time.Millisecond)    // a notice, if any, would be written by now
	if _, err := p.AppendEntries(sampleAppendRequest(5, 3), new(raft.AppendEntriesResponse)); err != nil {
		t.Fatal(err)
	}
	select {
	case req := <-got:
		if len(req.Entries) == 0 {
			t.Fatalf("a notice for entry %d went to a follower sent only up to 5", req.PrevLogEntry)
		}
		if req.LeaderCommitIndex != 8 {
			t.Fatalf("the request with entries 6-8 carried commit index %d, want 8", req.LeaderCommitIndex)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the request never arrived")
	}
	// Entries sent but not yet committed get their notice as usual.
	if _, err := p.AppendEntries(sampleAppendRequest(8, 2), new(raft.AppendEntriesResponse)); err != nil {
		t.Fatal(err)
	}
	<-got // entries 9-10, commit index 8
	sender.notifyCommit(10, 7)
	select {
	case req := <-got:
		if len(req.Entries) != 0 || req.PrevLogEntry != 10 || req.LeaderCommitIndex != 10 {
			t.Fatalf("want the notice for 10, got %+v", req)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no notice for an entry the follower was sent")
	}
}

// TestAppendTransportMatchedAfterLogCheck checks a follower's transport
// records that its log agreed with a leader's only on a successful append:
// not on a heartbeat (Raft answers those without looking at the log), not
// on an append whose log check failed. Node.waitReady serves no client
// before it (a member seeded ahead of the leader would otherwise serve a
// history the leader's snapshot is about to replace).
func TestAppendTransportMatchedAfterLogCheck(t *testing.T) {
	sender, _ := newTestAppendTransport(t, nil)
	receiver, addr := newTestAppendTransport(t, nil)
	receiver.SetHeartbeatHandler(func(rpc raft.RPC) {
		rpc.Respond(&raft.AppendEntriesResponse{Term: 7, Success: true}, nil)
	})
	go func() {
		for rpc := range receiver.Consumer() {
			req := rpc.Command.(*raft.AppendEntriesRequest)
			// This follower's log ends at 25 in term 1: only a request
			// from there on agrees with it.
			ok := req.PrevLogEntry >= 25
			rpc.Respond(&raft.AppendEntriesResponse{Term: req.Term, LastLog: 25, Success: ok}, nil)
		}
	}()
	var resp raft.AppendEntriesResponse
	if err := sender.AppendEntries("2", addr, &raft.AppendEntriesRequest{RPCHeader: raft.RPCHeader{Addr: []byte("a")}, Term: 7}, &resp); err != nil || !resp.Success {
		t.Fatalf("heartbeat: %v %+v", err, resp)
	}
	if err := sender.AppendEntries("2", addr, sampleAppendRequest(22, 1), &resp); err != nil || resp.Success {
		t.Fatalf("append behind the follower's log: %v %+v", err, resp)
	}
	if receiver.matched.Load() {
		t.Fatal("matched after a heartbeat and a failed log check")
	}
	if err := sender.AppendEntries("2", addr, sampleAppendRequest(25, 0), &resp); err != nil || !resp.Success {
		t.Fatalf("append at the follower's end: %v %+v", err, resp)
	}
	if !receiver.matched.Load() {
		t.Fatal("not matched after a successful append")
	}
}

// TestAppendTransportWaitsForADownMember checks an append to a member that
// cannot be reached waits for it while persist allows, instead of failing
// at once: Raft backs off exponentially between failed appends (up to
// 10 s), which kept a restarted follower unheard for that long.
func TestAppendTransportWaitsForADownMember(t *testing.T) {
	var down atomic.Bool // the member is down: dials to it are refused
	down.Store(true)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	m := newMux(ln, func(addr string, timeout time.Duration) (net.Conn, error) {
		if down.Load() {
			return nil, errors.New("connection refused")
		}
		return defaultDialer(addr, timeout)
	}, nil)
	sender := newAppendTransport(raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{Stream: raftLayer{m: m}, MaxPool: 1, Timeout: 2 * time.Second}), m, nil, 2*time.Second)
	t.Cleanup(func() { sender.Close(); m.close() })
	receiver, addr := newTestAppendTransport(t, nil)
	go func() {
		for rpc := range receiver.Consumer() {
			rpc.Respond(&raft.AppendEntriesResponse{Term: 7, LastLog: 2, Success: true}, nil)
		}
	}()

	var resp raft.AppendEntriesResponse
	if err := sender.AppendEntries("2", addr, sampleAppendRequest(1, 1), &resp); err == nil {
		t.Fatal("append to a down member succeeded without persist")
	}

	var keep atomic.Bool
	keep.Store(true)
	persist := func(string) bool { return keep.Load() }
	sender.persist.Store(&persist)
	told := make(chan string, 10)
	unreachable := func(target string, err error, _ time.Duration) {
		if err != nil {
			told <- target
		}
	}
	sender.unreachable.Store(&unreachable)
	done := make(chan error, 1)
	go func() {
		done <- sender.AppendEntries("2", addr, sampleAppendRequest(1, 1), new(raft.AppendEntriesResponse))
	}()
	select {
	case err := <-done:
		t.Fatalf("append to a down member returned at once: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	// The wait is logged once (then every unreachableEvery), not per dial.
	if len(told) != 1 || <-told != string(addr) {
		t.Fatalf("unreachable told %d times, want once for %s", len(told)+1, addr)
	}
	down.Store(false) // the member is back
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("append after the member came back: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("append did not reach the member that came back")
	}

	// Once persist says no (no longer leader, or closing), it gives up.
	sender.mu.Lock()
	for _, c := range sender.pool[addr] {
		c.c.Close()
	}
	delete(sender.pool, addr)
	sender.mu.Unlock()
	down.Store(true)
	keep.Store(false)
	start := time.Now()
	if err := sender.AppendEntries("2", addr, sampleAppendRequest(1, 1), &resp); err == nil {
		t.Fatal("append to a down member succeeded")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("gave up after %v", d)
	}
}

// testEntry is a log entry whose fields vary with its index.
func testEntry(idx, term uint64) *raft.Log {
	l := &raft.Log{Index: idx, Term: term, Type: raft.LogCommand, Data: []byte(fmt.Sprintf("entry %d term %d", idx, term))}
	if idx%7 == 0 {
		l.Extensions = []byte{byte(idx)}
	}
	if idx%3 == 0 {
		l.AppendedAt = time.Unix(1700000000, int64(idx))
	}
	if idx%11 == 0 {
		l.Type, l.Data = raft.LogNoop, nil
	}
	return l
}

// sameEntry reports whether a and b are the same entry.
func sameEntry(a, b *raft.Log) bool {
	return a.Index == b.Index && a.Term == b.Term && a.Type == b.Type && bytes.Equal(a.Data, b.Data) &&
		bytes.Equal(a.Extensions, b.Extensions) && a.AppendedAt.Equal(b.AppendedAt)
}

// gatedLogStore holds every StoreLogs until the test lets it through.
type gatedLogStore struct {
	raft.LogStore
	gate chan struct{}
}

func (g *gatedLogStore) StoreLogs(logs []*raft.Log) error {
	<-g.gate
	return g.LogStore.StoreLogs(logs)
}

// newGatedAsyncStore is an async log store whose writes wait for the gate.
func newGatedAsyncStore(t *testing.T) (*storage.AsyncLogStore, *gatedLogStore) {
	t.Helper()
	g := &gatedLogStore{LogStore: raft.NewInmemStore(), gate: make(chan struct{})}
	s, err := storage.NewAsyncLogStore(g, func(err error) { t.Errorf("write failed: %v", err) })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		close(g.gate)
		s.Close()
	})
	return s, g
}
