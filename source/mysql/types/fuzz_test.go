package types

import (
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/cdcd/cdcd/source/mysql/tables"
)

// fuzzColumns has a column of every kind, nullable and not, with defaults where the kind takes one.
var fuzzColumns = []*tables.Column{
	col("TINYINT UNSIGNED", tables.JDBCSmallint), col("INT", tables.JDBCInteger, notNull), col("BIGINT UNSIGNED", tables.JDBCBigint),
	col("BIT", tables.JDBCBit, withLength(1)), col("BIT", tables.JDBCBit, withLength(12), notNull),
	col("FLOAT", tables.JDBCFloat), col("DOUBLE", tables.JDBCDouble, notNull),
	col("DECIMAL", tables.JDBCDecimal, withLength(6), func(c *tables.Column) { c.Scale, c.HasScale = 2, true }),
	col("VARCHAR", tables.JDBCVarchar, withCharset("latin1")), col("BINARY", tables.JDBCBinary, withLength(4)),
	col("JSON", tables.JDBCVarchar), col("ENUM", tables.JDBCChar, withEnum("'a'"), notNull), col("SET", tables.JDBCChar, withEnum("'a'", "'b'")),
	col("YEAR", tables.JDBCInteger), col("DATE", tables.JDBCDate, notNull), col("TIME", tables.JDBCTime, withLength(6)),
	col("DATETIME", tables.JDBCTimestamp, withLength(3), notNull), col("TIMESTAMP", tables.JDBCTimestampWithTimezone, notNull, withDefault("0")),
	col("POINT", 1111, notNull), col("GEOMETRY", 1111), col("UUID", 1111),
}

// FuzzConversionsNeverPanic feeds arbitrary text and bytes to every kind through both sources and as a
// default expression: a bad value must come back as an error, never a panic.
func FuzzConversionsNeverPanic(f *testing.F) {
	for _, seed := range []string{"", "0", "-", ".", "1.5e3", "0000-00-00 00:00:00", "-838:59:59.000000", "\x00\x01", `{"a":"\u00`} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, modes := range []Modes{DefaultModes, withModes(func(m *Modes) { m.Time = TimeConnect; m.Decimal = DecimalDouble; m.Flavor = MySQL })} {
			for _, c := range fuzzColumns {
				_, _ = modes.FromBinlog(c, s)
				_, _ = modes.FromBinlog(c, []byte(s))
				_, _ = modes.FromSnapshot(c, mysql.NewFieldValue(mysql.FieldValueTypeString, 0, []byte(s)))
				d := *c
				d.HasDefault, d.Default, d.DefaultSet = true, s, true
				_, _ = modes.Schema(&d)
			}
		}
	})
}
