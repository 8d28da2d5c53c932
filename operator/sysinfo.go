package operator

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/zkraft/zkraft/jute"
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

// opName is ZooKeeper's short name of an operation in cons output.
func opName(op jute.Op) string {
	switch op {
	case 0:
		return "NA"
	case jute.OpPing:
		return "PING"
	case jute.OpCreate, jute.OpCreate2, jute.OpCreateContainer, jute.OpCreateTTL:
		return "CREA"
	case jute.OpDelete:
		return "DELE"
	case jute.OpSetData:
		return "SETD"
	case jute.OpGetData:
		return "GETD"
	case jute.OpExists:
		return "EXIS"
	case jute.OpGetChildren, jute.OpGetChildren2:
		return "GETC"
	case jute.OpGetACL:
		return "GETA"
	case jute.OpSetACL:
		return "SETA"
	case jute.OpSync:
		return "SYNC"
	case jute.OpMulti:
		return "MULT"
	case jute.OpMultiRead:
		return "MLTR"
	case jute.OpSetWatches, jute.OpSetWatches2:
		return "SETW"
	case jute.OpCloseSession:
		return "CLOS"
	}
	return "OTHR"
}

// dirSize sums the sizes of the files under dir (dirs, conf).
func dirSize(dir string) int64 {
	if dir == "" {
		return 0
	}
	var total int64
	_ = filepath.Walk(dir, func(_ string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			total += info.Size()
		}
		return nil
	})
	return total
}
