//go:build !linux

package ensemble

import "fmt"

// sync makes the journal's data durable.
func (j *journalLogStore) sync() error {
	j.syncs.Add(1)
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("ensemble: journal sync: %w", err)
	}
	return nil
}
