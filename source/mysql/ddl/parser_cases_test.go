package ddl

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"testing"
)

// debeziumCase is one line of testdata/debezium/parser-cases*.jsonl: a statement and what Debezium's own
// MariaDB or MySQL parser records for it (written by testdata/debezium/gen.sh, never by hand).
type debeziumCase struct {
	DB      string `json:"db"`
	DDL     string `json:"ddl"`
	Error   string `json:"error"`
	Changes []struct {
		Type         string `json:"type"`
		Database     string `json:"database"`
		DDL          string `json:"ddl"`
		TableChanges []any  `json:"tableChanges"`
	} `json:"changes"`
}

// TestDebeziumParserCases applies, in order and to one catalog, statements covering the DDL Debezium
// handles (types and their spellings, defaults, keys, charsets, every ALTER clause, renames, drops, LIKE,
// unknown tables, several statements in one query) and compares each change with Debezium's: the MariaDB
// connector's parser (3.5.0.Final) and the MySQL connector's (3.6.1.Final, without the MariaDB-only syntax).
func TestDebeziumParserCases(t *testing.T) {
	for _, tc := range []struct {
		name   string
		flavor Flavor
		file   string
	}{
		{"mariadb", MariaDB, "testdata/debezium/parser-cases.jsonl"},
		{"mysql", MySQL, "testdata/debezium/parser-cases-mysql.jsonl"},
	} {
		t.Run(tc.name, func(t *testing.T) { checkDebeziumCases(t, tc.flavor, tc.file) })
	}
}

func checkDebeziumCases(t *testing.T, flavor Flavor, file string) {
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c := NewCatalog(flavor)
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var want debeziumCase
		if err := json.Unmarshal(sc.Bytes(), &want); err != nil {
			t.Fatal(err)
		}
		got, err := c.Apply(want.DB, want.DDL)
		if want.Error != "" {
			if err == nil {
				t.Errorf("%q: no error, Debezium says %s", want.DDL, want.Error)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", want.DDL, err)
			continue
		}
		if len(got) != len(want.Changes) {
			t.Errorf("%q: %d changes, Debezium records %d", want.DDL, len(got), len(want.Changes))
			continue
		}
		for i, w := range want.Changes {
			g := got[i]
			if string(g.Type) != w.Type || g.Database != w.Database || g.DDL != w.DDL {
				t.Errorf("%q change %d: %s %q %q, Debezium %s %q %q", want.DDL, i, g.Type, g.Database, g.DDL,
					w.Type, w.Database, w.DDL)
			}
			if gotTC := asJSON(t, tableChangeDocuments(g)); !reflect.DeepEqual(gotTC, w.TableChanges) {
				gj, _ := json.Marshal(gotTC)
				wj, _ := json.Marshal(w.TableChanges)
				t.Errorf("%q change %d tableChanges:\n%s", want.DDL, i, firstDiff(gj, wj))
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}

// asJSON turns a document value into what encoding/json decodes from its text.
func asJSON(t *testing.T, v []any) []any {
	t.Helper()
	var b bytes.Buffer
	if err := writePretty(&b, v, 0); err != nil {
		t.Fatal(err)
	}
	var out []any
	if err := json.Unmarshal(b.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	return out
}
