package ensemble

import (
	"math"
	"math/rand"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// Each register under test is one znode: its data is the value and its
// Stat.Version the version. Writes are setData (version -1), compare-and-
// swaps are setData with an expected version, reads are barrier + local
// read. Clients sit on different members while partitions come and go.
// There are several independent registers (as in Jepsen's independent
// keys), so the checker searches each one's history alone: with a single
// register, two dozen writes of unknown outcome could keep it searching
// past its time limit.

// registers is how many independent registers the clients share.
const registers = 4

type regInput struct {
	key     int  // which register
	op      byte // 'r' read, 'w' write, 'c' cas
	value   string
	version int32 // cas: expected version
}

type regOutput struct {
	ok      bool // write/cas succeeded (cas: false = BadVersion)
	unknown bool // the outcome is unknown (connection lost, no leader)
	value   string
	version int32 // resulting (writes) or observed (reads) version
}

type regState struct {
	value   string
	version int32
}

var registerModel = porcupine.NondeterministicModel{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		byKey := make([][]porcupine.Operation, registers)
		for _, op := range history {
			k := op.Input.(regInput).key
			byKey[k] = append(byKey[k], op)
		}
		return byKey
	},
	Init: func() []interface{} { return []interface{}{regState{value: "0"}} },
	Step: func(state, input, output interface{}) []interface{} {
		s, in, out := state.(regState), input.(regInput), output.(regOutput)
		next := regState{value: in.value, version: s.version + 1}
		switch in.op {
		case 'r':
			if out.unknown || (out.value == s.value && out.version == s.version) {
				return []interface{}{s}
			}
			return nil
		case 'w':
			if out.unknown {
				return []interface{}{s, next}
			}
			if out.ok && out.version == next.version {
				return []interface{}{next}
			}
			return nil
		default: // cas
			matches := s.version == in.version
			switch {
			case out.unknown && matches:
				return []interface{}{s, next}
			case out.unknown:
				return []interface{}{s}
			case out.ok && matches && out.version == next.version:
				return []interface{}{next}
			case !out.ok && !matches:
				return []interface{}{s}
			}
			return nil
		}
	},
}

// readWaiter answers a read from inside the FSM once its barrier applies.
type readWaiter struct {
	path string
	out  regOutput
	done chan struct{}
}

func (r *readWaiter) Applied(_ *znode.Result, t *znode.Tree) {
	data, st, err := t.GetData(r.path, nil)
	r.out = regOutput{value: string(data), version: st.Version, unknown: err != nil}
	close(r.done)
}
func (r *readWaiter) Failed(error) { r.out.unknown = true; close(r.done) }

func doRegisterOp(n *Node, in regInput) regOutput {
	path := "/reg" + strconv.Itoa(in.key)
	if in.op == 'r' {
		w := &readWaiter{path: path, done: make(chan struct{})}
		n.Barrier(w)
		<-w.done
		return w.out
	}
	version := int32(-1)
	if in.op == 'c' {
		version = in.version
	}
	res, err := n.ProposeWait(&znode.Txn{Type: jute.OpSetData, Session: 1, Time: 1,
		Req: jute.Marshal(&jute.SetDataRequest{Path: path, Data: []byte(in.value), Version: version})})
	switch {
	case err != nil:
		return regOutput{unknown: true}
	case res.Err == jute.ErrBadVersion:
		return regOutput{}
	case res.Err != jute.OK:
		return regOutput{unknown: true}
	}
	return regOutput{ok: true, version: res.Resp.(*jute.StatResponse).Stat.Version}
}

func TestLinearizableRegisterUnderPartitions(t *testing.T) {
	// A short election timeout: the 400 ms partitions below depose
	// isolated leaders, so the history spans changes of leader.
	c := newCluster(t, 3, func(cfg *Config) { cfg.ElectionTimeout = 300 * time.Millisecond })
	l := c.leader()
	mustPropose(t, l, newSession(1, 600000))
	for k := 0; k < registers; k++ {
		mustPropose(t, l, &znode.Txn{Type: jute.OpCreate, Session: 1, Time: 1,
			Req: jute.Marshal(&jute.CreateRequest{Path: "/reg" + strconv.Itoa(k), Data: []byte("0"), ACL: open})})
	}

	var (
		mu      sync.Mutex
		history []porcupine.Operation
		wg      sync.WaitGroup
		start   = time.Now()
		runFor  = 4 * time.Second
	)
	members := []*Node{}
	for _, n := range c.nodes {
		members = append(members, n)
	}
	for client := 0; client < 5; client++ {
		wg.Add(1)
		go func(client int) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(int64(client)))
			n := members[client%len(members)]
			for i := 0; time.Since(start) < runFor; i++ {
				in := regInput{key: rng.Intn(registers), op: "rwc"[rng.Intn(3)], value: string(rune('a'+client)) + string(rune('0'+i%10)), version: int32(rng.Intn(8))}
				call := time.Since(start).Nanoseconds()
				out := doRegisterOp(n, in)
				ret := time.Since(start).Nanoseconds()
				if out.unknown {
					// The member is cut off or between leaders: back off,
					// or thousands of fast failures would make the check
					// search forever (and end Unknown).
					time.Sleep(50 * time.Millisecond)
					if in.op == 'r' {
						continue // a read that may not have happened changes nothing
					}
					ret = math.MaxInt64 // may take effect any time later
				}
				mu.Lock()
				history = append(history, porcupine.Operation{ClientId: client, Input: in, Call: call, Output: out, Return: ret})
				mu.Unlock()
			}
		}(client)
	}
	// Faults: isolate each member in turn, healing in between.
	for i := 0; time.Since(start) < runFor; i++ {
		time.Sleep(400 * time.Millisecond)
		victim := members[i%len(members)].ID()
		var rest []int64
		for _, m := range members {
			if m.ID() != victim {
				rest = append(rest, m.ID())
			}
		}
		c.net.partition([]int64{victim}, rest)
		time.Sleep(400 * time.Millisecond)
		c.net.heal()
	}
	wg.Wait()

	unknown := 0
	for _, op := range history {
		if op.Output.(regOutput).unknown {
			unknown++
		}
	}
	res := porcupine.CheckOperationsTimeout(registerModel.ToModel(), history, 60*time.Second)
	t.Logf("%d operations (%d with unknown outcome) checked: %v", len(history), unknown, res)
	if res == porcupine.Illegal {
		t.Fatal("history is not linearizable")
	}
	if res != porcupine.Ok {
		t.Fatal("the checker did not finish: the history proves nothing")
	}
	if len(history)-unknown < 50 {
		t.Fatalf("only %d operations completed; the test proved little", len(history)-unknown)
	}
}
