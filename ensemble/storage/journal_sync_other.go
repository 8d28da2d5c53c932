//go:build !linux

package storage

import "fmt"

// sync makes the journal's data durable.
func (j *Journal) sync() error {
	j.Syncs.Add(1)
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("storage: journal sync: %w", err)
	}
	return nil
}
