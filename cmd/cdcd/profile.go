package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"time"
)

// startProfiles starts the profiles the environment asks for, for finding where cdcd spends its time
// and memory: CDCD_CPUPROFILE=FILE records a CPU profile from now on; CDCD_MEMPROFILE=FILE writes the
// allocation profile (every allocation since start) when the returned stop runs, and FILE.peak, the heap
// in use at the largest live heap seen while running (rewritten whenever the live heap grows by a tenth),
// which is where a peak RSS comes from. stop must run before the process exits; a profile that cannot
// be written is logged, never fatal.
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
	stopPeak := func() {}
	if memPath != "" {
		stopPeak = watchPeakHeap(memPath+".peak", log)
	}
	return func() {
		stopPeak()
		if cpuFile != nil {
			pprof.StopCPUProfile()
			if err := cpuFile.Close(); err != nil {
				log.Error("CPU profile incomplete", "path", cpuPath, "error", err)
			}
		}
		if memPath != "" {
			if err := writeProfile(memPath, "allocs"); err != nil {
				log.Error("allocation profile not written", "path", memPath, "error", err)
			}
		}
	}
}

// watchPeakHeap samples the live heap (as the last GC measured it) four times a second and writes the
// in-use heap profile to path whenever it is a tenth above the largest written so far. The returned
// stop waits for the sampler to end.
func watchPeakHeap(path string, log *slog.Logger) (stop func()) {
	done, ended := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		var written uint64
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			metrics.Read(sample)
			live := sample[0].Value.Uint64()
			if live <= written+written/10 {
				continue
			}
			if err := writeProfile(path, "heap"); err != nil {
				log.Error("peak heap profile not written", "path", path, "error", err)
				return
			}
			written = live
		}
	}()
	return func() { close(done); <-ended }
}

// writeProfile writes the named runtime profile to path. The heap and allocs profiles report the heap
// as of the last completed GC.
func writeProfile(path, name string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if name == "allocs" {
		runtime.GC() // the allocation profile then includes everything up to now
	}
	err = pprof.Lookup(name).WriteTo(f, 0)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return errors.Join(fmt.Errorf("writing %s: %w", path, err), os.Remove(path))
	}
	return nil
}
