package regularfile

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A device, a FIFO (with no writer: opening it for reading would wait for one), a directory and a file over
// the bound are refused at once, by Read and, without opening, by Check; a regular file up to the bound is
// read whole, and a missing path is left to Check's caller.
func TestOnlyBoundedRegularFilesAreRead(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("12345678"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing")
	for _, tc := range []struct {
		path              string
		limit             int64
		readErr, checkErr error
	}{
		{"/dev/zero", 1 << 20, ErrNotRegular, ErrNotRegular},
		{fifo, 1 << 20, ErrNotRegular, ErrNotRegular},
		{dir, 1 << 20, ErrNotRegular, ErrNotRegular},
		{file, 7, ErrTooLarge, ErrTooLarge},
		{file, 8, nil, nil},
		{missing, 8, os.ErrNotExist, nil},
	} {
		data, err := Read(tc.path, tc.limit)
		if !errors.Is(err, tc.readErr) || err == nil && string(data) != "12345678" {
			t.Errorf("Read(%s, %d) = %q, %v; want error %v", tc.path, tc.limit, data, err, tc.readErr)
		}
		if err := Check(tc.path, tc.limit); !errors.Is(err, tc.checkErr) {
			t.Errorf("Check(%s, %d): %v, want %v", tc.path, tc.limit, err, tc.checkErr)
		}
	}
}
