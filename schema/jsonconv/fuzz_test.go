package jsonconv

import (
	"encoding/json"
	"math"
	"math/big"
	"testing"

	"github.com/cdcd/cdcd/schema"
)

// gen turns fuzz input into a schema and a value. Values mostly fit their schema, and sometimes do not
// (wrong Go type, nulls in required fields, wrong decimal scale), so both the success and error paths run.
type gen struct {
	data []byte
}

func (g *gen) byte() byte {
	if len(g.data) == 0 {
		return 0
	}
	b := g.data[0]
	g.data = g.data[1:]
	return b
}

func (g *gen) int64() int64 {
	var v int64
	for range 8 {
		v = v<<8 | int64(g.byte())
	}
	return v
}

func (g *gen) string() string {
	n := int(g.byte() % 12)
	b := make([]byte, 0, n)
	for range n {
		b = append(b, g.byte())
	}
	return string(b)
}

var primitiveTypes = []schema.Type{schema.Boolean, schema.Int8, schema.Int16, schema.Int32, schema.Int64,
	schema.Float32, schema.Float64, schema.String, schema.Bytes}

func (g *gen) schema(depth int) *schema.Schema {
	kind := g.byte() % 16
	if depth > 3 {
		kind %= 9
	}
	s := &schema.Schema{Optional: g.byte()%2 == 0}
	switch {
	case kind < 9:
		s.Type = primitiveTypes[kind]
	case kind == 9:
		s.Type, s.Items = schema.Array, g.schema(depth+1)
	case kind == 10:
		s.Type, s.Keys, s.Values = schema.Map, g.schema(depth+1), g.schema(depth+1)
	case kind == 11:
		s.Type, s.Name, s.Version = schema.Bytes, schema.DecimalName, 1
		s.Parameters = []schema.Param{{Key: "scale", Value: string('0' + rune(g.byte()%4))}}
	case kind == 12:
		s.Type, s.Name = schema.Int64, schema.TimestampName
	default:
		s.Type, s.Name = schema.StructT, g.string()
		for i := range int(g.byte() % 4) {
			s.Fields = append(s.Fields, schema.Field{Name: "f" + string(rune('a'+i)), Schema: g.schema(depth + 1)})
		}
	}
	if g.byte()%5 == 0 {
		s.Doc = g.string()
		s.Parameters = append(s.Parameters, schema.Param{Key: g.string(), Value: g.string()})
	}
	if g.byte()%4 == 0 {
		s.Default, s.HasDefault = g.value(s), true
	}
	return s
}

func (g *gen) value(s *schema.Schema) any {
	switch g.byte() % 16 {
	case 0:
		return nil
	case 1:
		return g.string() // often the wrong type
	}
	if s.Name == schema.DecimalName {
		return schema.Decimal{Unscaled: new(big.Int).Lsh(big.NewInt(g.int64()), uint(g.byte()%80)), Scale: int32(g.byte() % 4)}
	}
	switch s.Type {
	case schema.Boolean:
		return g.byte()%2 == 0
	case schema.Int8:
		return int8(g.byte())
	case schema.Int16:
		return int16(g.int64())
	case schema.Int32:
		return int32(g.int64())
	case schema.Int64:
		return g.int64()
	case schema.Float32:
		return math.Float32frombits(uint32(g.int64()))
	case schema.Float64:
		return math.Float64frombits(uint64(g.int64()))
	case schema.String:
		return g.string()
	case schema.Bytes:
		return []byte(g.string())
	case schema.Array:
		var elems []any
		for range int(g.byte() % 4) {
			elems = append(elems, g.value(s.Items))
		}
		return elems
	case schema.Map:
		var entries []schema.MapEntry
		for range int(g.byte() % 4) {
			entries = append(entries, schema.MapEntry{Key: g.value(s.Keys), Value: g.value(s.Values)})
		}
		return entries
	case schema.StructT:
		st := schema.NewStruct(s)
		for i, f := range s.Fields {
			st.Values[i] = g.value(f.Schema)
		}
		return st
	}
	return nil
}

// FuzzEncode checks that Encode never panics and that whatever it returns without error is valid JSON.
func FuzzEncode(f *testing.F) {
	f.Add([]byte{13, 0, 3, 0, 1, 5, 1, 2, 3, 9, 1, 7})
	f.Add([]byte{10, 1, 7, 0, 4, 1, 0, 0, 2, 3, 3, 'a', 'b', 0xff})
	f.Add([]byte{11, 0, 2, 0, 0, 5, 1, 2, 3, 4, 5, 6, 7, 8, 9, 2})
	f.Fuzz(func(t *testing.T, data []byte) {
		g := &gen{data: data}
		var s *schema.Schema
		if g.byte()%8 != 0 {
			s = g.schema(0)
		}
		var v any
		if s != nil {
			v = g.value(s)
		} else if g.byte()%2 == 0 {
			v = []schema.MapEntry{{Key: g.string(), Value: []any{g.int64(), g.string(), nil}}}
		}
		for _, c := range []Converter{New(), {DecimalFormat: Numeric}, {SchemasEnable: true}} {
			out, err := c.Encode(s, v)
			if err != nil {
				continue
			}
			if s == nil && v == nil {
				if out != nil {
					t.Fatalf("tombstone encoded as %q", out)
				}
				continue
			}
			if !json.Valid(out) {
				t.Fatalf("invalid JSON %q", out)
			}
		}
	})
}
