package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// clockTicksPerSecond is USER_HZ, the unit of utime and stime in /proc/PID/stat. Linux fixes it at 100 on
// every architecture cdcd builds for; reading sysconf(_SC_CLK_TCK) would need cgo.
const clockTicksPerSecond = 100

// processUsage is what /proc says a process has used so far.
type processUsage struct {
	CPU      time.Duration // utime + stime
	PeakRSSK int64         // VmHWM in KiB: the resident-set high-water mark since start or the last reset
	RSSK     int64         // VmRSS in KiB
}

// readProcessUsage reads the CPU time and resident set sizes of process pid.
func readProcessUsage(pid int) (processUsage, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return processUsage{}, fmt.Errorf("reading cpu time of pid %d: %w", pid, err)
	}
	cpu, err := parseStatCPU(stat)
	if err != nil {
		return processUsage{}, fmt.Errorf("pid %d: %w", pid, err)
	}
	status, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return processUsage{}, fmt.Errorf("reading memory of pid %d: %w", pid, err)
	}
	defer status.Close()
	mem, err := parseStatusKB(status, "VmHWM", "VmRSS")
	if err != nil {
		return processUsage{}, fmt.Errorf("pid %d: %w", pid, err)
	}
	return processUsage{CPU: cpu, PeakRSSK: mem["VmHWM"], RSSK: mem["VmRSS"]}, nil
}

// resetPeakRSS sets the process's VmHWM back to its current RSS (clear_refs value 5, Linux 4.0+), so that
// the next reading is the peak of what happens from now on.
func resetPeakRSS(pid int) error {
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0); err != nil {
		return fmt.Errorf("resetting the peak RSS of pid %d: %w", pid, err)
	}
	return nil
}

// parseStatCPU returns utime+stime from the contents of /proc/PID/stat. The command name (field 2) is in
// parentheses and may itself contain spaces and parentheses, so fields are counted after the last ')'.
func parseStatCPU(stat []byte) (time.Duration, error) {
	end := bytes.LastIndexByte(stat, ')')
	if end < 0 {
		return 0, fmt.Errorf("malformed /proc stat line %q", truncate(stat))
	}
	// After ")": field 3 (state) is index 0, so utime (field 14) is index 11 and stime index 12.
	fields := strings.Fields(string(stat[end+1:]))
	if len(fields) < 13 {
		return 0, fmt.Errorf("/proc stat line has %d fields after the command name, want at least 13", len(fields))
	}
	var ticks int64
	for _, f := range fields[11:13] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc stat cpu field %q: %w", f, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicksPerSecond, nil
}

// parseStatusKB reads the "Key:   123 kB" lines of /proc/PID/status (or /proc/meminfo) for keys and
// returns their values in KiB; a missing key is an error.
func parseStatusKB(r io.Reader, keys ...string) (map[string]int64, error) {
	want := map[string]bool{}
	for _, k := range keys {
		want[k] = true
	}
	out := map[string]int64{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		key, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || !want[key] {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) != 2 || fields[1] != "kB" {
			return nil, fmt.Errorf("%s: unexpected value %q", key, rest)
		}
		n, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		out[key] = n
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for _, k := range keys {
		if _, ok := out[k]; !ok {
			return nil, fmt.Errorf("%s missing", k)
		}
	}
	return out, nil
}

// parseCPUModel returns the first "model name" of /proc/cpuinfo, or "" when there is none (some
// architectures do not report one).
func parseCPUModel(r io.Reader) string {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(key) == "model name" {
			return strings.TrimSpace(value)
		}
	}
	return ""
}

// machineInfo describes the box a result was measured on, so that results of different runs are only
// compared when they come from comparable machines.
type machineInfo struct {
	NProc      int    `json:"nproc"`
	MemTotalMB int64  `json:"mem_total_mb"`
	CPUModel   string `json:"cpu_model"`
	Kernel     string `json:"kernel"`
	GoVersion  string `json:"go_version"`
}

func readMachineInfo() machineInfo {
	info := machineInfo{NProc: runtime.NumCPU(), GoVersion: runtime.Version()}
	if f, err := os.Open("/proc/meminfo"); err == nil {
		if mem, err := parseStatusKB(f, "MemTotal"); err == nil {
			info.MemTotalMB = mem["MemTotal"] / 1024
		}
		f.Close()
	}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		info.CPUModel = parseCPUModel(f)
		f.Close()
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		info.Kernel = strings.TrimSpace(string(b))
	}
	return info
}

func truncate(b []byte) []byte {
	if len(b) > 80 {
		return b[:80]
	}
	return b
}
