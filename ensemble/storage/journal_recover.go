package storage

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/hashicorp/raft"
)

// Opening a journal: its file written out, the newest header read, the
// records it names scanned and replayed into the bolt log.

// recover brings inner up to date with the journal and starts a new
// generation.
func (j *Journal) recover(path string) error {
	st, err := j.f.Stat()
	if err != nil {
		return fmt.Errorf("storage: journal: %w", err)
	}
	if st.Size() < j.size {
		// New, or from a run with a smaller size: what it holds is still
		// read below; the rest is written out now.
		if err := j.fill(st.Size()); err != nil {
			return err
		}
		if err := syncDir(filepath.Dir(path)); err != nil {
			return err
		}
	} else if st.Size() > j.size {
		j.size = st.Size()
	}
	h, ok, err := j.checkedHeader()
	if err != nil {
		return err
	}
	if ok {
		var logs []*raft.Log
		if h.prev != 0 {
			if logs, err = j.scan(h.gen-1, h.prev); err != nil {
				return err
			}
		}
		cur, err := j.scan(h.gen, h.start)
		if err != nil {
			return err
		}
		if len(logs) > 0 && len(cur) > 0 && cur[0].Index != logs[len(logs)-1].Index+1 {
			return fmt.Errorf("storage: journal generation %d starts at entry %d after %d", h.gen, cur[0].Index, logs[len(logs)-1].Index)
		}
		if err := j.replay(append(logs, cur...)); err != nil {
			return err
		}
	}
	j.gen = h.gen
	return j.begin(false)
}

// fill writes zeros from offset from to the journal's size and syncs.
func (j *Journal) fill(from int64) error {
	zeros := make([]byte, 1<<20)
	for off := from; off < j.size; {
		n := min(int64(len(zeros)), j.size-off)
		if _, err := j.f.WriteAt(zeros[:n], off); err != nil {
			return fmt.Errorf("storage: journal fill: %w", err)
		}
		off += n
	}
	if err := j.f.Datasync(); err != nil {
		return fmt.Errorf("storage: journal sync: %w", err)
	}
	return nil
}

// decodeJournalPack decodes a record's payload.
func decodeJournalPack(payload []byte) (*pack, error) {
	body, err := checkPack(payload)
	if err != nil {
		return nil, err
	}
	d := packDecoder{b: body}
	first, count := d.uvarint(), d.uvarint()
	if d.err != nil || count == 0 || first == 0 {
		return nil, errBadPack
	}
	return decodeRecord(&raft.Log{Index: first + count - 1, Type: packLogType, Data: payload})
}

// replay stores into inner the journal's entries it lacks.
func (j *Journal) replay(logs []*raft.Log) error {
	last, err := j.inner.LastIndex()
	if err != nil {
		return fmt.Errorf("storage: log last index: %w", err)
	}
	i := 0
	for i < len(logs) && logs[i].Index <= last {
		i++
	}
	logs = logs[i:]
	if len(logs) == 0 {
		return nil
	}
	if last != 0 && logs[0].Index != last+1 {
		return fmt.Errorf("storage: journal continues at entry %d, the log ends at %d", logs[0].Index, last)
	}
	if err := j.inner.StoreLogs(logs); err != nil {
		return fmt.Errorf("storage: journal replay: %w", err)
	}
	return nil
}

// syncDir makes a directory entry durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("storage: open %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("storage: sync %s: %w", dir, err)
	}
	return nil
}
