// Package benchfloor measures, on the machine a benchmark runs on, the
// least time a replicated write can take there: one fsync of a small
// append to a file in the directory the members log to, plus one round
// trip between two processes on loopback. scripts/benchcompare prints
// floor = fsync p50 + round trip p50 beside its low-concurrency write rows,
// against which a write's p50 is judged (a leader appends and fsyncs its
// log while its followers do the same, and answers after one round trip
// to a follower).
package benchfloor

import (
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"time"
)

// RecordSize is the size of each append the fsync measurement makes:
// about one small write's log record.
const RecordSize = 256

// Floor is what Measure found.
type Floor struct {
	FsyncP50, FsyncP99 time.Duration // append RecordSize bytes and fsync
	RTTP50, RTTP99     time.Duration // loopback TCP round trip of RecordSize bytes
	Samples            int           // of each
}

// Total is the floor of one replicated write: fsync p50 plus round-trip
// p50.
func (f Floor) Total() time.Duration { return f.FsyncP50 + f.RTTP50 }

// String describes f in one line.
func (f Floor) String() string {
	return fmt.Sprintf("floor %.3f ms = fsync p50 %.3f ms (p99 %.3f ms) + loopback round trip p50 %.3f ms (p99 %.3f ms), %d samples each",
		Ms(f.Total()), Ms(f.FsyncP50), Ms(f.FsyncP99), Ms(f.RTTP50), Ms(f.RTTP99), f.Samples)
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
	rtts, err := RoundTrips(n)
	if err != nil {
		return Floor{}, err
	}
	return Floor{
		FsyncP50: Percentile(syncs, 0.5), FsyncP99: Percentile(syncs, 0.99),
		RTTP50: Percentile(rtts, 0.5), RTTP99: Percentile(rtts, 0.99), Samples: n,
	}, nil
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
