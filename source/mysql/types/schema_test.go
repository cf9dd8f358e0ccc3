package types

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/cdcd/cdcd/schema"
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
	col := &tables.Column{Name: "c", JDBCType: tables.JDBCInteger, TypeName: "INT", Optional: true}
	if _, err := withModes(func(m *Modes) { m.Time = "adaptive" }).Schema(col); !errors.Is(err, ErrMode) {
		t.Errorf("adaptive time mode: err = %v, want ErrMode", err)
	}
	if _, err := (Modes{}).Schema(col); !errors.Is(err, ErrMode) {
		t.Errorf("zero Modes: err = %v, want ErrMode", err)
	}
	for _, c := range []*tables.Column{
		{Name: "v", JDBCType: 1111, TypeName: "VECTOR"}, // MariaDB's: the MySQL connector's mapping is MySQL's
		{Name: "x", JDBCType: 1111, TypeName: "INET6"},  // MySQL has no INET types…
		{Name: "u", JDBCType: 1111, TypeName: "UUID"},   // …and no UUID type
	} {
		m := DefaultModes
		if c.TypeName != "VECTOR" {
			m.Flavor = MySQL
		}
		if _, err := m.Schema(c); !errors.Is(err, ErrUnsupportedType) {
			t.Errorf("%s: err = %v, want ErrUnsupportedType", c.TypeName, err)
		}
	}
}

func TestInetColumnsAreStrings(t *testing.T) {
	for _, c := range []struct {
		typeName string
		binlog   []byte
		want     string
	}{
		{"INET4", []byte{192, 168, 0, 1}, "192.168.0.1"},
		{"INET6", []byte{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, "2001:db8::1"},
		{"INET6", []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 1, 2, 3, 4}, "::ffff:1.2.3.4"},
	} {
		col := &tables.Column{Name: "a", JDBCType: 1111, TypeName: c.typeName, Optional: true}
		s, err := DefaultModes.Schema(col)
		if err != nil || s.Type != schema.String {
			t.Fatalf("%s: schema %+v, %v", c.typeName, s, err)
		}
		if got, err := DefaultModes.FromBinlog(col, c.binlog); err != nil || got != c.want {
			t.Errorf("%s %v: %v, %v; want %s", c.typeName, c.binlog, got, err, c.want)
		}
	}
	if _, err := DefaultModes.FromBinlog(&tables.Column{Name: "a", TypeName: "INET4"}, []byte{1, 2}); !errors.Is(err, ErrValue) {
		t.Errorf("a 2-byte INET4: %v, want ErrValue", err)
	}
}

// TestMySQLVectorIsAFloatVector: MySQL's VECTOR is io.debezium.data.FloatVector, an array of FLOAT32 read
// from the little-endian floats the server sends, in the binlog and in a snapshot's rows alike.
func TestMySQLVectorIsAFloatVector(t *testing.T) {
	m := DefaultModes
	m.Flavor = MySQL
	col := &tables.Column{Name: "v", JDBCType: 1111, TypeName: "VECTOR", Length: 3, HasLength: true, Optional: true}
	s, err := m.Schema(col)
	if err != nil || s.Type != schema.Array || s.Name != "io.debezium.data.FloatVector" || s.Version != 1 || s.Items == nil || s.Items.Type != schema.Float32 || s.Items.Optional {
		t.Fatalf("schema %+v, %v", s, err)
	}
	raw := []byte{0, 0, 0xc0, 0x3f, 0, 0, 0, 0, 0, 0, 0x50, 0xc0} // 1.5, 0, -3.25
	want := []any{float32(1.5), float32(0), float32(-3.25)}
	if got, err := m.FromBinlog(col, raw); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("binlog: %v, %v; want %v", got, err, want)
	}
	if got, err := m.FromSnapshot(col, mysql.NewFieldValue(mysql.FieldValueTypeString, 0, raw)); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("snapshot: %v, %v; want %v", got, err, want)
	}
	if _, err := m.FromBinlog(col, raw[:5]); !errors.Is(err, ErrValue) {
		t.Errorf("a 5-byte VECTOR: %v, want ErrValue", err)
	}
}
