package ddl

import "strings"

// The TiDB parser does not know MariaDB's UUID, INET4 and INET6 types, the spatial types, nor PERSISTENT
// for stored generated columns. forTiDB rewrites them into syntax it reads; the column facts themselves
// are always read from the original tokens (readDataType), so the placeholder never reaches the model.
const placeholderType = "BLOB"

var tidbUnknownTypes = map[string]bool{
	"UUID": true, "INET4": true, "INET6": true,
	"POINT": true, "LINESTRING": true, "POLYGON": true, "MULTIPOINT": true, "MULTILINESTRING": true,
	"MULTIPOLYGON": true, "GEOMETRY": true, "GEOMETRYCOLLECTION": true, "GEOMCOLLECTION": true,
}

// notColumnNames are words that can precede a type-named word without it being a column's type
// (DEFAULT uuid, AS point…).
var notColumnNames = map[string]bool{
	"DEFAULT": true, "AS": true, "TO": true, "BY": true, "ON": true, "USING": true, "AND": true, "OR": true,
	"NOT": true, "IS": true, "IN": true, "SELECT": true, "TABLE": true, "INTO": true, "LIKE": true,
	"KEY": true, "INDEX": true, "COLUMN": true, "EXISTS": true, "FROM": true, "WHERE": true, "SET": true,
	"ADD": true, "MODIFY": true, "CHANGE": true, "DROP": true, "AFTER": true, "FIRST": true, "RENAME": true,
}

// edit is one replacement made by forTiDB, at offset in the original text.
type edit struct {
	offset, oldLen, newLen int
}

// rewritten is a statement as given to the TiDB parser, with the edits that map its offsets back.
type rewritten struct {
	text  string
	edits []edit
}

// tidbCharsets are the character sets the TiDB parser accepts; it refuses a statement naming another.
var tidbCharsets = map[string]bool{
	"UTF8": true, "UTF8MB3": true, "UTF8MB4": true, "ASCII": true, "LATIN1": true, "BINARY": true, "GBK": true,
	"GB18030": true,
}

// forTiDB returns s with MariaDB-only syntax replaced by syntax the TiDB parser accepts: unknown types, a
// character set it does not know (the facts are read from the original tokens), PERSISTENT, SPATIAL keys,
// INVISIBLE columns, system versioning, Aria's ROW_FORMAT=PAGE, CREATE OR REPLACE TABLE, and a parenthesised
// DEFAULT expression it cannot read (Debezium records any such default as NULL anyway).
func forTiDB(s string) rewritten {
	toks := lex(s)
	var b strings.Builder
	var edits []edit
	last := 0
	replace := func(from, to int, replacement string) {
		b.WriteString(s[last:toks[from].start])
		b.WriteString(replacement)
		edits = append(edits, edit{offset: toks[from].start, oldLen: toks[to].end - toks[from].start, newLen: len(replacement)})
		last = toks[to].end
	}
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch {
		case t.kind == tokWord && tidbUnknownTypes[strings.ToUpper(t.text)] && i > 0 && isColumnName(toks[i-1]) &&
			(i+1 == len(toks) || (!toks[i+1].isPunct('(') && !typeStartsAt(toks, i+1))):
			replace(i, i, placeholderType)
		case t.is("PERSISTENT") && i > 0 && toks[i-1].isPunct(')'):
			replace(i, i, "STORED")
		case t.is("SPATIAL") && i+1 < len(toks) && (toks[i+1].is("KEY") || toks[i+1].is("INDEX")):
			replace(i, i, "")
		case t.is("INVISIBLE") && i > 0 && !toks[i-1].isPunct(',') && !toks[i-1].isPunct('('):
			replace(i, i, "")
		case (t.is("WITH") || t.is("WITHOUT")) && i+2 < len(toks) && toks[i+1].is("SYSTEM") && toks[i+2].is("VERSIONING"):
			replace(i, i+2, "")
			i += 2
		case t.is("ROW_FORMAT"):
			n := i + 1
			if n < len(toks) && toks[n].isPunct('=') {
				n++
			}
			if n < len(toks) && toks[n].is("PAGE") {
				replace(n, n, "DEFAULT")
				i = n
			}
		case t.is("OR") && i > 0 && toks[i-1].is("CREATE") && i+1 < len(toks) && toks[i+1].is("REPLACE") &&
			i+2 < len(toks) && (toks[i+2].is("TABLE") || toks[i+2].is("TEMPORARY")):
			replace(i, i+1, "")
			i++
		case t.is("DEFAULT") && i+1 < len(toks) && toks[i+1].isPunct('('):
			end := matchingParen(toks, i+1)
			replace(i+1, end, "NULL")
			i = end
		default:
			if n, ok := charsetNameAt(toks, i); ok && !tidbCharsets[strings.ToUpper(toks[n].name())] {
				replace(n, n, "utf8mb4")
				i = n
			}
		}
	}
	if edits == nil {
		return rewritten{text: s}
	}
	b.WriteString(s[last:])
	return rewritten{text: b.String(), edits: edits}
}

// charsetNameAt returns the index of the character set name when toks[i] starts CHARSET, CHARACTER SET or
// CHAR SET (then an optional "=").
func charsetNameAt(toks []token, i int) (int, bool) {
	n := i
	switch {
	case toks[i].is("CHARSET"):
		n++
	case (toks[i].is("CHARACTER") || toks[i].is("CHAR")) && i+1 < len(toks) && toks[i+1].is("SET"):
		n += 2
	default:
		return 0, false
	}
	if n < len(toks) && toks[n].isPunct('=') {
		n++
	}
	if n >= len(toks) || toks[n].is("DEFAULT") || !(toks[n].isIdent() || toks[n].kind == tokString) {
		return 0, false
	}
	return n, true
}

func isColumnName(t token) bool {
	return t.kind == tokQuoted || (t.kind == tokWord && !notColumnNames[strings.ToUpper(t.text)])
}

// original maps an offset in the rewritten text back to the original text. The offsets mapped are
// statement boundaries, never inside a replacement; a boundary right where text was removed maps after it,
// so a statement keeps its removed tail (… WITH SYSTEM VERSIONING).
func (r rewritten) original(offset int) int {
	shift := 0
	for _, e := range r.edits {
		if e.offset+shift > offset {
			break
		}
		shift += e.newLen - e.oldLen
	}
	return offset - shift
}
