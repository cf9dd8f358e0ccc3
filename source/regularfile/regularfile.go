// Package regularfile reads files named by configuration — a config provider's secrets, a keystore — that a
// client of the REST API may choose: only regular files, and only up to a bound. A FIFO or a device
// (/dev/zero, a terminal) would block the read, or never end it; a huge file would grow the process.
package regularfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// ErrNotRegular refuses a path that is not a regular file.
var ErrNotRegular = errors.New("not a regular file (only regular files are read)")

// ErrTooLarge refuses a file larger than the bound.
var ErrTooLarge = errors.New("file too large")

// MaxStoreSize bounds a key or certificate store, or a PEM file: a JDK's whole cacerts is about 200 KiB.
const MaxStoreSize = 8 << 20

// Check refuses, without opening it, a path that exists and is not a regular file of at most limit bytes,
// for a file another library reads (a database driver's TLS files). A path that does not exist passes: the
// reader reports it in its own words.
func Check(path string, limit int64) error {
	info, err := os.Stat(path)
	switch {
	case err != nil:
		return nil
	case !info.Mode().IsRegular():
		return ErrNotRegular
	case info.Size() > limit:
		return fmt.Errorf("%w: larger than %d bytes, the most read from one file here", ErrTooLarge, limit)
	}
	return nil
}

// Read returns the content of the regular file at path, of at most limit bytes. It opens without blocking
// (a FIFO's open waits for a writer otherwise) and checks the opened file itself, so a file swapped for a
// FIFO or a device between a check and the read is refused too.
func Read(path string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, ErrNotRegular
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%w: larger than %d bytes, the most read from one file here", ErrTooLarge, limit)
	}
	return data, nil
}
