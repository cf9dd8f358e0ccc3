package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"runtime/pprof"
)

// startProfiles starts the profiles the environment asks for, for finding where cdcd spends its time:
// CDCD_CPUPROFILE=FILE records a CPU profile from now on, CDCD_MEMPROFILE=FILE writes the allocation
// profile (every allocation since start) when the returned stop runs. stop must run before the process
// exits; a profile that cannot be written is logged, never fatal.
func startProfiles(log *slog.Logger) (stop func()) {
	cpuPath, memPath := os.Getenv("CDCD_CPUPROFILE"), os.Getenv("CDCD_MEMPROFILE")
	var cpuFile *os.File
	if cpuPath != "" {
		f, err := os.Create(cpuPath)
		if err == nil {
			err = pprof.StartCPUProfile(f)
			if err != nil {
				f.Close()
			}
		}
		if err != nil {
			log.Error("CPU profile not started", "path", cpuPath, "error", err)
		} else {
			cpuFile = f
			log.Info("recording a CPU profile", "path", cpuPath)
		}
	}
	return func() {
		if cpuFile != nil {
			pprof.StopCPUProfile()
			if err := cpuFile.Close(); err != nil {
				log.Error("CPU profile incomplete", "path", cpuPath, "error", err)
			}
		}
		if memPath != "" {
			if err := writeAllocProfile(memPath); err != nil {
				log.Error("allocation profile not written", "path", memPath, "error", err)
			}
		}
	}
}

func writeAllocProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	runtime.GC() // the profile reports allocations up to the last GC
	err = pprof.Lookup("allocs").WriteTo(f, 0)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return errors.Join(fmt.Errorf("writing %s: %w", path, err), os.Remove(path))
	}
	return nil
}
