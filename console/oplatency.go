package console

import (
	"slices"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
)

// opStats are the latencies of the console's own ZooKeeper requests by
// operation, as the ensemble page shows them: the server's metrics carry
// only one latency for every operation together.
type opStats struct {
	mu sync.Mutex
	m  map[string]*opStat
}

// opStat is one operation's figures.
type opStat struct {
	count         int64
	min, max, sum time.Duration
}

// opJSON is one operation's row, in milliseconds.
type opJSON struct {
	Op    string  `json:"op"`
	Count int64   `json:"count"`
	Min   float64 `json:"min"`
	Avg   float64 `json:"avg"`
	Max   float64 `json:"max"`
}

func (s *opStats) observe(op string, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = make(map[string]*opStat)
	}
	st := s.m[op]
	if st == nil {
		st = &opStat{min: d}
		s.m[op] = st
	}
	st.count++
	st.sum += d
	st.min, st.max = min(st.min, d), max(st.max, d)
}

func (s *opStats) list() []opJSON {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]opJSON, 0, len(s.m))
	for op, st := range s.m {
		ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
		out = append(out, opJSON{Op: op, Count: st.count, Min: ms(st.min), Max: ms(st.max), Avg: ms(st.sum) / float64(st.count)})
	}
	slices.SortFunc(out, func(a, b opJSON) int {
		if a.Op < b.Op {
			return -1
		}
		return 1
	})
	return out
}

// zkc is a login's go-zookeeper connection with each call timed into the
// console's opStats under ZooKeeper's name for it.
type zkc struct {
	conn *zk.Conn
	ops  *opStats
}

func (z *zkc) time(op string, start time.Time) { z.ops.observe(op, time.Since(start)) }

// Children is getChildren2.
func (z *zkc) Children(p string) ([]string, *zk.Stat, error) {
	defer z.time("getChildren", time.Now())
	return z.conn.Children(p)
}

// Exists is exists.
func (z *zkc) Exists(p string) (bool, *zk.Stat, error) {
	defer z.time("exists", time.Now())
	return z.conn.Exists(p)
}

// Get is getData.
func (z *zkc) Get(p string) ([]byte, *zk.Stat, error) {
	defer z.time("getData", time.Now())
	return z.conn.Get(p)
}

// GetACL is getACL.
func (z *zkc) GetACL(p string) ([]zk.ACL, *zk.Stat, error) {
	defer z.time("getACL", time.Now())
	return z.conn.GetACL(p)
}

// Set is setData.
func (z *zkc) Set(p string, data []byte, version int32) (*zk.Stat, error) {
	defer z.time("setData", time.Now())
	return z.conn.Set(p, data, version)
}

// Create is create.
func (z *zkc) Create(p string, data []byte, flags int32, acl []zk.ACL) (string, error) {
	defer z.time("create", time.Now())
	return z.conn.Create(p, data, flags, acl)
}

// CreateContainer is createContainer.
func (z *zkc) CreateContainer(p string, data []byte, flags int32, acl []zk.ACL) (string, error) {
	defer z.time("createContainer", time.Now())
	return z.conn.CreateContainer(p, data, flags, acl)
}

// CreateTTL is createTTL.
func (z *zkc) CreateTTL(p string, data []byte, flags int32, acl []zk.ACL, ttl time.Duration) (string, error) {
	defer z.time("createTTL", time.Now())
	return z.conn.CreateTTL(p, data, flags, acl, ttl)
}

// Delete is delete.
func (z *zkc) Delete(p string, version int32) error {
	defer z.time("delete", time.Now())
	return z.conn.Delete(p, version)
}

// SetACL is setACL.
func (z *zkc) SetACL(p string, acl []zk.ACL, version int32) (*zk.Stat, error) {
	defer z.time("setACL", time.Now())
	return z.conn.SetACL(p, acl, version)
}
