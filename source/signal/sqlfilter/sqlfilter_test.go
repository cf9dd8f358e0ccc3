package sqlfilter

import (
	"strings"
	"testing"
)

var columns = []string{"id", "name", "Created", "active", "price", "Émile", "émile"}

// Accepted filters are printed from their parse tree: columns quoted as the dialect quotes them and named
// as the catalog names them, every operation parenthesised, literals re-quoted.
func TestRenderAccepted(t *testing.T) {
	for _, tc := range []struct{ filter, pg, my string }{
		{"id > 10", `("id" > 10)`, "(`id` > 10)"},
		{"ID = 1 and name <> 'o''brien'", `(("id" = 1) AND ("name" <> 'o''brien'))`, "((`id` = 1) AND (`name` <> 'o''brien'))"},
		{`"Created" >= '2024-01-01' OR NOT active`, `(("Created" >= '2024-01-01') OR (NOT "active"))`, ""},
		{"`created` >= '2024-01-01'", "", "(`Created` >= '2024-01-01')"},
		{`name = "bob"`, "", "(`name` = 'bob')"},
		{"price * 2 + 1 BETWEEN -1.5 AND 1e6", `((("price" * 2) + 1) BETWEEN (- 1.5) AND 1e6)`, "(((`price` * 2) + 1) BETWEEN (- 1.5) AND 1e6)"},
		{"id NOT IN (1, -2, NULL) AND name IS NOT NULL", `(("id" NOT IN (1, -2, NULL)) AND ("name" IS NOT NULL))`, "((`id` NOT IN (1, -2, NULL)) AND (`name` IS NOT NULL))"},
		{"lower(name) NOT LIKE 'a%' or coalesce(price, 0) % 3 != abs(id)", `((lower("name") NOT LIKE 'a%') OR ((coalesce("price", 0) % 3) != abs("id")))`, ""},
		{"active", `"active"`, "`active`"},
		{"Émile = 'x'", `("Émile" = 'x')`, "(`Émile` = 'x')"},
		{"active IS TRUE", `("active" IS TRUE)`, "(`active` IS TRUE)"},
		{"((id = 1))", `("id" = 1)`, "(`id` = 1)"},
		{"- - id < .5", `((- (- "id")) < .5)`, "((- (- `id`)) < .5)"},
	} {
		for _, d := range []struct {
			dialect Dialect
			want    string
		}{{PostgreSQL, tc.pg}, {MySQL, tc.my}} {
			if d.want == "" {
				continue
			}
			got, err := Render(tc.filter, d.dialect, columns)
			if err != nil || got != d.want {
				t.Errorf("Render(%q, %d) = %q, %v; want %q", tc.filter, d.dialect, got, err, d.want)
			}
		}
	}
}

// Refused filters name the construct; none of them reaches the database.
func TestRenderRefused(t *testing.T) {
	for _, tc := range []struct {
		filter string
		d      Dialect
		want   string
	}{
		{"pg_sleep(1e6) IS NULL", PostgreSQL, "the function pg_sleep at offset 0 is not allowed"},
		{"1=1; DROP TABLE x", PostgreSQL, "';' at offset 3 is not allowed"},
		{"id IN (SELECT id FROM other)", PostgreSQL, "IN's list holds literals only"},
		{"id = (SELECT max(id) FROM other)", MySQL, "a subquery at offset 6 is not allowed"},
		{"EXISTS (SELECT 1)", PostgreSQL, "the function EXISTS at offset 0 is not allowed"},
		{"id = 1 -- comment", PostgreSQL, "a comment at offset 7"},
		{"id = 1 /* x */", MySQL, "a comment at offset 7"},
		{"id = 1 # x", MySQL, "a comment at offset 7"},
		{"name = $$x$$", PostgreSQL, "'$' at offset 7"},
		{"name = $1", PostgreSQL, "'$' at offset 7"},
		{`name = 'a\' OR 1=1 -- '`, MySQL, "backslash"},
		{"other = 1", PostgreSQL, `"other" is not a column of the table`},
		{`"ID" = 1`, PostgreSQL, `"ID" is not a column of the table`},
		{"t.id = 1", PostgreSQL, "qualified name at offset 0"},
		{"id + 1", PostgreSQL, "it is a value, not a condition"},
		{"'x'", MySQL, "it is a value, not a condition"},
		{"id = 1 AND 2", PostgreSQL, "AND joins values that are not conditions"},
		{"NOT 1", PostgreSQL, "NOT of a value that is not a condition"},
		{"id = 1 UNION SELECT 1", PostgreSQL, "UNION at offset 7 is not allowed"},
		{"CASE WHEN id = 1 THEN true END", PostgreSQL, "CASE at offset 0 is not allowed"},
		{"name || 'x' = 'y'", PostgreSQL, `'|' at offset 5 is not allowed`},
		{"id = 1 OR", PostgreSQL, "the filter ends early"},
		{"(id = 1", PostgreSQL, "a ')' closing"},
		{"'open", PostgreSQL, "not closed"},
		{"id = 1e", PostgreSQL, "runs into a name"},
		{"id ILIKE 'x'", PostgreSQL, "after the condition"},
		{"id = 1 ESCAPE", PostgreSQL, "ESCAPE at offset 7"},
		{strings.Repeat("(", 200) + "id = 1" + strings.Repeat(")", 200), PostgreSQL, "nests too deeply"},
		{strings.Repeat("x", MaxLength+1), PostgreSQL, "at most 8192"},
		{"name = '\xff'", PostgreSQL, "not valid UTF-8"},
		{"`id` = 1", PostgreSQL, "'`' at offset 0"},
	} {
		got, err := Render(tc.filter, tc.d, columns)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Render(%q) = %q, %v; want an error with %q", tc.filter, got, err, tc.want)
		}
	}
}

// FuzzRender: no filter crashes the parser, and what it prints parses again to itself, with no comment,
// statement separator or dollar quote in it.
func FuzzRender(f *testing.F) {
	for _, s := range []string{"id > 10 AND name LIKE 'a%'", "pg_sleep(1) IS NULL", "id IN (1, -2, 'x')", "NOT (a BETWEEN 1 AND 2)",
		"`id` = \"x\"", "lower(name) = 'o''b'", "((((id))))", "id = 1; drop"} {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, filter string, pg bool) {
		d := MySQL
		if pg {
			d = PostgreSQL
		}
		fl, err := Parse(filter, d)
		if err != nil {
			return
		}
		// Every name the filter holds is taken for a column, so that its whole tree prints.
		var names []string
		var collect func(n *node)
		collect = func(n *node) {
			if n.kind == nodeColumn {
				names = append(names, n.text, strings.ToLower(n.text))
			}
			for _, a := range n.args {
				collect(a)
			}
		}
		collect(fl.root)
		sql, err := fl.SQL(names)
		if err != nil {
			t.Fatalf("%q parsed but does not print: %v", filter, err)
		}
		again, err := Render(sql, d, names)
		if err != nil || again != sql {
			t.Fatalf("%q printed %q, which renders as %q, %v", filter, sql, again, err)
		}
	})
}
