package soak

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/go-zookeeper/zk"
)

// errCode is a definite ZooKeeper error an operation ended with.
type errCode uint8

const (
	codeNone errCode = iota
	codeNoNode
	codeNodeExists
	codeBadVersion
	codeNotEmpty
	codeOther
)

func codeOf(err error) errCode {
	switch {
	case err == nil:
		return codeNone
	case errors.Is(err, zk.ErrNoNode):
		return codeNoNode
	case errors.Is(err, zk.ErrNodeExists):
		return codeNodeExists
	case errors.Is(err, zk.ErrBadVersion):
		return codeBadVersion
	case errors.Is(err, zk.ErrNotEmpty):
		return codeNotEmpty
	}
	return codeOther
}

// regState is a register's state in the model: its znode, or none.
type regState struct {
	exists  bool
	value   string
	version int32
}

// regIn and regOut are an operation's input and output in the model.
type regIn struct {
	kind    opKind
	value   string
	version int32
}

type regOut struct {
	out     outcome
	code    errCode
	exists  bool
	value   string
	version int32
}

// registerModel is a znode under getData, setData (blind and with a
// version), create and delete (blind and with a version), as ZooKeeper
// answers them: NoNode before BadVersion, versions counting from 0 at each
// create.
var registerModel = porcupine.NondeterministicModel{
	Init: func() []any { return []any{regState{}} },
	Step: func(state, input, output any) []any {
		s, in, out := state.(regState), input.(regIn), output.(regOut)
		one := func(ok bool, next regState) []any {
			if ok {
				return []any{next}
			}
			return nil
		}
		// unknown: the write may or may not have taken effect.
		maybe := func(applies bool, next regState) []any {
			if applies {
				return []any{s, next}
			}
			return []any{s}
		}
		switch in.kind {
		case opSyncRead, opRead:
			if !out.exists {
				return one(!s.exists, s)
			}
			return one(s.exists && s.value == out.value && s.version == out.version, s)
		case opSet, opCAS:
			next := regState{exists: true, value: in.value, version: s.version + 1}
			matches := s.exists && (in.kind == opSet || s.version == in.version)
			switch {
			case out.out == outUnknown:
				return maybe(matches, next)
			case out.out == outOK:
				return one(matches && out.version == next.version, next)
			case out.code == codeNoNode:
				return one(!s.exists, s)
			case out.code == codeBadVersion:
				return one(s.exists && !matches, s)
			}
		case opCreate:
			next := regState{exists: true, value: in.value}
			switch {
			case out.out == outUnknown:
				return maybe(!s.exists, next)
			case out.out == outOK:
				return one(!s.exists, next)
			case out.code == codeNodeExists:
				return one(s.exists, s)
			}
		case opDelete:
			matches := s.exists && (in.version == -1 || s.version == in.version)
			switch {
			case out.out == outUnknown:
				return maybe(matches, regState{})
			case out.out == outOK:
				return one(matches, regState{})
			case out.code == codeNoNode:
				return one(!s.exists, s)
			case out.code == codeBadVersion:
				return one(s.exists && !matches, s)
			}
		}
		return nil
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(regIn), output.(regOut)
		s := in.kind.String()
		if in.value != "" && in.kind != opSyncRead {
			s += " " + in.value
		}
		if in.version != -1 && (in.kind == opCAS || in.kind == opDelete) {
			s += fmt.Sprintf(" v%d", in.version)
		}
		switch {
		case out.out == outOK && (in.kind == opSyncRead || in.kind == opRead) && out.exists:
			return s + fmt.Sprintf(" -> %s v%d", out.value, out.version)
		case out.out == outOK && (in.kind == opSyncRead || in.kind == opRead):
			return s + " -> none"
		case out.out == outOK && (in.kind == opSet || in.kind == opCAS):
			return s + fmt.Sprintf(" -> v%d", out.version)
		case out.out == outFail:
			return s + fmt.Sprintf(" -> error %d", out.code)
		}
		return s + " -> " + out.out.String()
	},
	DescribeState: func(state any) string {
		s := state.(regState)
		if !s.exists {
			return "none"
		}
		return fmt.Sprintf("%s v%d", s.value, s.version)
	},
}

// porcupineOp turns a register operation into porcupine's form, or returns
// false for one that says nothing: a read that failed, or a write that
// never left its client. A write of unknown outcome stays open forever.
func porcupineOp(o *op) (porcupine.Operation, bool) {
	switch {
	case o.kind == opSeqCreate, o.kind == opRead:
		return porcupine.Operation{}, false
	case o.kind == opSyncRead && o.out != outOK:
		return porcupine.Operation{}, false
	case o.out == outNotSent:
		return porcupine.Operation{}, false
	}
	ret := o.ret
	if o.out == outUnknown {
		ret = math.MaxInt64
	}
	out := regOut{out: o.out, code: codeOf(o.err)}
	switch {
	case o.kind == opSyncRead:
		out.exists, out.value, out.version = o.exists, o.data, o.stat.Version
	case o.out == outOK && (o.kind == opSet || o.kind == opCAS):
		out.version = o.stat.Version
	}
	return porcupine.Operation{ClientId: o.client, Input: regIn{kind: o.kind, value: o.value, version: o.version},
		Call: o.call, Output: out, Return: ret}, true
}

// registerReport is what the register check found.
type registerReport struct {
	keys, ops    int
	violations   []string // keys whose history is not linearizable
	lost         []string // keys whose final state contradicts an acknowledged write
	inconclusive []string // keys the checker gave up on
}

// checkRegisters checks every register's history with porcupine, alone
// and then with its final read; dir receives a visualization of each
// history found not linearizable.
func checkRegisters(ops, finals []*op, dir string, timeout time.Duration) registerReport {
	byKey := map[string][]porcupine.Operation{}
	for _, o := range ops {
		if p, ok := porcupineOp(o); ok {
			byKey[o.key] = append(byKey[o.key], p)
		}
	}
	final := map[string]porcupine.Operation{}
	for _, o := range finals {
		if p, ok := porcupineOp(o); ok {
			final[o.key] = p
		}
	}
	var keys []string
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	rep := registerReport{keys: len(keys)}
	model := registerModel.ToModel()
	var mu sync.Mutex
	var wg sync.WaitGroup
	work := make(chan string)
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range work {
				h := byKey[k]
				res := porcupine.CheckOperationsTimeout(model, h, timeout)
				kind := "violation"
				if res == porcupine.Ok {
					if f, ok := final[k]; ok {
						h = append(append([]porcupine.Operation(nil), h...), f)
						res = porcupine.CheckOperationsTimeout(model, h, timeout)
						kind = "lost"
					}
				}
				if res == porcupine.Illegal {
					visualize(model, h, filepath.Join(dir, "porcupine-"+strings.ReplaceAll(strings.Trim(k, "/"), "/", "_")+".html"), timeout)
				}
				mu.Lock()
				rep.ops += len(byKey[k])
				switch {
				case res == porcupine.Unknown:
					rep.inconclusive = append(rep.inconclusive, k)
				case res == porcupine.Illegal && kind == "lost":
					rep.lost = append(rep.lost, k)
				case res == porcupine.Illegal:
					rep.violations = append(rep.violations, k)
				}
				mu.Unlock()
			}
		}()
	}
	for _, k := range keys {
		work <- k
	}
	close(work)
	wg.Wait()
	sort.Strings(rep.violations)
	sort.Strings(rep.lost)
	sort.Strings(rep.inconclusive)
	return rep
}

// visualize writes porcupine's HTML view of an illegal history to path.
func visualize(model porcupine.Model, h []porcupine.Operation, path string, timeout time.Duration) {
	_, info := porcupine.CheckOperationsVerbose(model, h, timeout)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err == nil {
		_ = porcupine.VisualizePath(model, info, path)
	}
}
