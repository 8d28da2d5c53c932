package ensemble

import (
	"fmt"

	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// entryVersion prefixes every log entry so the format can evolve.
const entryVersion byte = 1

// entry is a Raft log entry: a znode transaction plus the origin tag that
// lets the proposing member find the request waiting for it. Origins are
// unique per process run, so entries replayed after a restart match no
// waiter.
type entry struct {
	Origin uint64
	Txn    *znode.Txn
}

func (e *entry) encode(w *jute.Writer) {
	w.Raw([]byte{entryVersion})
	w.Long(int64(e.Origin))
	e.Txn.Encode(w)
}

func decodeEntry(b []byte) (entry, error) {
	if len(b) < 9 || b[0] != entryVersion {
		return entry{}, fmt.Errorf("ensemble: log entry of %d bytes: unknown version", len(b))
	}
	r := jute.NewReader(b[1:9])
	origin := uint64(r.Long())
	txn, err := znode.DecodeTxn(b[9:])
	if err != nil {
		return entry{}, fmt.Errorf("ensemble: decode log entry: %w", err)
	}
	return entry{Origin: origin, Txn: txn}, nil
}
