package mysql

import (
	"bytes"
	"errors"
	"testing"

	"github.com/go-mysql-org/go-mysql/replication"
)

func TestJSONDiffsApplyAsMySQLDoes(t *testing.T) {
	const doc = `{"a":1,"bb":[1,2,3],"c":{"d":"x","long name":true}}`
	replace, insert, remove := replication.JsonDiffOperationReplace, replication.JsonDiffOperationInsert, replication.JsonDiffOperationRemove
	for _, c := range []struct {
		diffs []jsonDiff
		want  string
	}{
		{[]jsonDiff{{replace, "$.a", `10`}}, `{"a":10,"bb":[1,2,3],"c":{"d":"x","long name":true}}`},
		{[]jsonDiff{{replace, "$.c.d", `"y \"q\""`}, {replace, "$.bb[2]", `[]`}}, `{"a":1,"bb":[1,2,[]],"c":{"d":"y \"q\"","long name":true}}`},
		// A new member goes where MySQL keeps it: by name length, then bytes.
		{[]jsonDiff{{insert, "$.ab", `{"k":1.5}`}, {insert, "$.z", `null`}}, `{"a":1,"z":null,"ab":{"k":1.5},"bb":[1,2,3],"c":{"d":"x","long name":true}}`},
		{[]jsonDiff{{remove, `$.c."long name"`, ``}, {remove, "$.bb[0]", ``}}, `{"a":1,"bb":[2,3],"c":{"d":"x"}}`},
		{[]jsonDiff{{insert, "$.bb[1]", `"in"`}, {insert, "$.bb[9]", `4`}}, `{"a":1,"bb":[1,"in",2,3,4],"c":{"d":"x","long name":true}}`},
		{[]jsonDiff{{replace, "$", `[true]`}}, `[true]`},
	} {
		v, err := parseJSON(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range c.diffs {
			if v, err = d.apply(v); err != nil {
				t.Fatalf("%v: %v", c.diffs, err)
			}
		}
		var out bytes.Buffer
		v.write(&out)
		if out.String() != c.want {
			t.Errorf("%v:\n got %s\nwant %s", c.diffs, out.String(), c.want)
		}
	}
}

func TestJSONDiffsThatDoNotFitAreRefused(t *testing.T) {
	replace, insert, remove := replication.JsonDiffOperationReplace, replication.JsonDiffOperationInsert, replication.JsonDiffOperationRemove
	for _, d := range []jsonDiff{
		{replace, "$.missing", `1`},
		{remove, "$.a.b", ``},
		{insert, "$.a", `2`}, // an insert of a member that exists
		{replace, "$.bb.x", `1`},
		{replace, "$[0]", `1`},
		{replace, "a", `1`},
		{replace, "$.bb[", `1`},
		{replace, "$.a", `{"unterminated`},
		{insert, "$", `1`},
	} {
		v, err := parseJSON(`{"a":1,"bb":[1]}`)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.apply(v); !errors.Is(err, errPartialJSON) {
			t.Errorf("%+v: %v, want errPartialJSON", d, err)
		}
	}
}

func TestDecimalBytes(t *testing.T) {
	for _, c := range []struct{ precision, scale, want int }{{12, 3, 6}, {10, 0, 5}, {18, 9, 8}, {65, 30, 30}, {1, 1, 1}} {
		if got := decimalBytes(c.precision, c.scale); got != c.want {
			t.Errorf("DECIMAL(%d,%d): %d bytes, want %d", c.precision, c.scale, got, c.want)
		}
	}
}

// FuzzPartialJSONDocument: no before image and no diff, however malformed, panics the applier.
func FuzzPartialJSONDocument(f *testing.F) {
	f.Add(`{"a":1,"bb":[1,2,3]}`, byte(0), "$.bb[1]", `{"k":[1]}`)
	f.Add(`[1,[2,[3]]]`, byte(2), "$[1][1][0]", ``)
	f.Add(`{"a b":"\"x\\"}`, byte(1), `$."a c"`, `"s"`)
	f.Fuzz(func(t *testing.T, doc string, op byte, path, value string) {
		v, err := parseJSON(doc)
		if err != nil {
			return
		}
		if v, err = (jsonDiff{op: replication.JsonDiffOperation(op % 3), path: path, value: value}).apply(v); err == nil {
			var out bytes.Buffer
			v.write(&out)
		}
	})
}
