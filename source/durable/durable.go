// Package durable replaces small files whole, so that a crash never leaves one torn: the offsets file of a
// standalone worker and the slot guardian's ledger are written this way.
package durable

import (
	"os"
	"path/filepath"
)

// WriteFile replaces the file at path with data. The data goes to a temporary file in path's directory,
// which is fsynced, renamed over path, and then the directory is fsynced. So:
//
//   - at every moment, a crash included, path holds either its old content or data, never part of either;
//   - once WriteFile returns nil, data is on disk and survives a crash or a power loss (as far as the disk
//     honours fsync).
//
// A new file gets the permission bits of perm exactly (the umask does not apply); an existing file keeps
// its own. A symbolic link at path is replaced by the file, not followed.
//
// On error the temporary file is gone, and path holds its old content, or data when only the final sync of
// the directory failed (the replacement then may not survive a crash). WriteFile blocks for the disk;
// callers that write one path from several goroutines serialise the calls, or the last rename wins.
func WriteFile(path string, data []byte, perm os.FileMode) (err error) {
	dir := filepath.Dir(path)
	if info, statErr := os.Stat(path); statErr == nil {
		perm = info.Mode()
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	renamed := false
	defer func() {
		if err != nil && !renamed {
			_ = tmp.Close() // a second Close after a failed one only reports that it was closed
			_ = os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return err
	}
	if err = tmp.Chmod(perm.Perm()); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	renamed = true
	return syncDir(dir)
}

// syncDir makes a rename in dir durable: the new directory entry is on disk only once the directory is.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	if err := d.Sync(); err != nil {
		_ = d.Close()
		return err
	}
	return d.Close()
}
