package postgres

import (
	"strings"
	"testing"

	"github.com/cdcd/cdcd/source/props"
)

// replica.identity.autoset.values is read as Debezium reads it: <expression>:<identity> entries, the
// expression matching schema.table whole and ignoring case; a malformed entry is refused naming it.
func TestParseReplicaIdentities(t *testing.T) {
	p := props.NewParser(map[string]string{"replica.identity.autoset.values": "public.orders:FULL, inv\\..*:index orders_pk,audit.log:nothing"})
	rules := parseReplicaIdentities(p)
	if err := p.Err(); err != nil {
		t.Fatal(err)
	}
	if len(rules) != 3 {
		t.Fatalf("rules %+v, want 3", rules)
	}
	for i, want := range []struct{ table, clause string }{{"PUBLIC.Orders", "FULL"}, {"inv.items", `USING INDEX "orders_pk"`}, {"audit.log", "NOTHING"}} {
		if !rules[i].tables.MatchString(want.table) || rules[i].clause() != want.clause {
			t.Errorf("rule %d (%q): matches %s %v, clause %s; want a match and %s", i, rules[i].text, want.table, rules[i].tables.MatchString(want.table), rules[i].clause(), want.clause)
		}
	}
	if rules[0].tables.MatchString("public.orders_archive") {
		t.Error("public.orders matches public.orders_archive; Debezium matches the whole name")
	}
	for _, bad := range []string{"public.orders", "public.orders:SOMETIMES", "(:FULL"} {
		p := props.NewParser(map[string]string{"replica.identity.autoset.values": bad})
		parseReplicaIdentities(p)
		if err := p.Err(); err == nil || !strings.Contains(err.Error(), "replica.identity.autoset.values") {
			t.Errorf("%q: got %v, want a refusal naming the key", bad, err)
		}
	}
}
