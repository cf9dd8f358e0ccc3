package types

import (
	"bytes"
	"errors"
	"testing"

	"github.com/cdcd/cdcd/source/mysql/tables"
)

// TestSchemasMatchGoldens builds every corpus column's field schema from the column model Debezium
// recorded and compares it, as JsonConverter bytes, with the schema of the golden records, in every
// mode variant.
func TestSchemasMatchGoldens(t *testing.T) {
	for variant, modes := range goldenVariants {
		t.Run(variant, func(t *testing.T) {
			tbls := goldenTables(t, variant)
			checked := map[string]bool{}
			for _, rec := range goldenRecords(t, variant) {
				cols := columnsFor(tbls[rec.Table], rec.FieldSchemas)
				if cols == nil {
					t.Fatalf("%s: no table version has fields %v", rec.Table, rec.FieldSchemas)
				}
				for i, f := range rec.FieldSchemas {
					key := rec.Table + "." + f.Name + "/" + string(f.Raw)
					if checked[key] {
						continue
					}
					checked[key] = true
					s, err := modes.Schema(&cols[i])
					if err != nil {
						t.Errorf("%s.%s: %v", rec.Table, f.Name, err)
						continue
					}
					got := fieldSchemaJSON(t, f.Name, s)
					if !bytes.Equal(got, f.Raw) {
						t.Errorf("%s.%s:\n got %s\nwant %s", rec.Table, f.Name, got, f.Raw)
					}
				}
			}
			if len(checked) < 90 {
				t.Errorf("only %d field schemas checked", len(checked))
			}
		})
	}
}

func TestSchemaRefusesUnmappedModesAndTypes(t *testing.T) {
	col := &tables.Column{Name: "c", JDBCType: jdbcInteger, TypeName: "INT", Optional: true}
	if _, err := withModes(func(m *Modes) { m.Time = "adaptive" }).Schema(col); !errors.Is(err, ErrMode) {
		t.Errorf("adaptive time mode: err = %v, want ErrMode", err)
	}
	if _, err := (Modes{}).Schema(col); !errors.Is(err, ErrMode) {
		t.Errorf("zero Modes: err = %v, want ErrMode", err)
	}
	for _, c := range []*tables.Column{
		{Name: "v", JDBCType: 1111, TypeName: "VECTOR"},
		{Name: "x", JDBCType: 1111, TypeName: "INET6"},
		{Name: "u", JDBCType: 1111, TypeName: "UUID"}, // MySQL has no UUID type
	} {
		m := DefaultModes
		if c.TypeName == "UUID" {
			m.Flavor = MySQL
		}
		if _, err := m.Schema(c); !errors.Is(err, ErrUnsupportedType) {
			t.Errorf("%s: err = %v, want ErrUnsupportedType", c.TypeName, err)
		}
	}
}
