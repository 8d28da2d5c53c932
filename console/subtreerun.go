package console

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/internal/cli/zkjson"
)

// Multi runs ops as one ZooKeeper multi, timed as "multi".
func (z *zkc) Multi(ops ...any) ([]zk.MultiResponse, error) {
	defer z.time("multi", time.Now())
	return z.conn.Multi(ops...)
}

// batcher sends a job's writes as multis: all of them in one when atomic
// (at flush), else one every batchOps operations or batchBytes bytes.
type batcher struct {
	ctx    context.Context
	conn   *zkc
	j      *job
	phase  string
	atomic bool
	total  int
	done   int

	ops   []any
	paths []string
	size  int
}

// add queues op on path p, of about size bytes, and sends the batch when
// it is full.
func (b *batcher) add(p string, op any, size int) error {
	b.ops = append(b.ops, op)
	b.paths = append(b.paths, p)
	b.size += size
	if !b.atomic && (len(b.ops) >= batchOps || b.size >= batchBytes) {
		return b.flush()
	}
	return nil
}

// flush sends the queued operations as one multi; an error names the
// path of the operation ZooKeeper refused.
func (b *batcher) flush() error {
	if len(b.ops) == 0 {
		return nil
	}
	if err := b.ctx.Err(); err != nil {
		return err
	}
	res, err := b.conn.Multi(b.ops...)
	if err != nil {
		at := b.paths[0]
		for i, r := range res {
			if r.Error != nil && errors.Is(r.Error, err) && i < len(b.paths) {
				at = b.paths[i]
				break
			}
		}
		return fmt.Errorf("%s: %w", at, err)
	}
	b.done += len(b.ops)
	b.j.progress(b.phase, b.done, b.total, b.paths[len(b.paths)-1])
	b.ops, b.paths, b.size = b.ops[:0], b.paths[:0], 0
	return nil
}

// check surveys root for a job and refuses unless it is what the
// confirmation showed.
func check(ctx context.Context, conn *zkc, j *job, root string, expect expectJSON) (surveyJSON, error) {
	j.progress("checking", 0, expect.Count, root)
	s, err := survey(ctx, conn, root)
	if err != nil {
		return s, err
	}
	if s.Count != expect.Count || s.Fingerprint != expect.Fingerprint {
		return s, errChanged
	}
	return s, nil
}

// runDelete deletes root's subtree, children first: in one multi when it
// is small (atomic), else in batches as it walks (each node at the
// version the walk saw, so one changed meanwhile stops the job).
func runDelete(ctx context.Context, conn *zkc, j *job, root string, expect expectJSON) error {
	s, err := check(ctx, conn, j, root, expect)
	if err != nil {
		return err
	}
	j.mu.Lock()
	j.atomic = s.Atomic
	j.mu.Unlock()
	b := &batcher{ctx: ctx, conn: conn, j: j, phase: "deleting", atomic: s.Atomic, total: s.Count}
	fp := newFingerprint()
	err = walk(ctx, conn, root, func(p string, st *zk.Stat) error {
		fp.add(p, st)
		return nil
	}, func(p string, st *zk.Stat) error {
		return b.add(p, &zk.DeleteRequest{Path: p, Version: st.Version}, len(p)+nodeOverhead)
	})
	if err != nil {
		return err
	}
	if s.Atomic && (fp.count != s.Count || fp.sum() != s.Fingerprint) {
		return errChanged
	}
	return b.flush()
}

// runCopy copies from's subtree to to, parents first, data and ACL node
// by node as the login reads them; ephemeral nodes are left out (listed
// in the job). A move then deletes the source (a subtree with ephemerals
// is refused). A small subtree goes in one multi, creates and deletes
// together; a larger one is copied in batches, checked against the
// confirmation again, then deleted in batches: not atomic.
func runCopy(ctx context.Context, conn *zkc, j *job, from, to string, expect expectJSON, move bool) error {
	s, err := check(ctx, conn, j, from, expect)
	if err != nil {
		return err
	}
	if move && s.EphemeralCount > 0 {
		return errEphemeralMove
	}
	total := s.Count - s.EphemeralCount
	if move {
		total += s.Count
	}
	j.mu.Lock()
	j.atomic = s.Atomic
	j.mu.Unlock()
	b := &batcher{ctx: ctx, conn: conn, j: j, phase: "copying", atomic: s.Atomic, total: total}
	var deletes []any // atomic moves: the source's deletes, children first
	var delPaths []string
	fp := newFingerprint()
	pre := func(p string, st *zk.Stat) error {
		fp.add(p, st)
		if st.EphemeralOwner != 0 {
			j.skip(p)
			return nil
		}
		data, _, err := conn.Get(p)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		acl, _, err := conn.GetACL(p)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		target := to + p[len(from):]
		return b.add(target, &zk.CreateRequest{Path: target, Data: data, Acl: acl}, len(data)+len(target)+nodeOverhead)
	}
	var post walkFunc
	if move && s.Atomic {
		post = func(p string, st *zk.Stat) error {
			deletes = append(deletes, &zk.DeleteRequest{Path: p, Version: st.Version})
			delPaths = append(delPaths, p)
			return nil
		}
	}
	if err := walk(ctx, conn, from, pre, post); err != nil {
		return err
	}
	if fp.count != s.Count || fp.sum() != s.Fingerprint {
		if s.Atomic {
			return errChanged
		}
		return fmt.Errorf("the source changed while it was copied: %s holds the copy as it was read, %s is untouched: %w", to, from, errChanged)
	}
	if s.Atomic {
		for i, op := range deletes {
			b.ops, b.paths = append(b.ops, op), append(b.paths, delPaths[i])
		}
		return b.flush()
	}
	if err := b.flush(); err != nil {
		return err
	}
	if !move {
		return nil
	}
	b.phase = "deleting"
	err = walk(ctx, conn, from, nil, func(p string, st *zk.Stat) error {
		return b.add(p, &zk.DeleteRequest{Path: p, Version: st.Version}, len(p)+nodeOverhead)
	})
	if err != nil {
		return err
	}
	return b.flush()
}

// runImport creates a subtree file's nodes under to, parents first: in
// one multi when small, else in batches (not atomic).
func runImport(ctx context.Context, conn *zkc, j *job, t *zkjson.Tree, to string) error {
	var estimate int64
	for _, n := range t.Nodes {
		estimate += int64(len(n.Data) + 2*len(n.Path) + len(to) + nodeOverhead)
	}
	atomic := len(t.Nodes) <= maxAtomicNodes && estimate <= maxAtomicBytes
	j.mu.Lock()
	j.atomic = atomic
	j.mu.Unlock()
	b := &batcher{ctx: ctx, conn: conn, j: j, phase: "importing", atomic: atomic, total: len(t.Nodes)}
	j.progress("importing", 0, len(t.Nodes), to)
	for _, n := range t.Nodes {
		acl, err := n.ZK()
		if err != nil {
			return err
		}
		p := zkjson.Under(to, n.Path)
		if err := b.add(p, &zk.CreateRequest{Path: p, Data: n.Data, Acl: acl}, len(n.Data)+len(p)+nodeOverhead); err != nil {
			return err
		}
	}
	if err := b.flush(); err != nil {
		return err
	}
	for _, p := range t.Skipped {
		j.skip(p)
	}
	return nil
}
