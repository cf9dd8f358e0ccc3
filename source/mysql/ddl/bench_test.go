package ddl

import (
	"fmt"
	"testing"
)

// BenchmarkApplyCreateTable measures a snapshot's cost per table: the golden's 43-column all_types as
// SHOW CREATE TABLE prints it, into a catalog that already holds 1,000 tables.
func BenchmarkApplyCreateTable(b *testing.B) {
	var create string
	for _, rec := range readCapture(b, "default", "schema-history.jsonl") {
		r, err := DecodeHistoryRecord(rec.Value)
		if err != nil {
			b.Fatal(err)
		}
		if r.Change.ID.Table == "all_types" && r.Change.Type == Create {
			create = r.Change.DDL
		}
	}
	c := NewCatalog(MariaDB)
	for i := range 1000 {
		if _, err := c.Apply("other", fmt.Sprintf("CREATE TABLE t%d (id INT NOT NULL PRIMARY KEY, v VARCHAR(10))", i)); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := c.Apply("cdcd_golden", "DROP TABLE IF EXISTS all_types"); err != nil {
			b.Fatal(err)
		}
		if _, err := c.Apply("cdcd_golden", create); err != nil {
			b.Fatal(err)
		}
	}
}
