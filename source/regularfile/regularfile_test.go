package regularfile

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A device, a FIFO (with no writer: opening it for reading would wait for one) and a file over the bound are
// refused at once; a regular file up to the bound is read whole.
func TestReadRefusesWhatIsNoBoundedRegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("12345678"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path  string
		limit int64
		want  error
	}{
		{"/dev/zero", 1 << 20, ErrNotRegular},
		{fifo, 1 << 20, ErrNotRegular},
		{dir, 1 << 20, ErrNotRegular},
		{file, 7, ErrTooLarge},
	} {
		if _, err := Read(tc.path, tc.limit); !errors.Is(err, tc.want) {
			t.Errorf("Read(%s, %d): %v, want %v", tc.path, tc.limit, err, tc.want)
		}
	}
	if data, err := Read(file, 8); err != nil || string(data) != "12345678" {
		t.Errorf("Read(file, 8) = %q, %v", data, err)
	}
	// Check says the same without opening; a missing path is left to the reader's own words.
	for _, tc := range []struct {
		path  string
		limit int64
		want  error
	}{
		{"/dev/zero", 1 << 20, ErrNotRegular},
		{fifo, 1 << 20, ErrNotRegular},
		{file, 7, ErrTooLarge},
		{file, 8, nil},
		{filepath.Join(dir, "missing"), 8, nil},
	} {
		if err := Check(tc.path, tc.limit); !errors.Is(err, tc.want) {
			t.Errorf("Check(%s, %d): %v, want %v", tc.path, tc.limit, err, tc.want)
		}
	}
}
