package ddl

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/cdcd/cdcd/e2e/capture"
	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/schema/jsonconv"
)

const goldenDir = "../../../testdata/mariadb"

// goldenVariants are the MariaDB captures; every one streams the same DDL.
var goldenVariants = []string{"default", "schemas-off", "bigint-precise", "binary-base64", "decimal-string",
	"time-connect", "truncate-no-tombstones"}

func readCapture(t testing.TB, variant, file string) []capture.Record {
	t.Helper()
	f, err := os.Open(filepath.Join(goldenDir, variant, file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	records, err := capture.ReadJSONL(f)
	if err != nil {
		t.Fatal(err)
	}
	return records
}

// TestGoldenHistory feeds every DDL of Debezium's schema history, in order, through Catalog.Apply and
// checks that each produces exactly the golden record's bytes (position and ts_ms taken from the golden).
func TestGoldenHistory(t *testing.T) {
	for _, variant := range goldenVariants {
		t.Run(variant, func(t *testing.T) {
			c := NewCatalog(MariaDB)
			for _, rec := range readCapture(t, variant, "schema-history.jsonl") {
				golden, err := DecodeHistoryRecord(rec.Value)
				if err != nil {
					t.Fatalf("offset %d: %v", rec.Offset, err)
				}
				changes, err := c.Apply(golden.Change.Database, golden.Change.DDL)
				if err != nil {
					t.Fatalf("offset %d: %v", rec.Offset, err)
				}
				if len(changes) != 1 {
					t.Fatalf("offset %d: %d changes for %q, want 1", rec.Offset, len(changes), golden.Change.DDL)
				}
				got, err := HistoryRecord{Server: golden.Server, Position: golden.Position, TsMs: golden.TsMs, Change: changes[0]}.Encode()
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, rec.Value) {
					t.Errorf("offset %d (%q):\n%s", rec.Offset, golden.Change.DDL, firstDiff(got, rec.Value))
				}
			}
		})
	}
}

// TestGoldenSchemaChangeEvents builds every record of the schema change topic (mdb1) from the changes of
// the history's DDL and compares its JsonConverter bytes with Debezium's.
func TestGoldenSchemaChangeEvents(t *testing.T) {
	for _, variant := range goldenVariants {
		t.Run(variant, func(t *testing.T) {
			history := readCapture(t, variant, "schema-history.jsonl")
			var events []capture.Record
			for _, r := range readCapture(t, variant, "capture.jsonl") {
				if r.Topic == "mdb1" {
					events = append(events, r)
				}
			}
			if len(events) != len(history) {
				t.Fatalf("%d schema change events for %d history records", len(events), len(history))
			}
			conv := jsonconv.New()
			conv.SchemasEnable = variant != "schemas-off"
			sourceSchema := schema.BinlogSourceSchema(schema.MariaDBSourceName)
			schemas := NewSchemaChangeSchemas("mariadb", sourceSchema)
			c := NewCatalog(MariaDB)
			for i, rec := range history {
				golden, err := DecodeHistoryRecord(rec.Value)
				if err != nil {
					t.Fatal(err)
				}
				changes, err := c.Apply(golden.Change.Database, golden.Change.DDL)
				if err != nil {
					t.Fatal(err)
				}
				ev := events[i]
				src, tsMs := goldenSource(t, conv.SchemasEnable, ev.Value, sourceSchema)
				key, value := schemas.Record(src, tsMs, changes[0])
				gotKey, err := conv.Encode(schemas.Key, key)
				if err != nil {
					t.Fatal(err)
				}
				gotValue, err := conv.Encode(schemas.Value, value)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(gotKey, ev.Key) {
					t.Errorf("event %d key:\n%s", i, firstDiff(gotKey, ev.Key))
				}
				if !bytes.Equal(gotValue, ev.Value) {
					t.Errorf("event %d value (%q):\n%s", i, golden.Change.DDL, firstDiff(gotValue, ev.Value))
				}
			}
		})
	}
}

// goldenSource rebuilds the source block and ts_ms of a golden schema change record.
func goldenSource(t *testing.T, schemas bool, value []byte, s *schema.Schema) (*schema.Struct, int64) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(value))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if schemas {
		doc = doc["payload"].(map[string]any)
	}
	raw := doc["source"].(map[string]any)
	src := schema.NewStruct(s)
	for _, f := range s.Fields {
		v := raw[f.Name]
		if n, ok := v.(json.Number); ok {
			i, err := n.Int64()
			if err != nil {
				t.Fatal(err)
			}
			switch f.Schema.Type {
			case schema.Int32:
				v = int32(i)
			default:
				v = i
			}
		}
		src.Set(f.Name, v)
	}
	ts, err := doc["ts_ms"].(json.Number).Int64()
	if err != nil {
		t.Fatal(err)
	}
	return src, ts
}

// TestRecoverGolden rebuilds the catalog from Debezium's history and finds the tables Apply built.
func TestRecoverGolden(t *testing.T) {
	history := readCapture(t, "default", "schema-history.jsonl")
	applied := NewCatalog(MariaDB)
	var raw [][]byte
	for _, rec := range history {
		golden, err := DecodeHistoryRecord(rec.Value)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := applied.Apply(golden.Change.Database, golden.Change.DDL); err != nil {
			t.Fatal(err)
		}
		raw = append(raw, rec.Value)
	}
	recovered, err := Recover(MariaDB, raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Debezium stores ALTER TABLE … RENAME TO without a previousId, so its recovery (and cdcd's) keeps the
	// old name too: created_mid, renamed to renamed_mid and dropped, comes back as it was created.
	createdMid := tablesID("cdcd_golden", "created_mid")
	if recovered.Table(createdMid) == nil {
		t.Fatalf("recovery lost Debezium's stale %s", createdMid)
	}
	delete(recovered.tables, createdMid)
	if !reflect.DeepEqual(recovered.TableIDs(), applied.TableIDs()) {
		t.Fatalf("recovered tables %v, applied %v", recovered.TableIDs(), applied.TableIDs())
	}
	for _, id := range applied.TableIDs() {
		if !reflect.DeepEqual(recovered.Table(id), applied.Table(id)) {
			t.Errorf("%s recovered as\n%+v\nwant\n%+v", id, recovered.Table(id), applied.Table(id))
		}
	}
	// The character sets come back from the re-applied CREATE DATABASE: a new table inherits utf8mb4.
	changes, err := recovered.Apply("cdcd_golden", "CREATE TABLE later (id INT, s VARCHAR(3))")
	if err != nil {
		t.Fatal(err)
	}
	if got := changes[0].Table; got.DefaultCharset != "utf8mb4" || got.Columns[1].Charset != "utf8mb4" {
		t.Errorf("new table after recovery: charset %q, column %q", got.DefaultCharset, got.Columns[1].Charset)
	}
}

// TestRecoverUpTo stops at the stored offset: the ALTER streamed after it is not applied.
func TestRecoverUpTo(t *testing.T) {
	var raw [][]byte
	for _, rec := range readCapture(t, "default", "schema-history.jsonl") {
		raw = append(raw, rec.Value)
	}
	beforeAlter := func(r HistoryRecord) bool {
		for _, f := range r.Position {
			if f.Name == "pos" {
				return f.Value.(int64) < 414684
			}
		}
		return true
	}
	c, err := Recover(MariaDB, raw, beforeAlter)
	if err != nil {
		t.Fatal(err)
	}
	alterMe := c.Table(tablesID("cdcd_golden", "alter_me"))
	if alterMe == nil || len(alterMe.Columns) != 2 || alterMe.Columns[1].TypeName != "INT" {
		t.Fatalf("alter_me recovered before its ALTER as %+v", alterMe)
	}
}

// firstDiff shows where two documents part.
func firstDiff(got, want []byte) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	from := max(0, i-200)
	return "got:  …" + string(got[from:min(len(got), i+200)]) + "\nwant: …" + string(want[from:min(len(want), i+200)])
}
