//go:build !linux

package storage

// Datasync is fsync where there is no fdatasync.
func (f osFile) Datasync() error { return f.Sync() }
