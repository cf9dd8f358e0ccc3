package mysql

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/cdcd/cdcd/source/mysql/types"
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
