package types

import (
	"fmt"
	"strings"
	"sync"

	"github.com/cdcd/cdcd/source/mysql/tables"
)

// kind is how a column's values are converted: Debezium picks a converter first by type name (the
// binlog-specific types) and then by JDBC type, and kindOf follows the same order.
type kind int

const (
	kindBool   kind = iota + 1
	kindBit         // BIT(1): a boolean
	kindBits        // BIT(n>1): io.debezium.data.Bits
	kindInt8        // JDBC TINYINT
	kindInt16       // JDBC SMALLINT (MySQL's TINYINT and SMALLINT)
	kindInt32       // JDBC INTEGER (MEDIUMINT, INT)
	kindInt64       // JDBC BIGINT
	kindUint8       // TINYINT UNSIGNED: INT16
	kindUint16      // SMALLINT UNSIGNED: INT32
	kindUint24      // MEDIUMINT UNSIGNED: INT32
	kindUint32      // INT UNSIGNED: INT64
	kindUint64      // BIGINT UNSIGNED: INT64 or Decimal per bigint.unsigned.handling.mode
	kindFloat32
	kindFloat64
	kindDecimal
	kindString
	kindBinary
	kindJSON
	kindEnum
	kindSet
	kindYear
	kindDate
	kindTime
	kindDatetime  // DATETIME: JDBC TIMESTAMP
	kindTimestamp // TIMESTAMP: JDBC TIMESTAMP_WITH_TIMEZONE, io.debezium.time.ZonedTimestamp
	kindPoint
	kindGeometry
	// kindFloatVector is MySQL's VECTOR (9.0+): io.debezium.data.FloatVector, as Debezium 3.6's MySQL
	// connector maps it.
	kindFloatVector
	kindUUID
	// kindInet is MariaDB's INET4 and INET6 (10.10+), which Debezium's MariaDB grammar cannot parse: cdcd
	// maps them to their text, as the server prints them.
	kindInet
)

// typeNameIs is BinlogValueConverters.matches: the upper-case type name equals one of names or starts
// with one of them followed by "(".
func typeNameIs(upper string, names ...string) bool {
	for _, n := range names {
		if upper == n || strings.HasPrefix(upper, n+"(") {
			return true
		}
	}
	return false
}

// unsignedNames spells a type's unsigned forms as the DDL parser may write them.
func unsignedNames(bases ...string) []string {
	var out []string
	for _, b := range bases {
		out = append(out, b+" UNSIGNED", b+" UNSIGNED ZEROFILL")
	}
	return out
}

// The type names of the unsigned integers and of FLOAT, built once: kindOf runs for every value.
var (
	unsignedTinyint   = unsignedNames("TINYINT", "INT1")
	unsignedSmallint  = unsignedNames("SMALLINT", "INT2")
	unsignedMediumint = unsignedNames("MEDIUMINT", "INT3", "MIDDLEINT")
	unsignedInt       = unsignedNames("INT", "INTEGER", "INT4")
	unsignedBigint    = unsignedNames("BIGINT", "INT8")
	floatNames        = append(unsignedNames("FLOAT"), "FLOAT")
)

// kindKey is everything kindOf looks at.
type kindKey struct {
	flavor              Flavor
	typeName            string
	jdbcType, length    int
	hasLength, hasScale bool
}

type kindResult struct {
	kind kind
	err  error
}

// kinds caches kindOf: it runs for every value read and its type-name matching costs a microsecond,
// while a column model takes few distinct shapes.
var kinds sync.Map // kindKey → kindResult

func (m Modes) kindOf(c *tables.Column) (kind, error) {
	key := kindKey{m.Flavor, c.TypeName, c.JDBCType, c.Length, c.HasLength, c.HasScale}
	if r, ok := kinds.Load(key); ok {
		return r.(kindResult).kind, r.(kindResult).err
	}
	k, err := m.classify(c)
	kinds.Store(key, kindResult{k, err})
	return k, err
}

func (m Modes) classify(c *tables.Column) (kind, error) {
	t := strings.ToUpper(c.TypeName)
	switch {
	case m.Flavor == MariaDB && typeNameIs(t, "UUID"):
		return kindUUID, nil
	case m.Flavor == MariaDB && typeNameIs(t, "INET4", "INET6"):
		return kindInet, nil
	case typeNameIs(t, "JSON"):
		return kindJSON, nil
	case typeNameIs(t, "POINT"):
		return kindPoint, nil
	case typeNameIs(t, "GEOMETRY", "LINESTRING", "POLYGON", "MULTIPOINT", "MULTILINESTRING", "MULTIPOLYGON"),
		t == "GEOMETRYCOLLECTION", t == "GEOMCOLLECTION", strings.HasSuffix(t, ".GEOMCOLLECTION"):
		return kindGeometry, nil
	case typeNameIs(t, "YEAR"):
		return kindYear, nil
	case typeNameIs(t, "ENUM"):
		return kindEnum, nil
	case typeNameIs(t, "SET"):
		return kindSet, nil
	case typeNameIs(t, unsignedTinyint...):
		return kindUint8, nil
	case typeNameIs(t, unsignedSmallint...):
		return kindUint16, nil
	case typeNameIs(t, unsignedMediumint...):
		return kindUint24, nil
	case typeNameIs(t, unsignedInt...):
		return kindUint32, nil
	case typeNameIs(t, unsignedBigint...):
		return kindUint64, nil
	case typeNameIs(t, floatNames...) && !c.HasScale && (!c.HasLength || c.Length <= 24):
		return kindFloat32, nil
	case typeNameIs(t, "VECTOR") && m.Flavor == MySQL:
		return kindFloatVector, nil
	case typeNameIs(t, "VECTOR"):
		return 0, fmt.Errorf("%w: %s", ErrUnsupportedType, c.TypeName)
	}
	switch c.JDBCType {
	case tables.JDBCBit:
		if c.HasLength && c.Length > 1 {
			return kindBits, nil
		}
		return kindBit, nil
	case tables.JDBCBoolean:
		return kindBool, nil
	case tables.JDBCBlob, tables.JDBCBinary, tables.JDBCVarbinary, tables.JDBCLongVarbinary:
		return kindBinary, nil
	case tables.JDBCTinyint:
		return kindInt8, nil
	case tables.JDBCSmallint:
		return kindInt16, nil
	case tables.JDBCInteger:
		return kindInt32, nil
	case tables.JDBCBigint:
		return kindInt64, nil
	case tables.JDBCReal:
		return kindFloat32, nil
	case tables.JDBCFloat, tables.JDBCDouble:
		return kindFloat64, nil
	case tables.JDBCNumeric, tables.JDBCDecimal:
		return kindDecimal, nil
	case tables.JDBCChar, tables.JDBCVarchar, tables.JDBCLongVarchar, tables.JDBCNChar, tables.JDBCNVarchar, tables.JDBCLongNVarchar, tables.JDBCClob, tables.JDBCNClob:
		return kindString, nil
	case tables.JDBCDate:
		return kindDate, nil
	case tables.JDBCTime:
		return kindTime, nil
	case tables.JDBCTimestamp:
		return kindDatetime, nil
	case tables.JDBCTimestampWithTimezone:
		return kindTimestamp, nil
	}
	return 0, fmt.Errorf("%w: %s (JDBC type %d)", ErrUnsupportedType, c.TypeName, c.JDBCType)
}

// length is Column.length(): -1 when the column has none.
func length(c *tables.Column) int {
	if !c.HasLength {
		return -1
	}
	return c.Length
}

// enumOptions are the ENUM/SET members as Debezium lists them (extractEnumAndSetOptions): quotes
// removed, a comma inside a member written as "\,", and \' and ” read as a quote.
func enumOptions(c *tables.Column) []string {
	out := make([]string, len(c.EnumValues))
	for i, v := range c.EnumValues {
		v = withoutQuotes(v)
		v = strings.ReplaceAll(v, ",", `\,`)
		v = strings.ReplaceAll(v, `\'`, "'")
		out[i] = strings.ReplaceAll(v, "''", "'")
	}
	return out
}

func withoutQuotes(s string) string {
	if len(s) >= 2 {
		first, last := s[0], s[len(s)-1]
		if first == last && (first == '\'' || first == '"' || first == '`') {
			return s[1 : len(s)-1]
		}
	}
	return s
}
