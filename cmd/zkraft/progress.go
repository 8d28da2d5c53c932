package main

import (
	"fmt"
	"io"
	"time"
)

// progress reports a long transfer on stderr: a line a second once it
// has run for a second (a short one prints nothing), and one at the end.
type progress struct {
	w       io.Writer
	what    string
	total   int64 // -1 if unknown
	done    int64
	start   time.Time
	last    time.Time
	printed bool
}

func newProgress(w io.Writer, what string, total int64) *progress {
	now := time.Now()
	return &progress{w: w, what: what, total: total, start: now, last: now}
}

// Write counts p (io.Writer, for io.TeeReader).
func (p *progress) Write(b []byte) (int, error) {
	p.done += int64(len(b))
	if now := time.Now(); now.Sub(p.last) >= time.Second {
		p.last = now
		p.print()
	}
	return len(b), nil
}

// finish prints the last line if any was printed.
func (p *progress) finish() {
	if p.printed {
		p.print()
	}
}

func (p *progress) print() {
	p.printed = true
	elapsed := time.Since(p.start).Round(100 * time.Millisecond)
	if p.total > 0 {
		fmt.Fprintf(p.w, "%s: %s of %s (%d%%) in %s\n", p.what, mib(p.done), mib(p.total), p.done*100/p.total, elapsed)
		return
	}
	fmt.Fprintf(p.w, "%s: %s in %s\n", p.what, mib(p.done), elapsed)
}

// mib formats a byte count for people.
func mib(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// stage announces a step of a long run on stderr when large says the
// input makes it worth it.
func stage(w io.Writer, large bool, format string, args ...any) {
	if large {
		fmt.Fprintf(w, format+"\n", args...)
	}
}

// bytesAndMiB is "995 bytes", or "12345 bytes (12.1 KiB)" from 1 KiB on.
func bytesAndMiB(n int64) string {
	if n < 1<<10 {
		return fmt.Sprintf("%d bytes", n)
	}
	return fmt.Sprintf("%d bytes (%s)", n, mib(n))
}
