package testenv

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// LockGoldens holds, until t ends, the lock e2e/debezium/goldens.sh takes ($CDCD_E2E_DIR/goldens.lock):
// the golden replays use the fixed database, slot and topic names the goldens were written with, so two
// replays, or a replay and a golden run, must not overlap — on a shared test bed another engineer's run
// may be under way. It waits for the lock as long as t's deadline allows.
func LockGoldens(t testing.TB) {
	t.Helper()
	dir := stateDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(dir, "goldens.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		t.Fatalf("locking %s: %v", f.Name(), err)
	}
	t.Cleanup(func() { f.Close() }) // closing the file releases the lock
}
