package mysql

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/cdcd/cdcd/snapshot"
	"github.com/cdcd/cdcd/source"
	"github.com/cdcd/cdcd/source/mysql/types"
	"github.com/go-mysql-org/go-mysql/replication"
)

// TestOffsetRoundTripsDebeziumBytes reads the offset Debezium's MariaDB connector stored in the goldens (a
// mid-transaction offset: event and row set) and writes it back byte for byte, keys in Debezium's order.
// Its values are integers and ASCII strings, which encoding/json writes as Jackson does.
func TestOffsetRoundTripsDebeziumBytes(t *testing.T) {
	raw, err := os.ReadFile("../../testdata/mariadb/default/offsets.json")
	if err != nil {
		t.Fatal(err)
	}
	var entries []struct{ Key, Value string }
	if err := json.Unmarshal(raw, &entries); err != nil || len(entries) != 1 {
		t.Fatalf("offsets.json: %v (%d entries)", err, len(entries))
	}
	var stored map[string]any
	dec := json.NewDecoder(strings.NewReader(entries[0].Value))
	dec.UseNumber()
	if err := dec.Decode(&stored); err != nil {
		t.Fatal(err)
	}
	o, err := ParseOffset(stored)
	if err != nil {
		t.Fatal(err)
	}
	if o.Events != 2 || o.Rows != 1 || o.GTIDs == "" || !strings.HasPrefix(o.File, "mariadb-bin.") {
		t.Errorf("parsed %+v", o)
	}
	got := []byte{'{'}
	for i, f := range hashMapOrdered(o.Fields()) {
		name, _ := json.Marshal(f.Name)
		value, err := json.Marshal(f.Value)
		if err != nil {
			t.Fatal(err)
		}
		if i > 0 {
			got = append(got, ',')
		}
		got = append(append(append(got, name...), ':'), value...)
	}
	got = append(got, '}')
	if string(got) != entries[0].Value {
		t.Errorf("offset written as\n%s\nDebezium wrote\n%s", got, entries[0].Value)
	}
}

func TestParseOffsetRefusesAnOffsetWithoutFile(t *testing.T) {
	if _, err := ParseOffset(map[string]any{"pos": int64(4)}); err == nil || !strings.Contains(err.Error(), `"file"`) {
		t.Errorf("error %v, want one naming the missing file key", err)
	}
	if o, err := ParseOffset(map[string]any{"file": "f", "pos": int64(4), "snapshot": true}); err != nil || o.Snapshot != "INITIAL" {
		t.Errorf("legacy snapshot=true: %+v %v", o, err)
	}
}

// TestPurgedGTIDsAreDetected (MySQL): an offset whose GTID set does not hold everything the server purged
// cannot resume without loss.
func TestPurgedGTIDsAreDetected(t *testing.T) {
	cfg := &Config{Flavor: types.MySQL}
	const uuid = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
	if lost, err := cfg.gtidsLost(uuid+":1-100", uuid+":1-50"); err != nil || lost != "" {
		t.Errorf("an offset past the purged range: %q %v", lost, err)
	}
	lost, err := cfg.gtidsLost(uuid+":1-40", uuid+":1-50")
	if err != nil || !strings.Contains(lost, "gtid_purged "+uuid+":1-50") {
		t.Errorf("an offset behind the purged range: %q %v", lost, err)
	}
}

// TestRestartGTIDsFilterSources: a restart resumes from the offset's GTID set without the sources
// gtid.source.includes/excludes leave out (Debezium's filterGtidSet), on both flavours, whatever
// gtid.source.filter.dml.events says; without a filter the set is unchanged. A source left out does not make
// the offset count as behind the server's gtid_purged.
func TestRestartGTIDsFilterSources(t *testing.T) {
	const a, b = "3e11fa47-71ca-11e1-9e33-c80aa9429562", "4e11fa47-71ca-11e1-9e33-c80aa9429563"
	for _, tc := range []struct {
		flavor          types.Flavor
		includes, excl  string
		offset, restart string
	}{
		{types.MariaDB, "", "", "0-1-100,7-2-50", "0-1-100,7-2-50"},
		{types.MariaDB, "", "7-.*", "0-1-100,7-2-50", "0-1-100"},
		{types.MariaDB, "0-1", "", "0-1-100,7-2-50", "0-1-100"},
		{types.MySQL, "", b, a + ":1-100," + b + ":1-5", a + ":1-100"},
		{types.MySQL, a, "", a + ":1-100," + b + ":1-5", a + ":1-100"},
	} {
		cfg := &Config{Flavor: tc.flavor, GTIDFilterDML: false}
		if tc.includes != "" {
			cfg.GTIDIncludes = []*regexp.Regexp{regexp.MustCompile("^(?:" + tc.includes + ")$")}
		}
		if tc.excl != "" {
			cfg.GTIDExcludes = []*regexp.Regexp{regexp.MustCompile("^(?:" + tc.excl + ")$")}
		}
		set, err := cfg.parseGTIDSet(tc.offset)
		if err != nil {
			t.Fatal(err)
		}
		if got := cfg.restartGTIDs(set).String(); got != tc.restart {
			t.Errorf("%v includes %q excludes %q: resume from %q, want %q", tc.flavor, tc.includes, tc.excl, got, tc.restart)
		}
		if got := set.String(); got != tc.offset {
			t.Errorf("restartGTIDs changed the offset's set to %q", got)
		}
	}
	cfg := &Config{Flavor: types.MySQL, GTIDExcludes: []*regexp.Regexp{regexp.MustCompile("^" + b + "$")}}
	if lost, err := cfg.gtidsLost(a+":1-100", a+":1-50,"+b+":1-9"); err != nil || lost != "" {
		t.Errorf("the purged transactions of an excluded source counted as lost: %q %v", lost, err)
	}
}

// TestOffsetWithSnapshotProgressOfTwoEpochs: an offset PATCHed with a table of two epochs (as the
// PostgreSQL connector writes them) made the stream call a nil key comparison on the table's first change.
// ParseOffset refuses it, fatally, naming the field and the table; one epoch still resumes and drops the
// changes the snapshot holds.
func TestOffsetWithSnapshotProgressOfTwoEpochs(t *testing.T) {
	stream := func(t *testing.T, o Offset) (batches []source.Batch, err error) {
		t.Helper()
		defer func() {
			if v := recover(); v != nil {
				err = fmt.Errorf("the stream panicked: %v", v)
			}
		}()
		r := testReader(t, types.MySQL)
		out := make(chan source.Batch, 4)
		st, err := r.newStream(context.Background(), out, o)
		if err != nil {
			return nil, err
		}
		for _, ev := range []*replication.BinlogEvent{
			event(replication.QUERY_EVENT, 1800000000, 280, 80, &replication.QueryEvent{Query: []byte("BEGIN")}),
			event(replication.WRITE_ROWS_EVENTv2, 1800000000, 400, 70, rows(replication.WRITE_ROWS_EVENTv2, []any{int32(1), "a"})),
			event(replication.XID_EVENT, 1800000000, 431, 31, &replication.XIDEvent{XID: 9}),
		} {
			if err := st.handle(context.Background(), ev); err != nil {
				return nil, err
			}
		}
		return []source.Batch{<-out}, nil
	}
	at := binlogSequence("mysql-bin.000003", 1000) // after the transaction: its change is in the snapshot
	patched := map[string]any{"file": "mysql-bin.000003", "pos": int64(4),
		snapshot.ProgressKey: fmt.Sprintf(`{"tables":[{"id":"d.t","done":true,"epochs":[{"up_to":["5"],"position":%d},{"position":%d}]}]}`, at, at)}
	o, err := ParseOffset(patched)
	if err == nil {
		_, err = stream(t, o)
		t.Fatalf("ParseOffset took a progress of two epochs; the stream then returned %v", err)
	}
	if !source.IsFatal(err) || !strings.Contains(err.Error(), snapshot.ProgressKey) || !strings.Contains(err.Error(), "table d.t has 2 epochs") {
		t.Errorf("got %v, want a fatal refusal naming %s and d.t", err, snapshot.ProgressKey)
	}

	patched[snapshot.ProgressKey] = fmt.Sprintf(`{"tables":[{"id":"d.t","done":true,"epochs":[{"position":%d}]}]}`, at)
	if o, err = ParseOffset(patched); err != nil {
		t.Fatal(err)
	}
	batches, err := stream(t, o)
	if err != nil || len(batches) != 1 || len(batches[0].Events) != 0 {
		t.Errorf("one epoch: got %v, %v; want the covered change dropped", batches, err)
	}
}
