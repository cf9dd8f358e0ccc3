package ddl

import (
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/cdcd/cdcd/source/mysql/tables"
)

// columnDef is one column definition of a statement: TiDB's reading of it and where its type starts among
// the statement's tokens.
type columnDef struct {
	def       *ast.ColumnDef
	typeStart int
}

// columnFinder locates column definitions in a statement's tokens, in statement order.
type columnFinder struct {
	toks []token
	next int
}

// find returns the index of the type of the next definition of column name: the first place after the
// previous definition where the name is followed by a data type.
func (f *columnFinder) find(name string) (int, error) {
	for i := f.next; i+1 < len(f.toks); i++ {
		if f.toks[i].isIdent() && strings.EqualFold(f.toks[i].name(), name) && typeStartsAt(f.toks, i+1) {
			f.next = i + 2
			return i + 1, nil
		}
	}
	return 0, fmt.Errorf("%w: cannot find the definition of column %q", ErrUnparseable, name)
}

func (f *columnFinder) def(d *ast.ColumnDef) (columnDef, error) {
	at, err := f.find(d.Name.Name.O)
	if err != nil {
		return columnDef{}, err
	}
	return columnDef{def: d, typeStart: at}, nil
}

// columnConstraints are what a column definition says about the table's key.
type columnConstraints struct {
	primaryKey, unique bool
}

// addGroup carries Debezium's MariaDB handling of ALTER TABLE … ADD COLUMN (a …, b …): its listener moves to the
// next column's editor before applying a definition's nullability, so each column gets the previous one's,
// and the last definition's own nullability comes after the columns were created and is lost (unless it
// preceded a DEFAULT clause, which applies it early).
type addGroup struct {
	inGroup   bool
	inherited *bool // the previous definition's nullability (NOT NULL → false, else true); nil for the first
	last      bool
}

// buildColumn is Debezium's ColumnDefinitionParserListener: base is the column being edited (a CHANGE
// keeps the old column's other facts) or a fresh column named by the definition. It also returns the
// definition's nullability (NOT NULL → false, else true) for the next column of an addGroup.
func buildColumn(base tables.Column, toks []token, cd columnDef, flavor Flavor, group addGroup) (tables.Column, columnConstraints, bool, error) {
	dt, afterType, err := readDataType(toks, cd.typeStart)
	if err != nil {
		return tables.Column{}, columnConstraints{}, false, err
	}
	c := base
	c.TypeName, c.TypeExpression, c.JDBCType = dt.name, dt.name, dt.jdbc
	c.Length, c.HasLength = dt.length, dt.hasLength
	c.Scale, c.HasScale = dt.scale, dt.hasScale
	c.Charset = dt.charset
	if dt.isEnumOrSet {
		c.EnumValues = dt.enumValues
	}
	var (
		cons columnConstraints
		own  *bool // the definition's explicit nullability
	)
	setOwn := func(v bool) { own = &v }
	for _, o := range cd.def.Options {
		switch o.Tp {
		case ast.ColumnOptionNotNull:
			setOwn(false)
		case ast.ColumnOptionNull:
			setOwn(true)
		case ast.ColumnOptionPrimaryKey:
			setOwn(false)
			cons.primaryKey = true
		case ast.ColumnOptionUniqKey:
			cons.unique = true
		case ast.ColumnOptionAutoIncrement:
			c.AutoIncremented, c.Generated = true, true
		}
	}
	if dt.serial {
		if own == nil {
			setOwn(false)
		}
		cons.unique = true
		c.AutoIncremented, c.Generated = true, true
	}
	end := definitionEnd(toks, cd.typeStart)
	if onUpdateConstraint(toks, afterType, end, flavor) {
		c.AutoIncremented, c.Generated = true, true
	}
	if group.inGroup {
		// a fresh editor is nullable without a default; an inherited nullability is set like NULL is
		c.Optional = group.inherited == nil || *group.inherited
		if group.inherited != nil && c.Optional {
			c.HasDefault = true
		}
	}
	if d, at, ok := readDefault(toks, afterType, end, flavor); ok {
		c.HasDefault, c.Default, c.DefaultSet = true, d.expression, d.hasExpression
		if group.inGroup && own != nil && nullabilityBefore(toks, afterType, at) {
			c.Optional = *own
		}
	}
	switch {
	case !group.inGroup:
		c.Optional = own == nil || *own
	case !group.last && own != nil:
		c.Optional = *own
	}
	if c.Optional && !c.HasDefault {
		// Debezium's ColumnEditor gives a nullable column an implicit NULL default whenever it is copied
		c.HasDefault = true
	}
	return c, cons, own == nil || *own, nil
}

// onUpdateConstraint reports whether toks[from:to] has an ON UPDATE clause of its own. Debezium's grammars
// read one as an auto-increment constraint; MariaDB's not when it follows DEFAULT CURRENT_TIMESTAMP (its
// default value rule takes "DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP" as a whole).
func onUpdateConstraint(toks []token, from, to int, flavor Flavor) bool {
	depth := 0
	for i := from; i+1 < to; i++ {
		switch t := toks[i]; {
		case t.isPunct('('):
			depth++
		case t.isPunct(')'):
			depth--
		case depth == 0 && t.is("ON") && toks[i+1].is("UPDATE"):
			return flavor == MySQL || !followsDefaultTimestamp(toks, from, i)
		}
	}
	return false
}

// followsDefaultTimestamp reports whether toks[:at] ends with DEFAULT CURRENT_TIMESTAMP[(n)] (or NOW(),
// LOCALTIME, LOCALTIMESTAMP).
func followsDefaultTimestamp(toks []token, from, at int) bool {
	i := at - 1
	if i >= from && toks[i].isPunct(')') {
		for i >= from && !toks[i].isPunct('(') {
			i--
		}
		i--
	}
	if i-1 < from {
		return false
	}
	t := toks[i]
	return toks[i-1].is("DEFAULT") &&
		(t.is("CURRENT_TIMESTAMP") || t.is("NOW") || t.is("LOCALTIME") || t.is("LOCALTIMESTAMP"))
}

// nullabilityBefore reports whether a NULL, NOT NULL or PRIMARY KEY constraint comes before toks[at].
func nullabilityBefore(toks []token, from, at int) bool {
	depth := 0
	for i := from; i < at; i++ {
		switch t := toks[i]; {
		case t.isPunct('('):
			depth++
		case t.isPunct(')'):
			depth--
		case depth == 0 && (t.is("NULL") || t.is("PRIMARY") || t.is("SERIAL")):
			return true
		}
	}
	return false
}

// definitionEnd returns the index of the "," or ")" that ends the column definition starting at i.
func definitionEnd(toks []token, i int) int {
	depth := 0
	for ; i < len(toks); i++ {
		switch {
		case toks[i].isPunct('('):
			depth++
		case toks[i].isPunct(')'):
			if depth == 0 {
				return i
			}
			depth--
		case toks[i].isPunct(',') && depth == 0, toks[i].isPunct(';') && depth == 0:
			return i
		}
	}
	return i
}

// defaultValue is what Debezium's DefaultValueParserListener records for a DEFAULT clause.
type defaultValue struct {
	expression    string
	hasExpression bool
}

// readDefault finds the DEFAULT clause in toks[from:to] and returns Debezium's reading of it and the index of
// its DEFAULT; ok is false when there is none or when it records nothing (DEFAULT NULL, a hexadecimal
// literal).
func readDefault(toks []token, from, to int, flavor Flavor) (defaultValue, int, bool) {
	depth := 0
	for i := from; i < to; i++ {
		t := toks[i]
		switch {
		case t.isPunct('('):
			depth++
		case t.isPunct(')'):
			depth--
		case depth == 0 && t.is("DEFAULT") && i+1 < to && !toks[i+1].is("VALUE"):
			d, ok := defaultAt(toks[i+1:to], flavor)
			return d, i, ok
		}
	}
	return defaultValue{}, 0, false
}

func defaultAt(toks []token, flavor Flavor) (defaultValue, bool) {
	first := toks[0]
	switch {
	case first.is("NULL"):
		return defaultValue{}, false
	case first.kind == tokHex && flavor == MySQL:
		// MySQL's parser strips two leading and one trailing character: x'ff' → ff
		return defaultValue{expression: first.text[2 : len(first.text)-1], hasExpression: true}, true
	case first.kind == tokHex:
		return defaultValue{}, false
	case first.kind == tokBits:
		return defaultValue{expression: first.text[2 : len(first.text)-1], hasExpression: true}, true
	case first.is("TRUE"), first.is("FALSE"):
		return defaultValue{expression: first.text, hasExpression: true}, true
	case first.is("CURRENT_TIMESTAMP"), first.is("NOW"),
		flavor == MySQL && (first.is("LOCALTIME") || first.is("LOCALTIMESTAMP")):
		// Debezium stands in the epoch for the time the row is written.
		return defaultValue{expression: "1970-01-01 00:00:00", hasExpression: true}, true
	case first.is("LOCALTIME"), first.is("LOCALTIMESTAMP"):
		text := first.text
		if len(toks) > 1 && toks[1].isPunct('(') {
			for _, t := range toks[1 : matchingParen(toks, 1)+1] {
				text += t.text
			}
		}
		return defaultValue{expression: text, hasExpression: true}, true
	}
	sign := ""
	if first.isPunct('-') || first.isPunct('+') || first.isPunct('~') || first.isPunct('!') {
		sign = first.text
		if len(toks) < 2 {
			return defaultValue{hasExpression: false}, true
		}
		first = toks[1]
	}
	switch {
	case first.kind == tokString:
		return defaultValue{expression: sign + unquote(first.text), hasExpression: true}, true
	case first.kind == tokWord && strings.HasPrefix(first.text, "_") && len(toks) > 1 && toks[1].kind == tokString:
		// a string with a character set introducer: MariaDB's parser records it as written, MySQL's its text
		if flavor == MySQL {
			return defaultValue{expression: sign + unquote(toks[1].text), hasExpression: true}, true
		}
		return defaultValue{expression: sign + first.text + toks[1].text, hasExpression: true}, true
	case first.kind == tokNumber:
		return defaultValue{expression: sign + first.text, hasExpression: true}, true
	}
	// An expression: the default is computed, Debezium records it as NULL.
	return defaultValue{}, true
}
