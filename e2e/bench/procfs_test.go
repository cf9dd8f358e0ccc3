package main

import (
	"os"
	"strings"
	"testing"
	"time"
)

func TestParseStatCPU(t *testing.T) {
	// A command name with spaces and a ')' must not shift the fields; utime=250, stime=50 ticks.
	stat := "4242 (java (Connect) x) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 40 0 12345 9000000 1000 18446744073709551615\n"
	got, err := parseStatCPU([]byte(stat))
	if err != nil {
		t.Fatal(err)
	}
	if want := 3 * time.Second; got != want {
		t.Errorf("cpu = %v, want %v", got, want)
	}
}

func TestParseStatCPURejectsMalformed(t *testing.T) {
	for _, stat := range []string{"", "12 cdcd S 1 2", "12 (cdcd) S 1 2 3", "12 (cdcd) S 1 1 1 0 -1 0 0 0 0 0 x 5"} {
		if _, err := parseStatCPU([]byte(stat)); err == nil {
			t.Errorf("parseStatCPU(%q) succeeded", stat)
		}
	}
}

func TestParseStatusKB(t *testing.T) {
	status := "Name:\tcdcd\nVmPeak:\t  900 kB\nVmHWM:\t   51200 kB\nVmRSS:\t   40960 kB\nThreads:\t7\n"
	got, err := parseStatusKB(strings.NewReader(status), "VmHWM", "VmRSS")
	if err != nil {
		t.Fatal(err)
	}
	if got["VmHWM"] != 51200 || got["VmRSS"] != 40960 || len(got) != 2 {
		t.Errorf("got %v", got)
	}
	if _, err := parseStatusKB(strings.NewReader(status), "VmSwap"); err == nil {
		t.Error("a missing key was not reported")
	}
	if _, err := parseStatusKB(strings.NewReader("VmHWM: 12 pages\n"), "VmHWM"); err == nil {
		t.Error("a value without kB was accepted")
	}
}

func TestParseCPUModel(t *testing.T) {
	info := "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Processor\nprocessor\t: 1\nmodel name\t: other\n"
	if got := parseCPUModel(strings.NewReader(info)); got != "Intel(R) Xeon(R) Processor" {
		t.Errorf("model = %q", got)
	}
	if got := parseCPUModel(strings.NewReader("processor: 0\n")); got != "" {
		t.Errorf("model = %q, want empty", got)
	}
}

// The test process itself is a real /proc entry: its numbers must parse and be plausible, and resetting
// the peak must leave it no lower than the current RSS.
func TestReadProcessUsageOfSelf(t *testing.T) {
	pid := os.Getpid()
	u, err := readProcessUsage(pid)
	if err != nil {
		t.Fatal(err)
	}
	if u.RSSK <= 0 || u.PeakRSSK < u.RSSK {
		t.Errorf("usage %+v: want 0 < VmRSS <= VmHWM", u)
	}
	if err := resetPeakRSS(pid); err != nil {
		t.Skipf("clear_refs not writable here: %v", err)
	}
	after, err := readProcessUsage(pid)
	if err != nil {
		t.Fatal(err)
	}
	if after.PeakRSSK < after.RSSK {
		t.Errorf("after reset %+v: VmHWM below VmRSS", after)
	}
}
