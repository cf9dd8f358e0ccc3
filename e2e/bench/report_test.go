package main

import (
	"strings"
	"testing"
)

func TestSummarizeRatiosAreRoundByRoundAndCdcdBetterAboveOne(t *testing.T) {
	drains := []drainResult{
		{Round: 1, Workload: "insert", System: "cdcd", EventsPerSec: 30000, CPUPerMillion: 10, PeakRSSMB: 50, Ceiling: &ceilingData{EventsPerSec: 60000},
			KafkaCeiling: &ceilingData{EventsPerSec: 120000}},
		{Round: 1, Workload: "insert", System: "debezium", EventsPerSec: 10000, CPUPerMillion: 40, PeakRSSMB: 500},
		{Round: 2, Workload: "insert", System: "debezium", EventsPerSec: 5000, CPUPerMillion: 40, PeakRSSMB: 500},
		{Round: 2, Workload: "insert", System: "cdcd", EventsPerSec: 20000, CPUPerMillion: 20, PeakRSSMB: 50, Ceiling: &ceilingData{EventsPerSec: 40000},
			KafkaCeiling: &ceilingData{EventsPerSec: 80000}, Correctness: correctness{Lost: 2, OrderViolations: 1}},
	}
	latency := []latencyResult{
		{Round: 1, System: "cdcd", P50Ms: 5, P99Ms: 20, MaxMs: 30},
		{Round: 1, System: "debezium", P50Ms: 50, P99Ms: 200, MaxMs: 300},
	}
	rows := summarize(drains, latency, 2000)
	byMetric := map[string]summaryRow{}
	for _, r := range rows {
		byMetric[r.Metric] = r
	}
	rate := byMetric["insert 1 KB rows drain, events/s"]
	// Round ratios 3 and 4: the median is 3.5, not 25000/7500.
	if rate.Ratio.Median != 3.5 || rate.Ratio.Min != 3 || rate.Ratio.Max != 4 {
		t.Errorf("throughput ratio %+v, want median 3.5 over 3..4", rate.Ratio)
	}
	if rate.OfCeiling == nil || rate.OfCeiling.Median != 0.5 {
		t.Errorf("cdcd/ceiling %+v, want 0.5", rate.OfCeiling)
	}
	if rate.OfKafkaCeiling == nil || rate.OfKafkaCeiling.Median != 0.25 || rate.KafkaCeiling.Median != 100000 {
		t.Errorf("Kafka ceiling %+v, cdcd of it %+v; want 100,000 and 0.25", rate.KafkaCeiling, rate.OfKafkaCeiling)
	}
	if cpu := byMetric["insert 1 KB rows drain, CPU s per M events"]; cpu.Ratio.Median != 3 {
		t.Errorf("cpu ratio %+v, want debezium/cdcd median 3 (4 and 2)", cpu.Ratio)
	}
	if p99 := byMetric["commit→append p99 ms @ 2000 rows/s"]; p99.Ratio.Median != 10 {
		t.Errorf("p99 ratio %+v, want 10", p99.Ratio)
	}
	if c := byMetric["rows lost / order violations / dups"]; c.CdcdText != "2 / 1 / 0" || c.DebeziumText != "0 / 0 / 0" {
		t.Errorf("correctness row %+v", c)
	}
	if c := summarize(drains[:1], nil, 0); c[len(c)-1].DebeziumText != "n/a" {
		t.Errorf("correctness of a system that never ran: %q, want n/a", c[len(c)-1].DebeziumText)
	}
	if _, ok := byMetric["mix 50/45/5 i/u/d drain, events/s"]; ok {
		t.Error("a workload that did not run got a row")
	}

	heading := tableHeading{Database: "MariaDB 10.11.6", Debezium: "3.5.0.Final", Ceiling: "binlog raw read", Load: [2]string{"1.00 2.00 3.00", "4.00 5.00 6.00"}}
	table := renderTable(heading, rows, machineInfo{NProc: 2, MemTotalMB: 1024, CPUModel: "x"}, 60)
	for _, want := range []string{"Debezium 3.5.0.Final", "on MariaDB 10.11.6", "binlog raw read", "4.00 5.00 6.00 at the end", "insert 1 KB rows drain, events/s", "25,000 (20,000–30,000)", "3.50× (3.00–4.00)", "50,000 (40,000–60,000)", "50%", "100,000 (80,000–120,000)", "25%", "2 / 1 / 0"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
}

// cdcd exactly-once gets rows of its own below each metric, compared with cdcd at-least-once round by
// round; the cdcd and Debezium columns are unchanged by it.
func TestSummarizeExactlyOnceRows(t *testing.T) {
	drains := []drainResult{
		{Round: 1, Workload: "insert", System: "cdcd", EventsPerSec: 40000, CPUPerMillion: 10, PeakRSSMB: 80},
		{Round: 1, Workload: "insert", System: "cdcd-eos", EventsPerSec: 36000, CPUPerMillion: 12, PeakRSSMB: 90},
		{Round: 1, Workload: "insert", System: "debezium", EventsPerSec: 4000, CPUPerMillion: 80, PeakRSSMB: 900},
		{Round: 2, Workload: "insert", System: "cdcd-eos", EventsPerSec: 30000, CPUPerMillion: 12, PeakRSSMB: 90, Correctness: correctness{Duplicates: 1}},
		{Round: 2, Workload: "insert", System: "cdcd", EventsPerSec: 40000, CPUPerMillion: 10, PeakRSSMB: 80},
		{Round: 2, Workload: "insert", System: "debezium", EventsPerSec: 4000, CPUPerMillion: 80, PeakRSSMB: 900},
	}
	latency := []latencyResult{{Round: 1, System: "cdcd", P99Ms: 10}, {Round: 1, System: "cdcd-eos", P99Ms: 20}, {Round: 1, System: "debezium", P99Ms: 100}}
	byMetric := map[string]summaryRow{}
	for _, r := range summarize(drains, latency, 2000) {
		byMetric[r.Metric] = r
	}
	if r := byMetric["insert 1 KB rows drain, events/s"]; r.Cdcd.Median != 40000 || r.Ratio.Median != 10 {
		t.Errorf("at-least-once row %+v: exactly-once runs leaked into it", r)
	}
	eos := byMetric["insert 1 KB rows drain, events/s, exactly-once"]
	if eos.Cdcd.Median != 33000 || eos.EOSOfALO == nil || eos.EOSOfALO.Median != 0.825 || eos.EOSOfALO.Min != 0.75 || eos.Debezium.N != 0 {
		t.Errorf("exactly-once row %+v (of at-least-once %+v), want 33,000 and 0.825 over 0.75..0.9", eos, eos.EOSOfALO)
	}
	if r := byMetric["commit→append p99 ms @ 2000 rows/s, exactly-once"]; r.EOSOfALO == nil || r.EOSOfALO.Median != 0.5 {
		t.Errorf("exactly-once p99 row %+v, want at-least-once/exactly-once 0.5", r)
	}
	if r := byMetric["rows lost / order violations / dups, exactly-once"]; r.CdcdText != "0 / 0 / 1" {
		t.Errorf("exactly-once correctness %+v, want its own duplicate", r)
	}
	if r := byMetric["rows lost / order violations / dups"]; r.CdcdText != "0 / 0 / 0" {
		t.Errorf("at-least-once correctness %+v counts the exactly-once runs", r)
	}
	table := renderTable(tableHeading{}, summarize(drains, latency, 2000), machineInfo{}, 1)
	if !strings.Contains(table, "0.82× (0.75–0.90) of at-least-once") {
		t.Errorf("table lacks the exactly-once ratio:\n%s", table)
	}
}
