package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cdcd/cdcd/e2e/capture"
)

// The edge-value tests put values the databases accept, and that once stopped a snapshot for good, through
// a snapshot and the stream, and compare each with the value Debezium writes for it.

// TestPostgresEndOfDayTimes: PostgreSQL's 24:00:00 in time and timetz, in a snapshot row and a streamed
// row. Debezium writes timetz '24:00:00+00' as 00:00:00Z (java.time's next midnight) and time '24:00:00'
// as MicroTime 86400000000; cdcd failed the snapshot on the timetz and restarted into it.
func TestPostgresEndOfDayTimes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	b := newSnapshotBed(t, ctx, "initial", nil)
	b.exec("CREATE TABLE eod (id int PRIMARY KEY, tz timetz, t time, tza timetz[])")
	b.exec("INSERT INTO eod VALUES (1, '24:00:00+00', '24:00:00', '{24:00:00+00}')")
	p := b.start()
	b.fence(p)
	b.exec("INSERT INTO eod VALUES (2, '24:00:00+00', '24:00:00', '{24:00:00+00}')")
	b.fence(p)
	p.stop()
	const want = `"tz":"00:00:00Z","t":86400000000,"tza":["00:00:00Z"]}`
	got := map[string]string{}
	for _, ev := range b.events() {
		if ev.table == "eod" {
			got[ev.op] = ev.after
		}
	}
	for op, id := range map[string]string{"r": "1", "c": "2"} {
		if w := `{"id":` + id + `,` + want; got[op] != w {
			t.Errorf("op %s: after = %s, want %s (Debezium's)", op, orMissing(got, op), w)
		}
	}
}

// TestPostgresUnconvertibleSnapshotRow: a snapshot row holding a value cdcd cannot convert (a timestamp
// beyond NanoTimestamp's range under time.precision.mode=nanoseconds) goes through
// event.processing.failure.handling.mode for that row alone. Under warn the row is skipped and logged with
// its table, key columns and position, the others are delivered; under fail (the default) the connector
// ends FAILED naming them, without restarting into the same row.
func TestPostgresUnconvertibleSnapshotRow(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	b := newSnapshotBed(t, ctx, "initial", map[string]string{"time.precision.mode": "nanoseconds", "event.processing.failure.handling.mode": "warn"})
	b.exec("CREATE TABLE far (id int PRIMARY KEY, ts timestamp)")
	b.exec("INSERT INTO far VALUES (1, '2000-01-01'), (2, '3000-01-01'), (3, '2000-01-02')")
	p := b.start()
	b.fence(p)
	log := p.log.String()
	p.stop()
	if want := idKeys(1, 3); !equalKeys(opKeys(b.events(), "far")["r"], want) {
		t.Errorf("snapshot rows: got %v, want %v (the unconvertible row 2 skipped, no other)", opKeys(b.events(), "far")["r"], want)
	}
	lines := logLines(log, "skipping a change that cannot be processed")
	if len(lines) != 1 || !strings.Contains(lines[0], "public.far") || !strings.Contains(lines[0], "key_columns=id") ||
		!strings.Contains(lines[0], "LSN") || !strings.Contains(lines[0], "column ts") || strings.Contains(lines[0], "3000-01-01") {
		t.Errorf("the skipped row is not logged once with its table, key columns, position and column (and no value):\n%s", strings.Join(lines, "\n"))
	}

	f := newSnapshotBed(t, ctx, "initial", map[string]string{"time.precision.mode": "nanoseconds"})
	f.exec("CREATE TABLE far (id int PRIMARY KEY, ts timestamp)")
	f.exec("INSERT INTO far VALUES (1, '3000-01-01')")
	p = f.start()
	log = awaitFailure(t, p)
	p.stop()
	if !strings.Contains(log, "snapshot row of public.far (key columns: id)") || !strings.Contains(log, "event.processing.failure.handling.mode=warn or skip") {
		t.Errorf("the failure does not name the row's table, key columns and the way out:\n%s", tail(log, 3000))
	}
}

func equalKeys(a, b []string) bool { return strings.Join(a, ",") == strings.Join(b, ",") }

// TestMariaDBSnapshotEdgeValues: a table with an INVISIBLE column (cdcd's SELECT * left it out and every
// row failed; Debezium names the table's columns, the invisible one included), a FLOAT(7,3) (Debezium
// widens the single-precision value: 9999.9990234375), a TIMESTAMP(1) inside the epoch's first second
// (cdcd streamed null) and a DATETIME in the Julian–Gregorian gap, in a snapshot row and a streamed row.
// Debezium's snapshot reads a DATETIME through java.sql.Timestamp, which moves 1582-10-10 to 1582-10-20;
// its stream and cdcd keep the day the server holds (-12219724800000 ms; README, differences).
func TestMariaDBSnapshotEdgeValues(t *testing.T) {
	c := newMariaDBCase(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c.run("CREATE TABLE edge (id INT PRIMARY KEY, f FLOAT(7,3), ts TIMESTAMP(1) NULL, dt DATETIME, h INT INVISIBLE DEFAULT 42)")
	c.run("INSERT INTO edge (id, f, ts, dt, h) VALUES (1, 9999.999, '1970-01-01 00:00:00.5', '1582-10-10 00:00:00', 7)")
	p := c.launch()
	topic := capture.Selection{Topics: []string{c.prefix + "." + c.dsn.DB + ".edge"}}
	waitFor(t, ctx, c.broker, topic, `"id":1`)
	c.run("INSERT INTO edge (id, f, ts, dt, h) VALUES (2, 9999.999, '1970-01-01 00:00:00.5', '1582-10-10 00:00:00', 7)")
	waitFor(t, ctx, c.broker, topic, `"id":2`)
	p.stop()
	recs, err := c.broker.Read(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"1", "2"} {
		want := `"after":{"id":` + id + `,"f":9999.9990234375,"ts":"1970-01-01T00:00:00.5Z","dt":-12219724800000,"h":7}`
		found := false
		for _, r := range recs {
			found = found || strings.Contains(string(r.Value), want)
		}
		if !found {
			t.Errorf("no record with %s (Debezium's values); records:\n%s", want, recordValues(recs))
		}
	}
}

func recordValues(recs []capture.Record) string {
	var b strings.Builder
	for _, r := range recs {
		b.Write(r.Value)
		b.WriteByte('\n')
	}
	return tail(b.String(), 3000)
}

// TestPostgresEdgeDates: ±infinity, a date in the Julian–Gregorian gap and a BC date, as a date and in a
// date[], in snapshot rows and streamed rows. Debezium 3.6.1 (its Date.toEpochDay over pgjdbc 42.7.11 in a
// UTC JVM, as its snapshot and its arrays read dates) writes ±infinity as -622191234 / -625821272 in a
// snapshot and in arrays, and as -2147472692 / -2147472691 in a streamed date. Through JDBC it also writes
// 1582-10-10 as 1582-10-20 (-141422) and 0044-03-15 BC as AD (-703383); cdcd writes the days PostgreSQL
// holds (-141432, -735160), as Debezium's stream does (README, differences from Debezium).
func TestPostgresEdgeDates(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	b := newSnapshotBed(t, ctx, "initial", nil)
	b.exec("CREATE TABLE dd (id int PRIMARY KEY, d date, da date[])")
	const rows = "(%d, 'infinity', '{infinity}'), (%d, '-infinity', '{-infinity}'), (%d, '1582-10-10', '{1582-10-10}'), (%d, '0044-03-15 BC', '{0044-03-15 BC}')"
	b.exec(fmt.Sprintf("INSERT INTO dd VALUES "+rows, 1, 2, 3, 4))
	p := b.start()
	b.fence(p)
	b.exec(fmt.Sprintf("INSERT INTO dd VALUES "+rows, 11, 12, 13, 14))
	b.fence(p)
	p.stop()
	want := map[string]string{
		"1": `{"id":1,"d":-622191234,"da":[-622191234]}`, "2": `{"id":2,"d":-625821272,"da":[-625821272]}`,
		"3": `{"id":3,"d":-141432,"da":[-141432]}`, "4": `{"id":4,"d":-735160,"da":[-735160]}`,
		"11": `{"id":11,"d":-2147472692,"da":[-622191234]}`, "12": `{"id":12,"d":-2147472691,"da":[-625821272]}`,
		"13": `{"id":13,"d":-141432,"da":[-141432]}`, "14": `{"id":14,"d":-735160,"da":[-735160]}`,
	}
	state := replayTable(b.events(), "dd")
	for id, w := range want {
		if g := orMissing(state, `{"id":`+id+`}`); g != w {
			t.Errorf("row %s: %s, want %s", id, g, w)
		}
	}
}
