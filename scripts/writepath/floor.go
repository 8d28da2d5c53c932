package main

import (
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// floor is what one replicated write cannot go below on this machine: one
// append made durable, one round trip between two members.
type floor struct {
	fsyncP50, fsyncP99 time.Duration
	rttP50             time.Duration
}

// measureFloor appends 256 bytes and fdatasyncs them 1000 times in dir
// (a preallocated file, as the members' journals are), and times 1000
// round trips of 64 bytes over a loopback TCP connection.
func measureFloor(dir string) (floor, error) {
	f, err := os.Create(filepath.Join(dir, "floor"))
	if err != nil {
		return floor{}, err
	}
	defer f.Close()
	const n, size = 1000, 256
	if _, err := f.Write(make([]byte, n*size)); err != nil {
		return floor{}, err
	}
	if err := f.Sync(); err != nil {
		return floor{}, err
	}
	rec := make([]byte, size)
	syncs := make([]time.Duration, n)
	for i := range syncs {
		start := time.Now()
		if _, err := f.WriteAt(rec, int64(i*size)); err != nil {
			return floor{}, err
		}
		if err := datasync(f); err != nil {
			return floor{}, err
		}
		syncs[i] = time.Since(start)
	}
	rtts, err := roundTrips(n)
	if err != nil {
		return floor{}, err
	}
	slices.Sort(syncs)
	slices.Sort(rtts)
	return floor{fsyncP50: syncs[n/2], fsyncP99: syncs[n*99/100], rttP50: rtts[n/2]}, nil
}

// roundTrips times n echoes of 64 bytes over loopback TCP.
func roundTrips(n int) ([]time.Duration, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	defer l.Close()
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		_, _ = io.Copy(c, c)
	}()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		return nil, err
	}
	defer c.Close()
	buf := make([]byte, 64)
	out := make([]time.Duration, n)
	for i := range out {
		start := time.Now()
		if _, err := c.Write(buf); err != nil {
			return nil, err
		}
		if _, err := io.ReadFull(c, buf); err != nil {
			return nil, err
		}
		out[i] = time.Since(start)
	}
	return out, nil
}
