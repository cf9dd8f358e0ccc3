package main

import (
	"bytes"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestStartProfilesWritesBothProfiles(t *testing.T) {
	dir := t.TempDir()
	cpu, mem := filepath.Join(dir, "cpu.pprof"), filepath.Join(dir, "mem.pprof")
	t.Setenv("CDCD_CPUPROFILE", cpu)
	t.Setenv("CDCD_MEMPROFILE", mem)
	stop := startProfiles(slog.New(slog.NewTextHandler(io.Discard, nil)))
	sink := make([][]byte, 0, 64)
	for range 64 {
		sink = append(sink, make([]byte, 4096))
	}
	_ = sink
	stop()
	for _, path := range []string{cpu, mem} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		// pprof profiles are gzip-compressed protobufs.
		if !bytes.HasPrefix(b, []byte{0x1f, 0x8b}) {
			t.Errorf("%s is not a gzip-compressed profile", path)
		}
	}
}

func TestStartProfilesWithoutEnvDoesNothing(t *testing.T) {
	t.Setenv("CDCD_CPUPROFILE", "")
	t.Setenv("CDCD_MEMPROFILE", "")
	var logs bytes.Buffer
	startProfiles(slog.New(slog.NewTextHandler(&logs, nil)))()
	if logs.Len() != 0 {
		t.Errorf("logged %q without any profile asked for", logs.String())
	}
}

func TestStartProfilesReportsAnUnwritablePath(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "missing-dir", "cpu.pprof")
	t.Setenv("CDCD_CPUPROFILE", bad)
	t.Setenv("CDCD_MEMPROFILE", "")
	var logs bytes.Buffer
	startProfiles(slog.New(slog.NewTextHandler(&logs, nil)))()
	if !strings.Contains(logs.String(), "CPU profile not started") {
		t.Errorf("logs %q do not report the failure", logs.String())
	}
}

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
