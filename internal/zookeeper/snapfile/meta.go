package snapfile

import (
	"errors"
	"fmt"
	"strconv"
)

// Magic opens every snapshot file zkraft writes; its last byte is the
// format version.
const Magic = "ZKRSNAP1"

// ErrCorrupt is wrapped by every refusal caused by a file's contents.
var ErrCorrupt = errors.New("snapfile: damaged snapshot file")

// Meta is what a snapshot file says about itself, as JSON before its
// digest.
type Meta struct {
	// Zxid is the last transaction the tree holds: the snapshot is a
	// consistent copy of the member's tree at that zxid.
	Zxid Zxid `json:"zxid"`
	// Znodes and Sessions count what the snapshot holds, the root
	// included.
	Znodes   int `json:"znodes"`
	Sessions int `json:"sessions"`
	// SnapshotBytes is the length of the ZooKeeper snapshot inside.
	SnapshotBytes int64 `json:"snapshot_bytes"`
	// Source is where it was saved from (the AdminServer's URL), SavedAt
	// when (RFC 3339, UTC).
	Source  string `json:"source,omitempty"`
	SavedAt string `json:"saved_at,omitempty"`
}

// Zxid is a zxid that reads and writes in JSON as ZooKeeper prints it,
// "0x1f".
type Zxid int64

// String is the zxid in hex, "0x1f".
func (z Zxid) String() string { return "0x" + strconv.FormatInt(int64(z), 16) }

// MarshalText writes the zxid as String does.
func (z Zxid) MarshalText() ([]byte, error) { return []byte(z.String()), nil }

// UnmarshalText reads "0x1f" (or a decimal number).
func (z *Zxid) UnmarshalText(b []byte) error {
	v, err := strconv.ParseInt(string(b), 0, 64)
	if err != nil {
		return fmt.Errorf("zxid %q: %w", b, err)
	}
	*z = Zxid(v)
	return nil
}
