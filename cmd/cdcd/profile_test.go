package main

import (
	"bytes"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// TestPeakHeapProfileFollowsTheLiveHeap: the peak profile is written once the live heap is measured and
// again when it grows by more than a tenth.
func TestPeakHeapProfileFollowsTheLiveHeap(t *testing.T) {
	path := filepath.Join(t.TempDir(), "heap.peak")
	stop := watchPeakHeap(path, slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer stop()
	waitWritten := func(after time.Time) []byte {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			runtime.GC()
			if st, err := os.Stat(path); err == nil && st.ModTime().After(after) && st.Size() > 0 {
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				return b
			}
		}
		t.Fatalf("%s not written", path)
		return nil
	}
	first := waitWritten(time.Time{})
	if !bytes.HasPrefix(first, []byte{0x1f, 0x8b}) {
		t.Fatalf("the peak profile is not a gzipped pprof profile: % x", first[:min(len(first), 4)])
	}
	st, _ := os.Stat(path)
	grown := make([][]byte, 64)
	for i := range grown {
		grown[i] = make([]byte, 1<<20) // 64 MiB live: far more than a tenth above a test binary's heap
	}
	waitWritten(st.ModTime())
	runtime.KeepAlive(grown)
}
