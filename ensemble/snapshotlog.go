package ensemble

import (
	"io"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/zkraft/zkraft/backend"
	"github.com/zkraft/zkraft/znode"
)

// logRestore logs a snapshot that replaced the tree: "snapshot installed"
// for a leader's (Raft is running), "snapshot restored" for the member's
// own at start.
func (f *fsm) logRestore(t *znode.Tree, took time.Duration) {
	msg, kind := "snapshot restored", backend.SnapshotRestored
	if f.running.Load() {
		msg, kind = "snapshot installed", backend.SnapshotInstalled
	}
	if f.snapshotTook != nil {
		f.snapshotTook(kind, took)
	}
	fields := []zap.Field{zap.Int64("zxid", t.LastZxid()), zap.Int("nodes", t.Stats().Nodes)}
	if f.newestSnapshot != nil {
		if meta, ok := f.newestSnapshot(); ok {
			fields = append(fields, zap.Uint64("index", meta.Index), zap.Uint64("term", meta.Term), zap.Int64("bytes", meta.Size))
		}
	}
	f.log.Info(msg, append(fields, zap.Int64("durationMs", took.Milliseconds()))...)
}

// snapshotIDPosition reads the term and index out of a hashicorp/raft
// file snapshot's id (term-index-unixMillis); zeros if it is not one.
func snapshotIDPosition(id string) (term, index uint64) {
	parts := strings.Split(id, "-")
	if len(parts) != 3 {
		return 0, 0
	}
	term, _ = strconv.ParseUint(parts[0], 10, 64)
	index, _ = strconv.ParseUint(parts[1], 10, 64)
	return term, index
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
