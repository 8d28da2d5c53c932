package storage

import (
	"errors"
	"fmt"
)

// ErrCorrupt is matched (errors.Is) by every error that reports damaged
// storage: a file the member must not start from as it is.
var ErrCorrupt = errors.New("storage: corrupt")

// CorruptError names a damaged file and where in it the damage is. A
// member refuses to start on one; `zkraft rejoin` moves the file aside so
// the member catches up from its peers instead.
type CorruptError struct {
	// Path is the damaged file (or snapshot directory).
	Path string
	// Offset is the byte offset of the damage, -1 when it is not a place
	// in the file (a snapshot whose checksum does not match).
	Offset int64
	// Reason says what is wrong.
	Reason string
}

// Error implements error.
func (e *CorruptError) Error() string {
	at := ""
	if e.Offset >= 0 {
		at = fmt.Sprintf(" at byte offset %d", e.Offset)
	}
	return fmt.Sprintf("storage: %s is corrupt%s: %s; refusing to start "+
		"(to recover, run `zkraft rejoin` on this member: it moves the damaged files aside and the member catches up from its peers)",
		e.Path, at, e.Reason)
}

// Is makes errors.Is(err, ErrCorrupt) true.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }
