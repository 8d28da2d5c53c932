// Package stagetrace records when replicated writes pass the stages of
// their path through a member (the session, the log store and its disk,
// the member stream, the FSM), so that scripts/writepath can say where a
// write's time goes: each fsync, each hop between goroutines, each write
// to a socket.
//
// It is off unless the environment variable ZKRAFT_STAGE_TRACE names a
// file when the process starts; a Mark then costs one load of a bool.
// When on, each Mark appends (time, stage, log index) to a buffer that a
// goroutine writes to the file as text lines every 100 ms: it is a tool
// for measuring, not something to leave on in production.
package stagetrace

import (
	"bufio"
	"os"
	"strconv"
	"sync"
	"time"
)

// Stage is a point on a write's path.
type Stage uint8

// The stages, in the order a write through the leader passes them. The
// session's stages carry no log index (0): the analysis pairs them with
// the entry the leader stores next.
const (
	Propose      Stage = iota + 1 // session: a write request decoded, about to be proposed
	Store                         // log store: entries up to the index accepted (Raft's dispatch or a follower's append)
	DiskWrite                     // log store: the writer took entries up to the index for the disk
	Durable                       // log store: entries up to the index on this member's disk
	Sent                          // leader: an append carrying the index written to a follower
	Answered                      // leader: that follower's answer read
	Received                      // follower: an append carrying the index read
	Handled                       // follower: Raft handled that append
	Acked                         // follower: its answer written (after its disk)
	ApplyEnter                    // FSM: a batch ending at the index handed to the FSM
	ApplyDurable                  // FSM: the batch may be applied (on this member's disk or committed)
	ApplyDone                     // FSM: the batch applied, its replies queued
	ReplyWrite                    // session: a reply about to be written to the client's socket
	ReplyWritten                  // session: that write returned
)

var names = [...]string{"", "propose", "store", "disk.write", "durable", "sent", "answered", "received", "handled",
	"acked", "apply.enter", "apply.durable", "apply.done", "reply.write", "reply.written"}

// String is the stage's name in the trace file.
func (s Stage) String() string {
	if int(s) < len(names) {
		return names[s]
	}
	return "stage" + strconv.Itoa(int(s))
}

// ParseStage is the stage a trace file names name, or 0.
func ParseStage(name string) Stage {
	for i, n := range names {
		if n == name && i > 0 {
			return Stage(i)
		}
	}
	return 0
}

// mark is one recorded passage.
type mark struct {
	at    int64 // Unix nanoseconds: members on one machine share the clock
	stage Stage
	index uint64
}

var (
	on   bool
	mu   sync.Mutex
	buf  []mark
	file *bufio.Writer
)

func init() {
	path := os.Getenv("ZKRAFT_STAGE_TRACE")
	if path == "" {
		return
	}
	f, err := os.Create(path)
	if err != nil {
		return
	}
	file = bufio.NewWriterSize(f, 1<<20)
	on = true
	go drain()
}

// On reports whether marks are recorded.
func On() bool { return on }

// Mark records that the write with log index index (0: not known here)
// passed stage now.
func Mark(stage Stage, index uint64) {
	if !on {
		return
	}
	at := time.Now().UnixNano()
	mu.Lock()
	buf = append(buf, mark{at, stage, index})
	mu.Unlock()
}

// drain writes the recorded marks to the file every 100 ms.
func drain() {
	var spare []mark
	line := make([]byte, 0, 64)
	for range time.Tick(100 * time.Millisecond) {
		mu.Lock()
		out := buf
		buf = spare[:0]
		mu.Unlock()
		for _, m := range out {
			line = strconv.AppendInt(line[:0], m.at, 10)
			line = append(line, ' ')
			line = append(line, m.stage.String()...)
			line = append(line, ' ')
			line = strconv.AppendUint(line, m.index, 10)
			line = append(line, '\n')
			_, _ = file.Write(line)
		}
		_ = file.Flush()
		spare = out
	}
}
