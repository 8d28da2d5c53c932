package storage

import (
	"io"
	"os"
)

// File is what the journal needs of its file: positioned reads and
// writes, its size, a data sync (fdatasync where there is one) and a
// close. *os.File provides all but Datasync; osFile adds it. The
// fault-injection tests put a file that fails on demand in its place.
type File interface {
	io.ReaderAt
	io.WriterAt
	Stat() (os.FileInfo, error)
	// Datasync makes the written data durable (not the timestamps).
	Datasync() error
	Close() error
}

// OpenFileFunc opens (creating, mode 0600) a file for reading and writing.
type OpenFileFunc func(path string) (File, error)

// osFile is a File on the operating system's file.
type osFile struct{ *os.File }

// openOSFile is the OpenFileFunc of real files.
func openOSFile(path string) (File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}
