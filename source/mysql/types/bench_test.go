package types

import (
	"github.com/cdcd/cdcd/source/mysql/tables"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"
)

func BenchmarkFromBinlogInt(b *testing.B) {
	c := col("INT", tables.JDBCInteger)
	for b.Loop() {
		if _, err := DefaultModes.FromBinlog(c, int32(42)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFromBinlogDatetime(b *testing.B) {
	c := col("DATETIME", tables.JDBCTimestamp, withLength(6))
	for b.Loop() {
		if _, err := DefaultModes.FromBinlog(c, "2024-02-29 12:34:56.789012"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFromSnapshotVarchar(b *testing.B) {
	c := col("VARCHAR", tables.JDBCVarchar, withCharset("utf8mb4"))
	v := mysql.NewFieldValue(mysql.FieldValueTypeString, 0, []byte("hello, world"))
	for b.Loop() {
		if _, err := DefaultModes.FromSnapshot(c, v); err != nil {
			b.Fatal(err)
		}
	}
}
