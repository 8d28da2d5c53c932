package session

import (
	"net"
	"os"
	"strconv"
	"syscall"
)

// openFDs counts this process's open file descriptors (Linux /proc).
func openFDs() int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(ents)
}

// maxFDs is the soft RLIMIT_NOFILE.
func maxFDs() uint64 {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return 0
	}
	return r.Cur
}

func portOf(a net.Addr) string {
	if a == nil {
		return ""
	}
	_, p, _ := net.SplitHostPort(a.String())
	return p
}

// hexID formats a session id as ZooKeeper logs it.
func hexID(id int64) string { return "0x" + strconv.FormatUint(uint64(id), 16) }
