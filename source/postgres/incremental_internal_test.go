package postgres

import (
	"reflect"
	"strings"
	"testing"

	"github.com/cdcd/cdcd/snapshot/incremental"
)

// TestIncrementalOffsetInPostgresOffset writes a running snapshot's keys into a PostgreSQL offset and reads
// them back, after the transaction's keys as Debezium stores them.
func TestIncrementalOffsetInPostgresOffset(t *testing.T) {
	id := "sig-1"
	inc := &incremental.Offset{Collections: `[{"incremental_snapshot_collections_id":"public.a"}]`, PrimaryKey: "aced000570", MaximumKey: "aced000570", CorrelationID: &id}
	fields := Offset{LSN: 1, Incremental: inc}.Fields()
	m := map[string]any{}
	var names []string
	for _, f := range fields {
		m[f.Name] = f.Value
		names = append(names, f.Name)
	}
	if !strings.HasSuffix(strings.Join(names, ","), "incremental_snapshot_primary_key,incremental_snapshot_maximum_key,incremental_snapshot_collections,incremental_snapshot_correlation_id") {
		t.Fatalf("offset keys %v", names)
	}
	parsed, err := ParseOffset(m)
	if err != nil || !reflect.DeepEqual(parsed.Incremental, inc) {
		t.Fatalf("read back %+v, %v", parsed.Incremental, err)
	}
}

func TestJavaKeyValues(t *testing.T) {
	if javaValue, err := javaKeyValue("numeric", "1.5"); err == nil || javaValue != nil || !strings.Contains(err.Error(), "surrogate-key") {
		t.Fatalf("a numeric key: %v", err)
	}
	for typ, want := range map[string]any{"int2": int32(7), "int4": int32(7), "int8": int64(7), "varchar": "7", "bool": false} {
		if got, err := javaKeyValue(typ, "7"); err != nil || got != want {
			t.Errorf("javaKeyValue(%s) = %#v, %v; want %#v", typ, got, err, want)
		}
	}
}
