package columns

import (
	"math"
	"strings"

	"github.com/cdcd/cdcd/source/mysql/tables"
	"github.com/cdcd/cdcd/source/postgres/catalog"
)

// FromMySQL describes a MySQL/MariaDB column as the DDL parser recorded it.
func FromMySQL(col *tables.Column) Column {
	c := Column{Name: col.Name, TypeName: col.TypeName, JDBCType: col.JDBCType, Length: -1, Scale: col.Scale, HasScale: col.HasScale}
	if col.HasLength {
		c.Length = col.Length
	}
	if col.HasComment {
		c.Comment = col.Comment
	}
	return c
}

// Builtin PostgreSQL type OIDs whose length, scale or JDBC type pgjdbc treats apart.
const (
	oidBool        = 16
	oidBytea       = 17
	oidChar        = 18
	oidName        = 19
	oidInt8        = 20
	oidInt2        = 21
	oidInt4        = 23
	oidText        = 25
	oidOID         = 26
	oidFloat4      = 700
	oidFloat8      = 701
	oidBPChar      = 1042
	oidVarchar     = 1043
	oidDate        = 1082
	oidTime        = 1083
	oidTimestamp   = 1114
	oidTimestampTZ = 1184
	oidInterval    = 1186
	oidTimeTZ      = 1266
	oidBit         = 1560
	oidVarbit      = 1562
	oidNumeric     = 1700
)

// unknownLength is what pgjdbc reports for a type without a length (its unknownLength default).
const unknownLength = math.MaxInt32

// FromPostgres describes a PostgreSQL column as Debezium's pgoutput decoder builds it from a relation
// message (PgOutputMessageDecoder, ColumnMetaData, PostgresType, TypeRegistry): the type's name, the JDBC
// type of the type under its domains, and length and scale from pgjdbc's TypeInfoCache for the column's
// type modifier, or the type's defaults when it has none. Debezium reads no comment there. col.TypeOID
// and col.TypeMod are the relation message's.
func FromPostgres(col catalog.Column) Column {
	c := Column{Name: col.Name, TypeName: col.TypeName, JDBCType: pgJDBCType(col), HasScale: true}
	ti := col.Type
	if ti == nil || ti.DeclaredOID != col.TypeOID {
		// A type the catalog did not resolve (a builtin after an ALTER the catalog has not seen yet).
		ti = &catalog.TypeInfo{DeclaredOID: col.TypeOID, OID: col.TypeOID, DomainMod: -1}
	}
	switch {
	case col.TypeMod != -1:
		oid := precisionOID(ti.DeclaredOID, ti)
		c.Length, c.Scale = pgPrecision(oid, col.TypeMod), pgScale(oid, col.TypeMod)
	case ti.DeclaredOID != ti.OID && ti.DomainMod != -1:
		// PostgresType.getDefaultLength of a domain with a modifier: the base type's size for it, when it
		// has one, else the domain's own (pgjdbc knows no domain: unknownLength).
		oid := precisionOID(ti.OID, ti)
		c.Length = pgSize(oid, ti.DomainMod)
		if c.Length == 0 {
			c.Length = unknownLength
		}
		c.Scale = pgScale(oid, ti.DomainMod)
	default:
		oid := precisionOID(ti.OID, ti)
		c.Length, c.Scale = pgSize(oid, -1), pgScale(oid, -1)
	}
	return c
}

// FromPostgresMetadata describes a PostgreSQL column as Debezium reads it from JDBC metadata, for the
// snapshot (PostgresConnection.readTableColumn over pgjdbc's getColumns): as FromPostgres, except that
// a numeric without precision and scale has length 0 and no scale, and an integer column whose default
// draws from a sequence is named serial, bigserial or smallserial.
func FromPostgresMetadata(col catalog.Column) Column {
	c := FromPostgres(col)
	if col.TypeMod == -1 && (col.Type == nil || col.Type.DeclaredOID == col.Type.OID) && resolvedOID(col) == oidNumeric {
		c.Length, c.Scale, c.HasScale = 0, 0, false
	}
	if serial, ok := serialNames[col.TypeName]; ok && col.HasDefault && strings.Contains(col.DefaultExpr, "nextval(") {
		c.TypeName = serial
	}
	return c
}

// serialNames are the names pgjdbc reports for integer columns with a nextval default.
var serialNames = map[string]string{"int4": "serial", "int8": "bigserial", "int2": "smallserial"}

// resolvedOID is the OID of the column's type under its domains.
func resolvedOID(col catalog.Column) uint32 {
	if col.Type != nil && col.Type.DeclaredOID == col.TypeOID {
		return col.Type.OID
	}
	return col.TypeOID
}

// precisionOID is the OID pgjdbc computes sizes for: an array's element type (convertArrayToBaseOid), a
// domain's own OID (which it does not know), else the type's.
func precisionOID(oid uint32, ti *catalog.TypeInfo) uint32 {
	if oid == ti.OID && ti.Elem != nil {
		return ti.Elem.OID
	}
	return oid
}

// pgJDBCType is the java.sql.Types code of the column's type under its domains, as far as masking cares:
// pgjdbc's character types (enums are VARCHAR), and OTHER (1111) for the rest.
func pgJDBCType(col catalog.Column) int {
	oid, kind := resolvedOID(col), byte('b')
	if col.Type != nil && col.Type.DeclaredOID == col.TypeOID {
		kind = col.Type.Kind
		if col.Type.Elem != nil {
			return 2003 // ARRAY
		}
	}
	switch {
	case oid == oidChar || oid == oidBPChar:
		return jdbcChar
	case oid == oidVarchar || oid == oidText || oid == oidName || kind == 'e':
		return jdbcVarchar
	}
	return 1111
}

// pgSize is PostgresType's default size: the precision, or the display size where that is 0.
func pgSize(oid uint32, mod int32) int {
	if p := pgPrecision(oid, mod); p != 0 {
		return p
	}
	return pgDisplaySize(oid, mod)
}

// pgPrecision is TypeInfoCache.getPrecision.
func pgPrecision(oid uint32, mod int32) int {
	switch oid {
	case oidInt2:
		return 5
	case oidOID, oidInt4:
		return 10
	case oidInt8:
		return 19
	case oidFloat4:
		return 8
	case oidFloat8:
		return 17
	case oidNumeric:
		if mod == -1 {
			return 0
		}
		return int(((mod - 4) >> 16) & 0xffff)
	case oidChar, oidBool:
		return 1
	case oidBPChar, oidVarchar:
		if mod == -1 {
			return unknownLength
		}
		return int(mod - 4)
	case oidDate, oidTime, oidTimeTZ, oidInterval, oidTimestamp, oidTimestampTZ:
		return pgDisplaySize(oid, mod)
	case oidBit:
		return int(mod)
	case oidVarbit:
		if mod == -1 {
			return unknownLength
		}
		return int(mod)
	}
	return unknownLength
}

// pgScale is TypeInfoCache.getScale.
func pgScale(oid uint32, mod int32) int {
	switch oid {
	case oidFloat4:
		return 8
	case oidFloat8:
		return 17
	case oidNumeric:
		if mod == -1 {
			return 0
		}
		return int((mod - 4) & 0xffff)
	case oidTime, oidTimeTZ, oidTimestamp, oidTimestampTZ:
		if mod == -1 {
			return 6
		}
		return int(mod)
	case oidInterval:
		if mod == -1 {
			return 6
		}
		return int(mod & 0xffff)
	}
	return 0
}

// pgDisplaySize is TypeInfoCache.getDisplaySize for the types whose precision can be 0 or is the display
// size.
func pgDisplaySize(oid uint32, mod int32) int {
	switch oid {
	case oidDate:
		return 13
	case oidTime, oidTimeTZ, oidTimestamp, oidTimestampTZ:
		seconds := int(mod) + 1
		switch mod {
		case -1:
			seconds = 7
		case 0:
			seconds = 0
		case 1:
			seconds = 3 // pgjdbc: time(1) prints two digits
		}
		switch oid {
		case oidTime:
			return 8 + seconds
		case oidTimeTZ:
			return 8 + seconds + 6
		case oidTimestamp:
			return 22 + seconds
		default:
			return 28 + seconds
		}
	case oidInterval:
		return 49
	case oidNumeric:
		if mod == -1 {
			return 131089
		}
		precision, scale := int(((mod-4)>>16)&0xffff), int((mod-4)&0xffff)
		if scale != 0 {
			return precision + 2
		}
		return precision + 1
	}
	return unknownLength
}
