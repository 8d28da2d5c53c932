// Package benchfloor measures, on the machine a benchmark runs on, the
// least time a replicated write can take there: one fsync of a small
// append to a file in the directory the members log to, plus one round
// trip between two processes on loopback. scripts/benchcompare prints
// floor = fsync p50 + round trip p50 beside its low-concurrency write rows,
// against which a write's p50 is judged (a leader appends and fsyncs its
// log while its followers do the same, and answers after one round trip
// to a follower).
//
// Where the members share one disk (every member of a loopback ensemble
// logs to the same device), their fsyncs of one write run at once and
// queue on that device, so Measure also times that: Members files in dir,
// each appended to and fsynced by its own goroutine, all starting
// together, until a majority of them is durable (the quorum a commit
// waits for). SharedTotal is that plus the round trip: the least a
// replicated write can take on this machine, as opposed to Total, the
// least it takes where each member has a disk of its own.
package benchfloor

import (
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"sync"
	"time"
)

// RecordSize is the size of each append the fsync measurement makes:
// about one small write's log record.
const RecordSize = 256

// Members is how many members' fsyncs the shared-disk measurement runs at
// once: the three of a loopback ensemble.
const Members = 3

// Floor is what Measure found.
type Floor struct {
	FsyncP50, FsyncP99 time.Duration // append RecordSize bytes and fsync
	RTTP50, RTTP99     time.Duration // loopback TCP round trip of RecordSize bytes
	// QuorumP50 and QuorumP99: Members appends and fsyncs started at once
	// on one disk, until a majority of them is durable.
	QuorumP50, QuorumP99 time.Duration
	Samples              int // of each
}

// Total is the floor of one replicated write: fsync p50 plus round-trip
// p50.
func (f Floor) Total() time.Duration { return f.FsyncP50 + f.RTTP50 }

// SharedTotal is the floor of one replicated write where the members
// share this disk: a quorum's fsyncs at once (p50) plus round-trip p50.
func (f Floor) SharedTotal() time.Duration { return f.QuorumP50 + f.RTTP50 }

// String describes f in one line.
func (f Floor) String() string {
	return fmt.Sprintf("floor %.3f ms = fsync p50 %.3f ms (p99 %.3f ms) + loopback round trip p50 %.3f ms (p99 %.3f ms); "+
		"on one shared disk %.3f ms = %d members' fsyncs at once, a majority durable, p50 %.3f ms (p99 %.3f ms) + the round trip; %d samples each",
		Ms(f.Total()), Ms(f.FsyncP50), Ms(f.FsyncP99), Ms(f.RTTP50), Ms(f.RTTP99),
		Ms(f.SharedTotal()), Members, Ms(f.QuorumP50), Ms(f.QuorumP99), f.Samples)
}

// Ms is d in milliseconds.
func Ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Measure times n appends with fsync to a fresh file in dir (removed
// after) and n loopback round trips.
func Measure(dir string, n int) (Floor, error) {
	syncs, err := Fsyncs(dir, n)
	if err != nil {
		return Floor{}, err
	}
	quorum, err := QuorumFsyncs(dir, Members, n)
	if err != nil {
		return Floor{}, err
	}
	rtts, err := RoundTrips(n)
	if err != nil {
		return Floor{}, err
	}
	return Floor{
		FsyncP50: Percentile(syncs, 0.5), FsyncP99: Percentile(syncs, 0.99),
		RTTP50: Percentile(rtts, 0.5), RTTP99: Percentile(rtts, 0.99),
		QuorumP50: Percentile(quorum, 0.5), QuorumP99: Percentile(quorum, 0.99), Samples: n,
	}, nil
}

// QuorumFsyncs runs n rounds in which members goroutines, each with a
// new file of its own in dir, append RecordSize bytes and fsync at once,
// and returns how long each round took until a majority had finished.
func QuorumFsyncs(dir string, members, n int) ([]time.Duration, error) {
	if members < 1 {
		return nil, fmt.Errorf("benchfloor: %d members", members)
	}
	files := make([]*os.File, members)
	defer func() {
		for _, f := range files {
			if f != nil {
				f.Close()
				os.Remove(f.Name())
			}
		}
	}()
	for i := range files {
		f, err := os.CreateTemp(dir, "floor-quorum-*.log")
		if err != nil {
			return nil, fmt.Errorf("benchfloor: %w", err)
		}
		files[i] = f
	}
	majority := members/2 + 1
	took := make([]time.Duration, n)
	errs := make(chan error, members)
	for i := range took {
		var wg sync.WaitGroup
		done := make(chan struct{}, members)
		start := time.Now()
		for _, f := range files {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := appendSync(f); err != nil {
					errs <- err
					return
				}
				done <- struct{}{}
			}()
		}
		for range majority {
			select {
			case <-done:
			case err := <-errs:
				wg.Wait()
				return nil, err
			}
		}
		took[i] = time.Since(start)
		wg.Wait() // the next round starts with every file synced
		select {
		case err := <-errs:
			return nil, err
		default:
		}
	}
	return took, nil
}

// appendSync appends one record to f and fsyncs it.
func appendSync(f *os.File) error {
	if _, err := f.Write(make([]byte, RecordSize)); err != nil {
		return fmt.Errorf("benchfloor: append: %w", err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("benchfloor: fsync: %w", err)
	}
	return nil
}

// Fsyncs appends RecordSize bytes to a new file in dir n times, each
// followed by fsync, and returns how long each append and fsync took.
func Fsyncs(dir string, n int) ([]time.Duration, error) {
	f, err := os.CreateTemp(dir, "floor-*.log")
	if err != nil {
		return nil, fmt.Errorf("benchfloor: %w", err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	rec := make([]byte, RecordSize)
	took := make([]time.Duration, n)
	for i := range took {
		start := time.Now()
		if _, err := f.Write(rec); err != nil {
			return nil, fmt.Errorf("benchfloor: append: %w", err)
		}
		if err := f.Sync(); err != nil {
			return nil, fmt.Errorf("benchfloor: fsync: %w", err)
		}
		took[i] = time.Since(start)
	}
	return took, nil
}

// RoundTrips sends RecordSize bytes n times over a loopback TCP
// connection to an echo and returns how long each took to come back.
func RoundTrips(n int) ([]time.Duration, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("benchfloor: %w", err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		_, _ = io.Copy(c, c)
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		return nil, fmt.Errorf("benchfloor: %w", err)
	}
	defer c.Close()
	msg, reply := make([]byte, RecordSize), make([]byte, RecordSize)
	took := make([]time.Duration, n)
	for i := range took {
		start := time.Now()
		if _, err := c.Write(msg); err != nil {
			return nil, fmt.Errorf("benchfloor: send: %w", err)
		}
		if _, err := io.ReadFull(c, reply); err != nil {
			return nil, fmt.Errorf("benchfloor: echo: %w", err)
		}
		took[i] = time.Since(start)
	}
	return took, nil
}

// Percentile returns the value at quantile q (0..1) of ds, nearest rank
// (0 for none); ds is left as it was.
func Percentile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(q*float64(len(s))+0.999999) - 1 // ceil(q*n)-th value
	return s[max(0, min(i, len(s)-1))]
}
