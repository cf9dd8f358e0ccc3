package ddl

import (
	"github.com/cdcd/cdcd/source/mysql/tables"
	"strconv"
	"strings"
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
	"TINYINT":   {tables.JDBCSmallint, kindDimension, integerSuffixes, -1, -1},
	"INT1":      {tables.JDBCSmallint, kindDimension, integerSuffixes, -1, -1},
	"SMALLINT":  {tables.JDBCSmallint, kindDimension, integerSuffixes, -1, -1},
	"INT2":      {tables.JDBCSmallint, kindDimension, integerSuffixes, -1, -1},
	"MEDIUMINT": {tables.JDBCInteger, kindDimension, integerSuffixes, -1, -1},
	"INT3":      {tables.JDBCInteger, kindDimension, integerSuffixes, -1, -1},
	"MIDDLEINT": {tables.JDBCInteger, kindDimension, integerSuffixes, -1, -1},
	"INT":       {tables.JDBCInteger, kindDimension, integerSuffixes, -1, -1},
	"INTEGER":   {tables.JDBCInteger, kindDimension, integerSuffixes, -1, -1},
	"INT4":      {tables.JDBCInteger, kindDimension, integerSuffixes, -1, -1},
	"BIGINT":    {tables.JDBCBigint, kindDimension, integerSuffixes, -1, -1},
	"INT8":      {tables.JDBCBigint, kindDimension, integerSuffixes, -1, -1},
	"REAL":      {tables.JDBCReal, kindDimension, integerSuffixes, -1, -1},
	"DOUBLE":    {tables.JDBCDouble, kindDimension, doubleSuffixes, -1, -1},
	"FLOAT8":    {tables.JDBCDouble, kindDimension, doubleSuffixes, -1, -1},
	"FLOAT":     {tables.JDBCFloat, kindDimension, integerSuffixes, -1, -1},
	"FLOAT4":    {tables.JDBCFloat, kindDimension, integerSuffixes, -1, -1},
	"DECIMAL":   {tables.JDBCDecimal, kindDimension, integerSuffixes, 10, 0},
	"DEC":       {tables.JDBCDecimal, kindDimension, integerSuffixes, 10, 0},
	"FIXED":     {tables.JDBCDecimal, kindDimension, integerSuffixes, 10, 0},
	"NUMERIC":   {tables.JDBCNumeric, kindDimension, integerSuffixes, 10, 0},
	"BIT":       {tables.JDBCBit, kindDimension, nil, 1, -1},
	"VECTOR":    {tables.JDBCOther, kindDimension, nil, 2048, -1},
	"TIME":      {tables.JDBCTime, kindDimension, nil, -1, -1},
	"TIMESTAMP": {tables.JDBCTimestampWithTimezone, kindDimension, nil, -1, -1},
	"DATETIME":  {tables.JDBCTimestamp, kindDimension, nil, -1, -1},
	"BINARY":    {tables.JDBCBinary, kindDimension, nil, -1, -1},
	"VARBINARY": {tables.JDBCVarbinary, kindDimension, nil, -1, -1},
	"BLOB":      {tables.JDBCBlob, kindDimension, nil, -1, -1},
	"YEAR":      {tables.JDBCInteger, kindDimension, nil, -1, -1},

	"DATE":       {tables.JDBCDate, kindSimple, nil, -1, -1},
	"TINYBLOB":   {tables.JDBCBlob, kindSimple, nil, -1, -1},
	"MEDIUMBLOB": {tables.JDBCBlob, kindSimple, nil, -1, -1},
	"LONGBLOB":   {tables.JDBCBlob, kindSimple, nil, -1, -1},
	"BOOL":       {tables.JDBCBoolean, kindSimple, nil, -1, -1},
	"BOOLEAN":    {tables.JDBCBoolean, kindSimple, nil, -1, -1},
	"SERIAL":     {tables.JDBCBigint, kindSimple, nil, -1, -1},

	"CHAR":              {tables.JDBCChar, kindString, binarySuffix, -1, -1},
	"CHAR VARYING":      {tables.JDBCVarchar, kindString, nil, -1, -1},
	"VARCHAR":           {tables.JDBCVarchar, kindString, binarySuffix, -1, -1},
	"TINYTEXT":          {tables.JDBCVarchar, kindString, binarySuffix, -1, -1},
	"TEXT":              {tables.JDBCVarchar, kindString, binarySuffix, -1, -1},
	"MEDIUMTEXT":        {tables.JDBCVarchar, kindString, binarySuffix, -1, -1},
	"LONGTEXT":          {tables.JDBCVarchar, kindString, binarySuffix, -1, -1},
	"LONG":              {tables.JDBCVarchar, kindString, nil, -1, -1},
	"NCHAR":             {tables.JDBCNChar, kindString, binarySuffix, -1, -1},
	"NCHAR VARYING":     {tables.JDBCNVarchar, kindString, nil, -1, -1},
	"NVARCHAR":          {tables.JDBCNVarchar, kindString, binarySuffix, -1, -1},
	"CHARACTER":         {tables.JDBCChar, kindString, nil, -1, -1},
	"CHARACTER VARYING": {tables.JDBCVarchar, kindString, nil, -1, -1},

	"NATIONAL VARCHAR":           {tables.JDBCNVarchar, kindNational, binarySuffix, -1, -1},
	"NATIONAL CHARACTER":         {tables.JDBCNChar, kindNational, binarySuffix, -1, -1},
	"NATIONAL CHAR":              {tables.JDBCNChar, kindNational, binarySuffix, -1, -1},
	"NCHAR VARCHAR":              {tables.JDBCNVarchar, kindNational, binarySuffix, -1, -1},
	"NATIONAL CHAR VARYING":      {tables.JDBCNVarchar, kindNational, nil, -1, -1},
	"NATIONAL CHARACTER VARYING": {tables.JDBCNVarchar, kindNational, nil, -1, -1},

	"ENUM": {tables.JDBCChar, kindCollection, binarySuffix, -1, -1},
	"SET":  {tables.JDBCChar, kindCollection, binarySuffix, -1, -1},

	"GEOMETRYCOLLECTION": {tables.JDBCOther, kindSimple, nil, -1, -1},
	"GEOMCOLLECTION":     {tables.JDBCOther, kindSimple, nil, -1, -1},
	"LINESTRING":         {tables.JDBCOther, kindSimple, nil, -1, -1},
	"MULTILINESTRING":    {tables.JDBCOther, kindSimple, nil, -1, -1},
	"MULTIPOINT":         {tables.JDBCOther, kindSimple, nil, -1, -1},
	"MULTIPOLYGON":       {tables.JDBCOther, kindSimple, nil, -1, -1},
	"POINT":              {tables.JDBCOther, kindSimple, nil, -1, -1},
	"POLYGON":            {tables.JDBCOther, kindSimple, nil, -1, -1},
	"JSON":               {tables.JDBCOther, kindSimple, nil, -1, -1},
	"GEOMETRY":           {tables.JDBCOther, kindSimple, nil, -1, -1},

	"LONG VARBINARY": {tables.JDBCBlob, kindSimple, nil, -1, -1},
	"LONG VARCHAR":   {tables.JDBCVarchar, kindLongVarchar, nil, -1, -1},
	"UUID":           {tables.JDBCOther, kindSimple, nil, -1, -1},
	// Debezium's grammar has no INET4/INET6 (a table with one stops its connector); cdcd reads them like UUID.
	"INET4": {tables.JDBCOther, kindSimple, nil, -1, -1},
	"INET6": {tables.JDBCOther, kindSimple, nil, -1, -1},
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
	if dt.jdbc == tables.JDBCNChar || dt.jdbc == tables.JDBCNVarchar {
		dt.charset = "utf8" // Debezium: national character columns always use utf8
		if dt.jdbc == tables.JDBCNChar && !dt.hasLength {
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
	case tables.JDBCChar, tables.JDBCVarchar, tables.JDBCLongVarchar, tables.JDBCClob, tables.JDBCNChar, tables.JDBCNVarchar, tables.JDBCLongNVarch, tables.JDBCNClob,
		tables.JDBCDatalink, tables.JDBCSQLXML:
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
