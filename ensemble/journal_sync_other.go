//go:build !linux

package ensemble

import "fmt"

// sync makes the journal's data durable.
func (j *journalLogStore) sync() error {
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("ensemble: journal sync: %w", err)
	}
	return nil
}
