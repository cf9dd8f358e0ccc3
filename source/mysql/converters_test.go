package mysql

import (
	"regexp"
	"testing"

	"github.com/cdcd/cdcd/source/mysql/tables"
)

// TestBooleanConverterApplies: the converter takes TINYINT and TINYINT UNSIGNED columns of length 1 (any
// length with length.checker=false) that its selector names, ignoring case; BOOLEAN is Connect's boolean
// already, and other types are left alone.
func TestBooleanConverterApplies(t *testing.T) {
	one := func(typ string, length int) *tables.Column {
		return &tables.Column{Name: "Flag", TypeName: typ, Length: length, HasLength: length > 0}
	}
	all := booleanConverter{lengthChecker: true}
	selected := booleanConverter{lengthChecker: true, selector: []*regexp.Regexp{regexp.MustCompile(`^(?i:db\.t\.flag)$`)}}
	anyLength := booleanConverter{}
	for _, tc := range []struct {
		b    booleanConverter
		col  *tables.Column
		want bool
	}{
		{all, one("TINYINT", 1), true},
		{all, one("TINYINT UNSIGNED", 1), true},
		{all, one("TINYINT", 4), false},
		{all, one("TINYINT", 0), false},
		{anyLength, one("TINYINT", 4), true},
		{all, one("SMALLINT", 1), false},
		{all, one("BOOLEAN", 1), false},
		{selected, one("TINYINT", 1), true},
		{selected, &tables.Column{Name: "other", TypeName: "TINYINT", Length: 1, HasLength: true}, false},
	} {
		if got := tc.b.applies("db.t", tc.col); got != tc.want {
			t.Errorf("%+v on %s(%d): %v, want %v", tc.b, tc.col.TypeName, tc.col.Length, got, tc.want)
		}
	}
	for _, tc := range []struct {
		v        any
		optional bool
		def      any
		want     any
	}{
		{int8(1), true, nil, true}, {int8(0), true, nil, false}, {int8(-1), true, nil, false}, {int16(2), true, nil, true},
		{nil, true, nil, nil}, {nil, false, true, true}, {nil, false, nil, false},
	} {
		if got := asBoolean(tc.v, tc.optional, tc.def); got != tc.want {
			t.Errorf("asBoolean(%v, optional %v, default %v) = %v, want %v", tc.v, tc.optional, tc.def, got, tc.want)
		}
	}
}
