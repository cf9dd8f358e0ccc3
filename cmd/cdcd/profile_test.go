package main

import (
	"bytes"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
