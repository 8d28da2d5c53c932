package storage

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/hashicorp/go-msgpack/v2/codec"
	"github.com/hashicorp/raft"
	"go.etcd.io/bbolt"
)

// BoltStore is Raft's log store and stable store in raft.db, a bolt file
// in hashicorp/raft-boltdb/v2's format, which zkraft used as a library
// until its import of the unmaintained github.com/boltdb/bolt (for a
// migration from raft-boltdb v1 that zkraft never ran) put a second bolt
// into the binary:
//
//   - bucket "logs": key the entry's index as a big-endian uint64, value
//     the raft.Log msgpack-encoded by go-msgpack/v2 with time.Time as its
//     MarshalBinary bytes (TimeNotBuiltin, raft-boltdb's default);
//   - bucket "conf": Raft's stable store, values as given; SetUint64 as
//     a big-endian uint64.
//
// The records are raft-boltdb's byte for byte (TestRaftDBFixtureIsTheHistory
// compares them with a file raft-boltdb v2.3.1 wrote), so a data directory
// opens with either. Every call is one bolt transaction; one writer at a
// time, any number of readers beside it (bolt's rule).
type BoltStore struct {
	db *bbolt.DB
}

var (
	_ raft.LogStore    = (*BoltStore)(nil)
	_ raft.StableStore = (*BoltStore)(nil)
)

var (
	bucketLogs = []byte("logs")
	bucketConf = []byte("conf")
)

// ErrKeyNotFound is Get's error for a key the stable store does not hold.
// Raft tells a fresh store by its text, "not found".
var ErrKeyNotFound = errors.New("not found")

// The msgpack handles, configured once: a handle is safe for concurrent
// use once configured (go-msgpack's codec/doc.go).
var (
	logEncodeHandle = &codec.MsgpackHandle{BasicHandle: codec.BasicHandle{TimeNotBuiltin: true}}
	logDecodeHandle = &codec.MsgpackHandle{}
)

// boltFileMode is the mode of a raft.db bolt creates.
const boltFileMode = 0o600

// OpenBoltStore opens (or creates) the bolt file at path with opts (nil:
// bolt's defaults) and, unless opts.ReadOnly, creates the two buckets.
func OpenBoltStore(path string, opts *bbolt.Options) (*BoltStore, error) {
	db, err := bbolt.Open(path, boltFileMode, opts)
	if err != nil {
		return nil, err
	}
	if opts != nil && opts.ReadOnly {
		return &BoltStore{db: db}, nil
	}
	err = db.Update(func(tx *bbolt.Tx) error {
		for _, name := range [][]byte{bucketLogs, bucketConf} {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	return &BoltStore{db: db}, nil
}

// Close closes the bolt file.
func (s *BoltStore) Close() error { return s.db.Close() }

// FirstIndex implements raft.LogStore: the lowest key, 0 when empty.
func (s *BoltStore) FirstIndex() (uint64, error) {
	return s.endIndex(func(c *bbolt.Cursor) ([]byte, []byte) { return c.First() })
}

// LastIndex implements raft.LogStore: the highest key, 0 when empty.
func (s *BoltStore) LastIndex() (uint64, error) {
	return s.endIndex(func(c *bbolt.Cursor) ([]byte, []byte) { return c.Last() })
}

func (s *BoltStore) endIndex(end func(*bbolt.Cursor) ([]byte, []byte)) (uint64, error) {
	var idx uint64
	err := s.db.View(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketLogs)
		if b == nil {
			return nil
		}
		if k, _ := end(b.Cursor()); k != nil {
			idx = binary.BigEndian.Uint64(k)
		}
		return nil
	})
	return idx, err
}

// GetLog implements raft.LogStore.
func (s *BoltStore) GetLog(idx uint64, log *raft.Log) error {
	return s.db.View(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketLogs)
		if b == nil {
			return raft.ErrLogNotFound
		}
		v := b.Get(binary.BigEndian.AppendUint64(nil, idx))
		if v == nil {
			return raft.ErrLogNotFound
		}
		// The decoder copies Data and Extensions out of bolt's map.
		return codec.NewDecoderBytes(v, logDecodeHandle).Decode(log)
	})
}

// StoreLog implements raft.LogStore.
func (s *BoltStore) StoreLog(log *raft.Log) error {
	return s.StoreLogs([]*raft.Log{log})
}

// StoreLogs implements raft.LogStore: every entry in one transaction.
func (s *BoltStore) StoreLogs(logs []*raft.Log) error {
	return s.db.Update(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketLogs)
		for _, l := range logs {
			var val []byte
			if err := codec.NewEncoderBytes(&val, logEncodeHandle).Encode(l); err != nil {
				return fmt.Errorf("storage: encode log entry %d: %w", l.Index, err)
			}
			if err := b.Put(binary.BigEndian.AppendUint64(nil, l.Index), val); err != nil {
				return err
			}
		}
		return nil
	})
}

// DeleteRange implements raft.LogStore: the keys min..max, inclusive, in
// one transaction.
func (s *BoltStore) DeleteRange(min, max uint64) error {
	return s.db.Update(func(tx *bbolt.Tx) error {
		c := tx.Bucket(bucketLogs).Cursor()
		for k, _ := c.Seek(binary.BigEndian.AppendUint64(nil, min)); k != nil; k, _ = c.Next() {
			if binary.BigEndian.Uint64(k) > max {
				break
			}
			if err := c.Delete(); err != nil {
				return err
			}
		}
		return nil
	})
}

// Set implements raft.StableStore.
func (s *BoltStore) Set(k, v []byte) error {
	return s.db.Update(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketConf).Put(k, v)
	})
}

// Get implements raft.StableStore: a copy of the value, or ErrKeyNotFound.
func (s *BoltStore) Get(k []byte) ([]byte, error) {
	var val []byte
	err := s.db.View(func(tx *bbolt.Tx) error {
		var v []byte
		if b := tx.Bucket(bucketConf); b != nil {
			v = b.Get(k)
		}
		if v == nil {
			return ErrKeyNotFound
		}
		val = append([]byte(nil), v...)
		return nil
	})
	return val, err
}

// SetUint64 implements raft.StableStore.
func (s *BoltStore) SetUint64(k []byte, v uint64) error {
	return s.Set(k, binary.BigEndian.AppendUint64(nil, v))
}

// GetUint64 implements raft.StableStore.
func (s *BoltStore) GetUint64(k []byte) (uint64, error) {
	v, err := s.Get(k)
	if err != nil {
		return 0, err
	}
	if len(v) != 8 {
		return 0, fmt.Errorf("storage: %s holds %d bytes, not a uint64: %w", k, len(v), ErrCorrupt)
	}
	return binary.BigEndian.Uint64(v), nil
}
