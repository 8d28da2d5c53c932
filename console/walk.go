package console

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash"
	"hash/fnv"
	"strconv"

	"github.com/go-zookeeper/zk"
)

// walkFunc is called for each node of a walk with the Stat its listing
// returned.
type walkFunc func(p string, st *zk.Stat) error

// walk visits root and everything below it in sorted depth-first order,
// calling pre before a node's children and post after them (either may be
// nil). It holds one directory listing per level, never the whole
// subtree, so a subtree of millions of nodes walks in bounded memory. It
// stops at ctx's end and at the first error, which names the path.
func walk(ctx context.Context, conn *zkc, root string, pre, post walkFunc) error {
	type frame struct {
		dir  string
		st   *zk.Stat
		kids []string
		i    int
	}
	open := func(p string) (frame, error) {
		kids, st, err := conn.Children(p)
		if err != nil {
			return frame{}, fmt.Errorf("%s: %w", p, err)
		}
		sortNames(kids)
		if pre != nil {
			if err := pre(p, st); err != nil {
				return frame{}, err
			}
		}
		return frame{dir: p, st: st, kids: kids}, nil
	}
	top, err := open(root)
	if err != nil {
		return err
	}
	stack := []frame{top}
	for len(stack) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		f := &stack[len(stack)-1]
		if f.i == len(f.kids) {
			stack = stack[:len(stack)-1]
			if post != nil {
				if err := post(f.dir, f.st); err != nil {
					return err
				}
			}
			continue
		}
		p := childPath(f.dir, f.kids[f.i])
		f.i++
		next, err := open(p)
		if err != nil {
			return err
		}
		stack = append(stack, next)
	}
	return nil
}

// fingerprint sums a subtree as a walk sees it (each node's path, mzxid,
// cversion, aversion and owner, in walk order), so that a job can tell
// whether the subtree is still the one its confirmation showed without
// keeping its paths.
type fingerprint struct {
	h     hash.Hash64
	count int
	bytes int64 // data bytes
}

func newFingerprint() *fingerprint { return &fingerprint{h: fnv.New64a()} }

// add notes one node.
func (f *fingerprint) add(p string, st *zk.Stat) {
	var b [28]byte
	binary.BigEndian.PutUint64(b[0:], uint64(st.Mzxid))
	binary.BigEndian.PutUint32(b[8:], uint32(st.Cversion))
	binary.BigEndian.PutUint32(b[12:], uint32(st.Aversion))
	binary.BigEndian.PutUint64(b[16:], uint64(st.EphemeralOwner))
	binary.BigEndian.PutUint32(b[24:], uint32(len(p)))
	_, _ = f.h.Write(b[:])
	_, _ = f.h.Write([]byte(p))
	f.count++
	f.bytes += int64(st.DataLength)
}

// sum is the fingerprint as the page carries it.
func (f *fingerprint) sum() string { return strconv.FormatUint(f.h.Sum64(), 16) }
