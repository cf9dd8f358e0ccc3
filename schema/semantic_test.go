package schema

import (
	"bytes"
	"math/big"
	"reflect"
	"testing"
)

func TestSemanticSchemas(t *testing.T) {
	d := DecimalSchema(2, 10)
	if d.Type != Bytes || d.Name != DecimalName || d.Version != 1 ||
		!reflect.DeepEqual(d.Parameters, []Param{{"scale", "2"}, {"connect.decimal.precision", "10"}}) {
		t.Errorf("DecimalSchema = %+v", d)
	}
	if p := ConnectDecimal(2).Parameters; !reflect.DeepEqual(p, []Param{{"scale", "2"}}) {
		t.Errorf("ConnectDecimal parameters = %v", p)
	}
	if e := Enum([]string{"a", "b"}); e.Type != String || !reflect.DeepEqual(e.Parameters, []Param{{"allowed", "a,b"}}) {
		t.Errorf("Enum = %+v", e)
	}
	if b := Bits(7); !reflect.DeepEqual(b.Parameters, []Param{{"length", "7"}}) || b.Type != Bytes {
		t.Errorf("Bits = %+v", b)
	}
	v := VariableScaleDecimal()
	if v.Doc != "Variable scaled decimal" || v.Fields[0].Name != "scale" || v.Fields[1].Name != "value" || v.Optional {
		t.Errorf("VariableScaleDecimal = %+v", v)
	}
	if g := Geometry(); !g.Optional || g.Doc != "Geometry" {
		t.Errorf("Geometry = %+v", g)
	}
	// Fresh schemas: changing one must not change the next.
	a := MicroTimestamp()
	a.Optional = true
	if MicroTimestamp().Optional {
		t.Error("constructors share schemas")
	}
}

func TestPointValue(t *testing.T) {
	s := Point()
	p := PointValue(s, 1, 2)
	wkb := []byte{1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0, 0, 0, 0, 0, 0, 0, 0x40}
	if !bytes.Equal(p.Values[2].([]byte), wkb) || p.Values[0] != 1.0 || p.Values[1] != 2.0 || p.Values[3] != nil {
		t.Errorf("PointValue = %#v", p.Values)
	}
	if s.Doc != "Geometry (POINT)" || s.Fields[2].Schema.Optional != true || s.Fields[0].Schema.Optional {
		t.Errorf("Point schema = %+v", s)
	}
}

func TestVariableScaleDecimalValue(t *testing.T) {
	s := VariableScaleDecimal()
	v := VariableScaleDecimalValue(s, Decimal{Unscaled: big.NewInt(-129), Scale: 3})
	if v.Values[0] != int32(3) || !bytes.Equal(v.Values[1].([]byte), []byte{0xff, 0x7f}) {
		t.Errorf("value = %#v", v.Values)
	}
}
