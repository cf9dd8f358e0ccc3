package main

import (
	"fmt"
	"os/exec"
	"strings"
	"text/tabwriter"
)

// summaryRow is one line of the table: a metric on both systems over the rounds, their ratio (computed
// round by round, > 1 meaning cdcd is better whether the metric is a rate or a cost), and, for
// throughput, the database's and Kafka's ceilings.
type summaryRow struct {
	Metric    string  `json:"metric"`
	Cdcd      spread  `json:"cdcd"`
	Debezium  spread  `json:"debezium"`
	Ratio     spread  `json:"ratio"`
	Ceiling   *spread `json:"ceiling,omitempty"`
	OfCeiling *spread `json:"cdcd_of_ceiling,omitempty"`
	// KafkaCeiling is what a plain producer achieves with the same records, broker and guarantees.
	KafkaCeiling   *spread `json:"kafka_ceiling,omitempty"`
	OfKafkaCeiling *spread `json:"cdcd_of_kafka_ceiling,omitempty"`
	// EOSOfALO, on an exactly-once row, is cdcd exactly-once against cdcd at-least-once (> 1: better).
	EOSOfALO *spread `json:"exactly_once_of_at_least_once,omitempty"`
	// Text replaces the numbers for counts that must be exactly zero.
	CdcdText     string `json:"cdcd_text,omitempty"`
	DebeziumText string `json:"debezium_text,omitempty"`
}

// perRound collects one number per round for each system, in round order: the cdcd column is cdcd
// at-least-once, the Debezium column Debezium, and eos cdcd exactly-once.
type perRound struct{ cdcd, debezium, eos []float64 }

func (p *perRound) add(system string, v float64) {
	switch system {
	case "cdcd":
		p.cdcd = append(p.cdcd, v)
	case "cdcd-eos":
		p.eos = append(p.eos, v)
	default:
		p.debezium = append(p.debezium, v)
	}
}

// eosRows are the exactly-once rows below an at-least-once metric: cdcd-eos's value, and its ratio to
// cdcd at-least-once, round by round (> 1: exactly-once is better). None when cdcd-eos did not run.
func (p perRound) eosRows(metric string, higherIsBetter bool) []summaryRow {
	if len(p.eos) == 0 {
		return nil
	}
	ratio := ratios(p.eos, p.cdcd)
	if !higherIsBetter {
		ratio = ratios(p.cdcd, p.eos)
	}
	return []summaryRow{{Metric: metric + ", exactly-once", Cdcd: spreadOf(p.eos),
		EOSOfALO: ptr(spreadOf(ratio))}}
}

func ptr[T any](v T) *T { return &v }

// row builds a summary row; higherIsBetter says which way the ratio divides.
func (p perRound) row(metric string, higherIsBetter bool) summaryRow {
	r := summaryRow{Metric: metric, Cdcd: spreadOf(p.cdcd), Debezium: spreadOf(p.debezium)}
	if higherIsBetter {
		r.Ratio = spreadOf(ratios(p.cdcd, p.debezium))
	} else {
		r.Ratio = spreadOf(ratios(p.debezium, p.cdcd))
	}
	return r
}

func summarize(drains []drainResult, latency []latencyResult, rate int) []summaryRow {
	var rows []summaryRow
	var bad [3]correctness // cdcd, debezium, cdcd-eos: summed over every run
	var runs [3]int
	count := func(system string, c correctness) {
		i := map[string]int{"cdcd": 0, "debezium": 1, "cdcd-eos": 2}[system]
		runs[i]++
		bad[i].Lost += c.Lost
		bad[i].OrderViolations += c.OrderViolations
		bad[i].Duplicates += c.Duplicates
		bad[i].Unexpected += c.Unexpected
	}
	for _, wl := range []workload{insertWorkload, mixWorkload} {
		var rate, cpu, rss perRound
		var ceiling, ofCeiling, kafkaCeiling, ofKafkaCeiling []float64
		for _, d := range drains {
			if d.Workload != wl.Name {
				continue
			}
			rate.add(d.System, d.EventsPerSec)
			cpu.add(d.System, d.CPUPerMillion)
			rss.add(d.System, d.PeakRSSMB)
			count(d.System, d.Correctness)
			if d.Ceiling != nil {
				ceiling = append(ceiling, d.Ceiling.EventsPerSec)
				ofCeiling = append(ofCeiling, d.EventsPerSec/d.Ceiling.EventsPerSec)
			}
			if d.KafkaCeiling != nil {
				kafkaCeiling = append(kafkaCeiling, d.KafkaCeiling.EventsPerSec)
				ofKafkaCeiling = append(ofKafkaCeiling, d.EventsPerSec/d.KafkaCeiling.EventsPerSec)
			}
		}
		if len(rate.cdcd)+len(rate.debezium) == 0 {
			continue
		}
		label := workloadLabel(wl)
		r := rate.row(label+" drain, events/s", true)
		if len(ceiling) > 0 {
			c, of := spreadOf(ceiling), spreadOf(ofCeiling)
			r.Ceiling, r.OfCeiling = &c, &of
		}
		if len(kafkaCeiling) > 0 {
			c, of := spreadOf(kafkaCeiling), spreadOf(ofKafkaCeiling)
			r.KafkaCeiling, r.OfKafkaCeiling = &c, &of
		}
		rows = append(rows, r)
		rows = append(rows, rate.eosRows(label+" drain, events/s", true)...)
		rows = append(rows, cpu.row(label+" drain, CPU s per M events", false))
		rows = append(rows, cpu.eosRows(label+" drain, CPU s per M events", false)...)
		rows = append(rows, rss.row(label+" drain, peak RSS MB", false))
		rows = append(rows, rss.eosRows(label+" drain, peak RSS MB", false)...)
	}
	var p50, p99, worst perRound
	for _, l := range latency {
		p50.add(l.System, l.P50Ms)
		p99.add(l.System, l.P99Ms)
		worst.add(l.System, l.MaxMs)
		count(l.System, l.Correctness)
	}
	if len(latency) > 0 {
		at := fmt.Sprintf(" @ %d rows/s", rate)
		for _, m := range []struct {
			name string
			p    perRound
		}{{"p50", p50}, {"p99", p99}, {"max", worst}} {
			metric := "commit→append " + m.name + " ms" + at
			rows = append(rows, m.p.row(metric, false))
			rows = append(rows, m.p.eosRows(metric, false)...)
		}
	}
	rows = append(rows, summaryRow{
		Metric: "rows lost / order violations / dups", CdcdText: correctnessText(bad[0], runs[0]), DebeziumText: correctnessText(bad[1], runs[1]),
	})
	if runs[2] > 0 {
		rows = append(rows, summaryRow{Metric: "rows lost / order violations / dups, exactly-once", CdcdText: correctnessText(bad[2], runs[2]), DebeziumText: "n/a"})
	}
	return rows
}

func workloadLabel(wl workload) string {
	if wl.UpdatePct == 0 {
		return "insert 1 KB rows"
	}
	return fmt.Sprintf("mix %d/%d/%d i/u/d", wl.InsertPct, wl.UpdatePct, 100-wl.InsertPct-wl.UpdatePct)
}

func correctnessText(c correctness, runs int) string {
	if runs == 0 {
		return "n/a"
	}
	s := fmt.Sprintf("%d / %d / %d", c.Lost, c.OrderViolations, c.Duplicates)
	if c.Unexpected > 0 {
		s += fmt.Sprintf(" (+%d unexpected)", c.Unexpected)
	}
	return s
}

// tableHeading is what the table's title says about the run.
type tableHeading struct {
	Database string    // "PostgreSQL 15.8"
	Debezium string    // the Debezium version the worker ran
	Ceiling  string    // the database's raw reader, the ceiling column's name
	Load     [2]string // load averages at the start and the end
}

// renderTable prints the summary for the terminal: medians with min–max over the rounds.
func renderTable(h tableHeading, rows []summaryRow, m machineInfo, seconds float64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\ncdcd vs Debezium %s (Kafka Connect 4.4) on %s — %d CPUs, %d MB, %s; run took %.0f s\n",
		h.Debezium, h.Database, m.NProc, m.MemTotalMB, m.CPUModel, seconds)
	fmt.Fprintf(&b, "load average (1/5/15 min) %s at the start, %s at the end\n", h.Load[0], h.Load[1])
	fmt.Fprintln(&b, "medians over rounds (min–max); ratio > 1 means cdcd is better (faster, or cheaper); on an exactly-once row")
	fmt.Fprintln(&b, "(a distributed worker, exactly.once.source.support=enabled, transaction.boundary=poll) it compares cdcd's two modes")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "workload / metric\tcdcd\tDebezium\tratio\t%s\tcdcd/ceiling\tKafka producer\tcdcd/Kafka\n", h.Ceiling)
	for _, r := range rows {
		cdcd, dbz, ratio, ceiling, of := formatValue(r.Cdcd), formatValue(r.Debezium), formatRatio(r.Ratio), "", ""
		kafka, ofKafka := "", ""
		if r.CdcdText != "" || r.DebeziumText != "" {
			cdcd, dbz, ratio = r.CdcdText, r.DebeziumText, ""
		}
		if r.EOSOfALO != nil {
			dbz, ratio = "", formatRatio(*r.EOSOfALO)+" of at-least-once"
		}
		if r.Ceiling != nil && r.OfCeiling != nil {
			ceiling = formatValue(*r.Ceiling)
			of = fmt.Sprintf("%.0f%%", 100*r.OfCeiling.Median)
		}
		if r.KafkaCeiling != nil && r.OfKafkaCeiling != nil {
			kafka = formatValue(*r.KafkaCeiling)
			ofKafka = fmt.Sprintf("%.0f%%", 100*r.OfKafkaCeiling.Median)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Metric, cdcd, dbz, ratio, ceiling, of, kafka, ofKafka)
	}
	tw.Flush()
	return b.String()
}

func execOutput(name string, args ...string) (string, error) {
	out, err := exec.Command(name, args...).Output()
	return string(out), err
}
