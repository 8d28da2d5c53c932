//go:build unix

package netguard

import (
	"fmt"
	"syscall"
)

// RaiseFileLimit raises the process's soft RLIMIT_NOFILE to its hard limit
// and returns the soft limit now in force, the hard limit and the soft
// limit it found. Go's runtime already raises it at start on Unix (since Go
// 1.19, to one below the hard limit, which this leaves alone); this makes
// sure of it, wherever the process was started from.
func RaiseFileLimit() (soft, hard, was uint64, err error) {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return 0, 0, 0, fmt.Errorf("netguard: read the file limit: %w", err)
	}
	was = r.Cur
	if r.Max > 0 && r.Cur < r.Max-1 {
		raised := r
		raised.Cur = r.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised); err != nil {
			return r.Cur, r.Max, was, fmt.Errorf("netguard: raise the file limit to %d: %w", r.Max, err)
		}
		r = raised
	}
	return r.Cur, r.Max, was, nil
}
