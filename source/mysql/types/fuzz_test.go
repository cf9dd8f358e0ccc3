package types

import (
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/cdcd/cdcd/source/mysql/tables"
)

// fuzzColumns has a column of every kind, nullable and not, with defaults where the kind takes one.
var fuzzColumns = []*tables.Column{
	col("TINYINT UNSIGNED", jdbcSmallint), col("INT", jdbcInteger, notNull), col("BIGINT UNSIGNED", jdbcBigint),
	col("BIT", jdbcBit, withLength(1)), col("BIT", jdbcBit, withLength(12), notNull),
	col("FLOAT", jdbcFloat), col("DOUBLE", jdbcDouble, notNull),
	col("DECIMAL", jdbcDecimal, withLength(6), func(c *tables.Column) { c.Scale, c.HasScale = 2, true }),
	col("VARCHAR", jdbcVarchar, withCharset("latin1")), col("BINARY", jdbcBinary, withLength(4)),
	col("JSON", jdbcVarchar), col("ENUM", jdbcChar, withEnum("'a'"), notNull), col("SET", jdbcChar, withEnum("'a'", "'b'")),
	col("YEAR", jdbcInteger), col("DATE", jdbcDate, notNull), col("TIME", jdbcTime, withLength(6)),
	col("DATETIME", jdbcTimestamp, withLength(3), notNull), col("TIMESTAMP", jdbcTimestampWithTimezone, notNull, withDefault("0")),
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
