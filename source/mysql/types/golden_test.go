package types

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cdcd/cdcd/e2e/testenv"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/schema/jsonconv"
	"github.com/cdcd/cdcd/source/mysql/tables"
)

// The MariaDB goldens (Debezium's MariaDbConnector on MariaDB 10.11): the tables' column models from
// the schema history and the records of the data topics.

const goldenDir = "../../../testdata/mariadb"

// goldenVariants are the captures whose connector modes this package maps, with those modes.
var goldenVariants = map[string]Modes{
	"default":        DefaultModes,
	"bigint-precise": withModes(func(m *Modes) { m.BigintUnsigned = BigintPrecise }),
	"binary-base64":  withModes(func(m *Modes) { m.Binary = BinaryBase64 }),
	"decimal-string": withModes(func(m *Modes) { m.Decimal = DecimalString }),
	"time-connect":   withModes(func(m *Modes) { m.Time = TimeConnect }),
}

func withModes(f func(*Modes)) Modes {
	m := DefaultModes
	f(&m)
	return m
}

// historyColumn is a column of a schema history tableChanges document.
type historyColumn struct {
	Name                   string   `json:"name"`
	JDBCType               int      `json:"jdbcType"`
	TypeName               string   `json:"typeName"`
	TypeExpression         string   `json:"typeExpression"`
	CharsetName            *string  `json:"charsetName"`
	Length                 *int     `json:"length"`
	Scale                  *int     `json:"scale"`
	Position               int      `json:"position"`
	Optional               bool     `json:"optional"`
	AutoIncremented        bool     `json:"autoIncremented"`
	Generated              bool     `json:"generated"`
	Comment                *string  `json:"comment"`
	HasDefaultValue        bool     `json:"hasDefaultValue"`
	DefaultValueExpression *string  `json:"defaultValueExpression"`
	EnumValues             []string `json:"enumValues"`
}

func (h historyColumn) column() tables.Column {
	c := tables.Column{
		Name: h.Name, JDBCType: h.JDBCType, TypeName: h.TypeName, TypeExpression: h.TypeExpression,
		Position: h.Position, Optional: h.Optional, AutoIncremented: h.AutoIncremented, Generated: h.Generated,
		HasDefault: h.HasDefaultValue, EnumValues: h.EnumValues,
	}
	if h.CharsetName != nil {
		c.Charset = *h.CharsetName
	}
	if h.Length != nil {
		c.Length, c.HasLength = *h.Length, true
	}
	if h.Scale != nil {
		c.Scale, c.HasScale = *h.Scale, true
	}
	if h.Comment != nil {
		c.Comment, c.HasComment = *h.Comment, true
	}
	if h.DefaultValueExpression != nil {
		c.Default, c.DefaultSet = *h.DefaultValueExpression, true
	}
	return c
}

// goldenTables returns every version of every table the history describes, by table name.
func goldenTables(t *testing.T, variant string) map[string][][]tables.Column {
	t.Helper()
	out := map[string][][]tables.Column{}
	for _, line := range testenv.JSONLines(t, filepath.Join(goldenDir, variant, "schema-history.jsonl")) {
		var rec struct{ Value string }
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatal(err)
		}
		var doc struct {
			TableChanges []struct {
				ID    string
				Table *struct{ Columns []historyColumn }
			}
		}
		if err := json.Unmarshal([]byte(rec.Value), &doc); err != nil {
			t.Fatal(err)
		}
		for _, tc := range doc.TableChanges {
			if tc.Table == nil {
				continue
			}
			name := strings.Trim(tc.ID[strings.LastIndex(tc.ID, ".")+1:], `"`)
			var cols []tables.Column
			for _, h := range tc.Table.Columns {
				cols = append(cols, h.column())
			}
			out[name] = append(out[name], cols)
		}
	}
	return out
}

// goldenRecord is one data change event: its table, op, and the raw JSON of the before and after
// fields' schemas and values.
type goldenRecord struct {
	Table, Op     string
	FieldSchemas  []fieldSchema
	Before, After map[string]json.RawMessage
}

type fieldSchema struct {
	Name string
	Raw  json.RawMessage
}

func goldenRecords(t *testing.T, variant string) []goldenRecord {
	t.Helper()
	var out []goldenRecord
	for _, line := range testenv.JSONLines(t, filepath.Join(goldenDir, variant, "capture.jsonl")) {
		var rec struct {
			Topic string
			Value *string
		}
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatal(err)
		}
		if rec.Value == nil || !strings.HasPrefix(rec.Topic, "mdb1.") {
			continue
		}
		var env struct {
			Schema struct {
				Fields []struct {
					Field  string
					Fields []json.RawMessage
				}
			}
			Payload struct {
				Op            string
				Before, After map[string]json.RawMessage
			}
		}
		if err := json.Unmarshal([]byte(*rec.Value), &env); err != nil {
			t.Fatal(err)
		}
		g := goldenRecord{Table: rec.Topic[strings.LastIndex(rec.Topic, ".")+1:], Op: env.Payload.Op,
			Before: env.Payload.Before, After: env.Payload.After}
		for _, raw := range env.Schema.Fields[0].Fields {
			var f struct{ Field string }
			if err := json.Unmarshal(raw, &f); err != nil {
				t.Fatal(err)
			}
			g.FieldSchemas = append(g.FieldSchemas, fieldSchema{f.Field, raw})
		}
		out = append(out, g)
	}
	return out
}

// columnsFor picks the table version whose columns are the record's fields.
func columnsFor(versions [][]tables.Column, fields []fieldSchema) []tables.Column {
	for i := len(versions) - 1; i >= 0; i-- {
		cols := versions[i]
		if len(cols) != len(fields) {
			continue
		}
		match := true
		for j := range cols {
			match = match && cols[j].Name == fields[j].Name
		}
		if match {
			return cols
		}
	}
	return nil
}

// fieldSchemaJSON is the schema node JsonConverter writes for a struct field named name with schema s.
func fieldSchemaJSON(t *testing.T, name string, s *schema.Schema) []byte {
	t.Helper()
	row := &schema.Schema{Type: schema.StructT, Optional: true, Fields: []schema.Field{{Name: name, Schema: s}}}
	return decodeRow(t, name, row, nil).Schema.Fields[0]
}

// fieldValueJSON is the value JsonConverter writes for a struct field named name with schema s
// holding v.
func fieldValueJSON(t *testing.T, name string, s *schema.Schema, v any) []byte {
	t.Helper()
	row := &schema.Schema{Type: schema.StructT, Fields: []schema.Field{{Name: name, Schema: s}}}
	return decodeRow(t, name, row, &schema.Struct{Schema: row, Values: []any{v}}).Payload[name]
}

type rowJSON struct {
	Schema  struct{ Fields []json.RawMessage }
	Payload map[string]json.RawMessage
}

func decodeRow(t *testing.T, name string, row *schema.Schema, v any) rowJSON {
	t.Helper()
	var doc rowJSON
	out, err := jsonconv.New().Encode(row, v)
	if err != nil {
		t.Fatalf("%s: encode: %v", name, err)
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}
