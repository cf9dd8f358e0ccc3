package incremental

import (
	"testing"

	"github.com/cdcd/cdcd/schema"
)

func TestKeyTextTellsTypesApart(t *testing.T) {
	ks := &schema.Schema{Type: schema.StructT}
	a := &schema.Struct{Schema: ks, Values: []any{int32(1), "a"}}
	b := &schema.Struct{Schema: ks, Values: []any{int64(1), "a"}}
	c := &schema.Struct{Schema: ks, Values: []any{int32(1), "a"}}
	d := &schema.Struct{Schema: ks, Values: []any{[]byte{1}, "a"}}
	if KeyText(a) == KeyText(b) || KeyText(a) != KeyText(c) || KeyText(d) == KeyText(a) || KeyText(nil) != "" {
		t.Fatal("KeyText must equal for equal values and differ across types")
	}
}
