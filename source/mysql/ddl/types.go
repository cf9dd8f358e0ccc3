package ddl

import (
	"strconv"
	"strings"
)

// java.sql.Types codes, as Debezium writes them in jdbcType.
const (
	jdbcBit         = -7
	jdbcSmallint    = 5
	jdbcInteger     = 4
	jdbcBigint      = -5
	jdbcFloat       = 6
	jdbcReal        = 7
	jdbcDouble      = 8
	jdbcNumeric     = 2
	jdbcDecimal     = 3
	jdbcChar        = 1
	jdbcVarchar     = 12
	jdbcLongVarchar = -1
	jdbcDate        = 91
	jdbcTime        = 92
	jdbcTimestamp   = 93
	jdbcTimestampTZ = 2014
	jdbcBinary      = -2
	jdbcVarbinary   = -3
	jdbcBlob        = 2004
	jdbcClob        = 2005
	jdbcBoolean     = 16
	jdbcNChar       = -15
	jdbcNVarchar    = -9
	jdbcLongNVarch  = -16
	jdbcNClob       = 2011
	jdbcDatalink    = 70
	jdbcSQLXML      = 2009
	jdbcOther       = 1111
)

// typeKind is the grammar rule a type belongs to in Debezium's MariaDB grammar: it decides which of a
// type's parts (dimensions, character set, members) Debezium reads.
type typeKind int

const (
	kindDimension   typeKind = iota // numbers, temporals, binaries: (length[, scale]), SIGNED/UNSIGNED/ZEROFILL
	kindString                      // CHAR, VARCHAR, TEXT…: (length), CHARACTER SET, COLLATE
	kindNational                    // NATIONAL CHAR…: (length), no character set
	kindCollection                  // ENUM and SET: members and CHARACTER SET
	kindSimple                      // no dimension: DATE, BOOLEAN, blobs, spatial types, JSON, UUID
	kindLongVarchar                 // LONG VARCHAR: CHARACTER SET, COLLATE
)

// typeEntry is one of Debezium's data type registrations (MariaDbAntlrDdlParser.initializeDataTypeResolver).
type typeEntry struct {
	jdbc     int
	kind     typeKind
	suffixes []string // optional words appended to the type name when present, in this order
	// defaultLength and defaultScale apply when the DDL gives none; -1 for no default.
	defaultLength, defaultScale int
}

var (
	integerSuffixes = []string{"SIGNED", "UNSIGNED", "ZEROFILL"}
	doubleSuffixes  = []string{"PRECISION", "SIGNED", "UNSIGNED", "ZEROFILL"}
	binarySuffix    = []string{"BINARY"}
)

// dataTypes is keyed by the type's leading words as Debezium's tokens match them, upper case.
var dataTypes = map[string]typeEntry{
	"TINYINT":   {jdbcSmallint, kindDimension, integerSuffixes, -1, -1},
	"INT1":      {jdbcSmallint, kindDimension, integerSuffixes, -1, -1},
	"SMALLINT":  {jdbcSmallint, kindDimension, integerSuffixes, -1, -1},
	"INT2":      {jdbcSmallint, kindDimension, integerSuffixes, -1, -1},
	"MEDIUMINT": {jdbcInteger, kindDimension, integerSuffixes, -1, -1},
	"INT3":      {jdbcInteger, kindDimension, integerSuffixes, -1, -1},
	"MIDDLEINT": {jdbcInteger, kindDimension, integerSuffixes, -1, -1},
	"INT":       {jdbcInteger, kindDimension, integerSuffixes, -1, -1},
	"INTEGER":   {jdbcInteger, kindDimension, integerSuffixes, -1, -1},
	"INT4":      {jdbcInteger, kindDimension, integerSuffixes, -1, -1},
	"BIGINT":    {jdbcBigint, kindDimension, integerSuffixes, -1, -1},
	"INT8":      {jdbcBigint, kindDimension, integerSuffixes, -1, -1},
	"REAL":      {jdbcReal, kindDimension, integerSuffixes, -1, -1},
	"DOUBLE":    {jdbcDouble, kindDimension, doubleSuffixes, -1, -1},
	"FLOAT8":    {jdbcDouble, kindDimension, doubleSuffixes, -1, -1},
	"FLOAT":     {jdbcFloat, kindDimension, integerSuffixes, -1, -1},
	"FLOAT4":    {jdbcFloat, kindDimension, integerSuffixes, -1, -1},
	"DECIMAL":   {jdbcDecimal, kindDimension, integerSuffixes, 10, 0},
	"DEC":       {jdbcDecimal, kindDimension, integerSuffixes, 10, 0},
	"FIXED":     {jdbcDecimal, kindDimension, integerSuffixes, 10, 0},
	"NUMERIC":   {jdbcNumeric, kindDimension, integerSuffixes, 10, 0},
	"BIT":       {jdbcBit, kindDimension, nil, 1, -1},
	"VECTOR":    {jdbcOther, kindDimension, nil, 2048, -1},
	"TIME":      {jdbcTime, kindDimension, nil, -1, -1},
	"TIMESTAMP": {jdbcTimestampTZ, kindDimension, nil, -1, -1},
	"DATETIME":  {jdbcTimestamp, kindDimension, nil, -1, -1},
	"BINARY":    {jdbcBinary, kindDimension, nil, -1, -1},
	"VARBINARY": {jdbcVarbinary, kindDimension, nil, -1, -1},
	"BLOB":      {jdbcBlob, kindDimension, nil, -1, -1},
	"YEAR":      {jdbcInteger, kindDimension, nil, -1, -1},

	"DATE":       {jdbcDate, kindSimple, nil, -1, -1},
	"TINYBLOB":   {jdbcBlob, kindSimple, nil, -1, -1},
	"MEDIUMBLOB": {jdbcBlob, kindSimple, nil, -1, -1},
	"LONGBLOB":   {jdbcBlob, kindSimple, nil, -1, -1},
	"BOOL":       {jdbcBoolean, kindSimple, nil, -1, -1},
	"BOOLEAN":    {jdbcBoolean, kindSimple, nil, -1, -1},
	"SERIAL":     {jdbcBigint, kindSimple, nil, -1, -1},

	"CHAR":              {jdbcChar, kindString, binarySuffix, -1, -1},
	"CHAR VARYING":      {jdbcVarchar, kindString, nil, -1, -1},
	"VARCHAR":           {jdbcVarchar, kindString, binarySuffix, -1, -1},
	"TINYTEXT":          {jdbcVarchar, kindString, binarySuffix, -1, -1},
	"TEXT":              {jdbcVarchar, kindString, binarySuffix, -1, -1},
	"MEDIUMTEXT":        {jdbcVarchar, kindString, binarySuffix, -1, -1},
	"LONGTEXT":          {jdbcVarchar, kindString, binarySuffix, -1, -1},
	"LONG":              {jdbcVarchar, kindString, nil, -1, -1},
	"NCHAR":             {jdbcNChar, kindString, binarySuffix, -1, -1},
	"NCHAR VARYING":     {jdbcNVarchar, kindString, nil, -1, -1},
	"NVARCHAR":          {jdbcNVarchar, kindString, binarySuffix, -1, -1},
	"CHARACTER":         {jdbcChar, kindString, nil, -1, -1},
	"CHARACTER VARYING": {jdbcVarchar, kindString, nil, -1, -1},

	"NATIONAL VARCHAR":           {jdbcNVarchar, kindNational, binarySuffix, -1, -1},
	"NATIONAL CHARACTER":         {jdbcNChar, kindNational, binarySuffix, -1, -1},
	"NATIONAL CHAR":              {jdbcNChar, kindNational, binarySuffix, -1, -1},
	"NCHAR VARCHAR":              {jdbcNVarchar, kindNational, binarySuffix, -1, -1},
	"NATIONAL CHAR VARYING":      {jdbcNVarchar, kindNational, nil, -1, -1},
	"NATIONAL CHARACTER VARYING": {jdbcNVarchar, kindNational, nil, -1, -1},

	"ENUM": {jdbcChar, kindCollection, binarySuffix, -1, -1},
	"SET":  {jdbcChar, kindCollection, binarySuffix, -1, -1},

	"GEOMETRYCOLLECTION": {jdbcOther, kindSimple, nil, -1, -1},
	"GEOMCOLLECTION":     {jdbcOther, kindSimple, nil, -1, -1},
	"LINESTRING":         {jdbcOther, kindSimple, nil, -1, -1},
	"MULTILINESTRING":    {jdbcOther, kindSimple, nil, -1, -1},
	"MULTIPOINT":         {jdbcOther, kindSimple, nil, -1, -1},
	"MULTIPOLYGON":       {jdbcOther, kindSimple, nil, -1, -1},
	"POINT":              {jdbcOther, kindSimple, nil, -1, -1},
	"POLYGON":            {jdbcOther, kindSimple, nil, -1, -1},
	"JSON":               {jdbcOther, kindSimple, nil, -1, -1},
	"GEOMETRY":           {jdbcOther, kindSimple, nil, -1, -1},

	"LONG VARBINARY": {jdbcBlob, kindSimple, nil, -1, -1},
	"LONG VARCHAR":   {jdbcVarchar, kindLongVarchar, nil, -1, -1},
	"UUID":           {jdbcOther, kindSimple, nil, -1, -1},
	// Debezium's grammar has no INET4/INET6 (a table with one stops its connector); cdcd reads them like UUID.
	"INET4": {jdbcOther, kindSimple, nil, -1, -1},
	"INET6": {jdbcOther, kindSimple, nil, -1, -1},
}

// dataType is what Debezium's ColumnDefinitionParserListener takes from a column's type.
type dataType struct {
	name                string // typeName: the spelled type, upper case, with its suffix words
	jdbc                int
	length, scale       int
	hasLength, hasScale bool
	charset             string // from CHARACTER SET or a COLLATE clause; "" for none
	enumValues          []string
	isEnumOrSet, serial bool
}

// typeStartsAt reports whether a data type begins at toks[i], so that a column definition can be found by
// its name followed by its type.
func typeStartsAt(toks []token, i int) bool {
	_, _, ok := lookupType(toks, i)
	return ok
}

// lookupType matches the longest registered type name (three words at most) at toks[i].
func lookupType(toks []token, i int) (spelled []string, entry typeEntry, ok bool) {
	for n := 3; n >= 1; n-- {
		if i+n > len(toks) {
			continue
		}
		words := make([]string, 0, n)
		for _, t := range toks[i : i+n] {
			if t.kind != tokWord {
				break
			}
			words = append(words, t.text)
		}
		if len(words) < n {
			continue
		}
		if e, found := dataTypes[strings.ToUpper(strings.Join(words, " "))]; found {
			return words, e, true
		}
	}
	return nil, typeEntry{}, false
}

// readDataType reads the data type that starts at toks[i] and returns it with the index of the first token
// after it.
func readDataType(toks []token, i int) (dataType, int, error) {
	spelled, entry, ok := lookupType(toks, i)
	if !ok {
		return dataType{}, i, errUnknownType(toks, i)
	}
	i += len(spelled)
	var (
		dims      []string // the numbers of a (length[, scale]) group
		members   []string // ENUM/SET members as written
		present   = map[string]bool{}
		charset   string
		collation string
	)
	for i < len(toks) {
		t := toks[i]
		switch {
		case t.isPunct('('):
			end := matchingParen(toks, i)
			for _, in := range toks[i+1 : end] {
				switch in.kind {
				case tokNumber:
					dims = append(dims, in.text)
				case tokString:
					members = append(members, in.text)
				}
			}
			i = end + 1
		case isTypeSuffix(t):
			present[strings.ToUpper(t.text)] = true
			i++
		case t.is("CHARACTER") || t.is("CHAR") || t.is("CHARSET"):
			n, ok := charsetNameAt(toks, i)
			if !ok {
				return finishDataType(spelled, entry, dims, members, present, charset, collation), i, nil
			}
			charset = unquote(toks[n].name())
			i = n + 1
		case t.is("COLLATE") && i+1 < len(toks):
			collation = unquote(toks[i+1].name())
			i += 2
		default:
			return finishDataType(spelled, entry, dims, members, present, charset, collation), i, nil
		}
	}
	return finishDataType(spelled, entry, dims, members, present, charset, collation), i, nil
}

// isTypeSuffix accepts the words that may follow a type name inside the type.
func isTypeSuffix(t token) bool {
	for _, w := range []string{"SIGNED", "UNSIGNED", "ZEROFILL", "PRECISION", "BINARY"} {
		if t.is(w) {
			return true
		}
	}
	return false
}

func finishDataType(spelled []string, entry typeEntry, dims, members []string, present map[string]bool,
	charset, collation string) dataType {
	words := append([]string(nil), spelled...)
	for _, s := range entry.suffixes {
		if present[s] {
			words = append(words, s)
		}
	}
	dt := dataType{name: strings.ToUpper(strings.Join(words, " ")), jdbc: entry.jdbc}
	base := strings.ToUpper(strings.Join(spelled, " "))
	switch entry.kind {
	case kindDimension:
		if len(dims) >= 1 {
			dt.length, dt.hasLength = parseLength(dims[0]), true
		}
		if len(dims) >= 2 {
			if s, err := strconv.Atoi(dims[1]); err == nil {
				dt.scale, dt.hasScale = s, true
			}
		}
	case kindString, kindNational:
		if len(dims) >= 1 {
			dt.length, dt.hasLength = parseLength(dims[0]), true
		}
	case kindCollection:
		if base == "SET" {
			dt.length = max(0, 2*len(members)-1) // the members and the commas between them
		} else {
			dt.length = 1
		}
		dt.hasLength = true
	}
	switch entry.kind {
	case kindString, kindLongVarchar:
		dt.charset = charset
		if dt.charset == "" && collation != "" {
			dt.charset = charsetOfCollation(collation)
		}
	case kindCollection:
		dt.charset = charset
	}
	if dt.name == "ENUM" || dt.name == "SET" {
		dt.isEnumOrSet = true
		dt.enumValues = members
	}
	if base == "SERIAL" {
		dt.name, dt.serial = "BIGINT UNSIGNED", true
	}
	if !dt.hasLength && entry.defaultLength >= 0 {
		dt.length, dt.hasLength = entry.defaultLength, true
	}
	if !dt.hasScale && entry.defaultScale >= 0 {
		dt.scale, dt.hasScale = entry.defaultScale, true
	}
	if dt.jdbc == jdbcNChar || dt.jdbc == jdbcNVarchar {
		dt.charset = "utf8" // Debezium: national character columns always use utf8
		if dt.jdbc == jdbcNChar && !dt.hasLength {
			dt.length, dt.hasLength = 1, true
		}
	}
	return dt
}

// parseLength reads a declared length, capped at Java's Integer.MAX_VALUE as Debezium caps it.
func parseLength(s string) int {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n > 1<<31-1 {
		return 1<<31 - 1
	}
	return int(n)
}

// charsetOfCollation names a collation's character set: its name up to the first underscore
// (utf8mb4_unicode_ci → utf8mb4), as the server's collation table has it.
func charsetOfCollation(collation string) string {
	c := strings.ToLower(collation)
	if i := strings.IndexByte(c, '_'); i > 0 {
		return c[:i]
	}
	return c
}

// usesCharset is Debezium's Column.typeUsesCharset: the column inherits the table's character set.
func usesCharset(jdbc int) bool {
	switch jdbc {
	case jdbcChar, jdbcVarchar, jdbcLongVarchar, jdbcClob, jdbcNChar, jdbcNVarchar, jdbcLongNVarch, jdbcNClob,
		jdbcDatalink, jdbcSQLXML:
		return true
	}
	return false
}

// matchingParen returns the index of the ")" closing the "(" at toks[i], or the last index when unbalanced.
func matchingParen(toks []token, i int) int {
	depth := 0
	for j := i; j < len(toks); j++ {
		switch {
		case toks[j].isPunct('('):
			depth++
		case toks[j].isPunct(')'):
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return len(toks) - 1
}
