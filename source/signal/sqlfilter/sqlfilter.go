// Package sqlfilter checks the filter of an execute-snapshot signal's additional-conditions and renders it
// for the database. A signal reaches the connector from channels its database user does not guard (cdcd's
// REST endpoint, a file, a Kafka topic), so the filter is never pasted after WHERE as written: it is parsed,
// refused unless it is a condition over the table's columns, and the SQL that runs is printed from the
// parse tree, every column quoted as the dialect quotes it, every operation parenthesised. What runs is
// what was checked.
//
// The grammar, case-insensitive keywords:
//
//	condition  = or
//	or         = and { OR and }
//	and        = not { AND not }
//	not        = NOT not | predicate
//	predicate  = value [ compare value | IS [NOT] (NULL | TRUE | FALSE)
//	                   | [NOT] IN "(" literal { "," literal } ")" | [NOT] BETWEEN value AND value
//	                   | [NOT] LIKE value ]
//	compare    = "=" | "<>" | "!=" | "<" | "<=" | ">" | ">="
//	value      = term { ("+" | "-") term }
//	term       = factor { ("*" | "/" | "%") factor }
//	factor     = ("-" | "+") factor | literal | column | function "(" value { "," value } ")" | "(" or ")"
//	literal    = number | 'string' | TRUE | FALSE | NULL
//	function   = LOWER | UPPER | LENGTH | COALESCE | ABS
//
// A column is a bare name or a quoted one (PostgreSQL "name", MySQL and MariaDB `name`; a bare name is
// folded to lower case on PostgreSQL (its ASCII letters, as the server folds them), matched ignoring case on
// MySQL) and must be one of the table's.
// Everything else is refused, each with the construct named: other functions, subqueries, qualified
// names, `;`, comments, dollar quotes, backslashes in strings (the dialects read them differently).
package sqlfilter

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Dialect is the SQL a filter is read and printed in.
type Dialect int

const (
	PostgreSQL Dialect = iota + 1
	MySQL              // MySQL and MariaDB
)

// Functions are the functions a filter may call: pure ones over a row's values, in both dialects.
var Functions = []string{"lower", "upper", "length", "coalesce", "abs"}

// MaxLength bounds a filter's text and MaxDepth the parser's recursion (about six levels per pair of
// parentheses), so that no filter costs more than a little memory and stack to check.
const (
	MaxLength = 8192
	MaxDepth  = 256
)

// Filter is a checked filter, ready to be printed for a table's columns.
type Filter struct {
	dialect Dialect
	root    *node
}

// Parse reads filter in dialect d and refuses it unless it is a condition the grammar above allows. The
// columns it names are checked by SQL, against a table's.
func Parse(filter string, d Dialect) (*Filter, error) {
	if len(filter) > MaxLength {
		return nil, fmt.Errorf("filter is %d bytes; at most %d", len(filter), MaxLength)
	}
	if !utf8.ValidString(filter) {
		return nil, errors.New("filter is not valid UTF-8")
	}
	toks, err := tokenize(filter, d)
	if err != nil {
		return nil, fmt.Errorf("filter %q: %w", filter, err)
	}
	p := &parser{toks: toks}
	root, err := p.or(0)
	if err == nil && p.peek().kind != tokEnd {
		err = p.unexpected("after the condition")
	}
	if err == nil && !root.boolean() {
		err = errors.New("it is a value, not a condition; compare it (e.g. col = 1)")
	}
	if err != nil {
		return nil, fmt.Errorf("filter %q: %w; %s%s", filter, err, grammarHint, strings.Join(Functions, ", "))
	}
	return &Filter{dialect: d, root: root}, nil
}

// grammarHint ends every refusal of a filter's form.
const grammarHint = "a filter is a condition over the table's columns: literals, comparisons, AND, OR, NOT, IS [NOT] NULL, IN (literals), BETWEEN, LIKE, + - * / %, parentheses and the functions "

// SQL prints the filter for a table whose columns are columns, as the catalog names them; a column the
// filter names that the table does not have is refused.
func (f *Filter) SQL(columns []string) (string, error) {
	var b strings.Builder
	if err := f.print(&b, f.root, columns); err != nil {
		return "", err
	}
	return b.String(), nil
}

// Render is Parse, then SQL.
func Render(filter string, d Dialect, columns []string) (string, error) {
	f, err := Parse(filter, d)
	if err != nil {
		return "", err
	}
	sql, err := f.SQL(columns)
	if err != nil {
		return "", fmt.Errorf("filter %q: %w", filter, err)
	}
	return sql, nil
}

// column is the table's column a filter's name denotes.
func (f *Filter) column(n *node, columns []string) (string, error) {
	name := n.text
	if f.dialect == PostgreSQL && !n.quoted {
		// PostgreSQL folds a bare name's ASCII letters only (in UTF-8 databases).
		name = strings.Map(func(r rune) rune {
			if r >= 'A' && r <= 'Z' {
				return r + 'a' - 'A'
			}
			return r
		}, name)
	}
	i := slices.IndexFunc(columns, func(c string) bool {
		if f.dialect == MySQL {
			return strings.EqualFold(c, name)
		}
		return c == name
	})
	if i < 0 {
		return "", fmt.Errorf("%q is not a column of the table", n.text)
	}
	return columns[i], nil
}

func (f *Filter) print(b *strings.Builder, n *node, columns []string) error {
	a := n.args
	switch n.kind {
	case nodeColumn:
		col, err := f.column(n, columns)
		if err != nil {
			return err
		}
		b.WriteString(f.quoteIdent(col))
	case nodeNumber, nodeKeyword:
		b.WriteString(n.text)
	case nodeString:
		b.WriteString(f.quoteString(n.text))
	case nodeUnary:
		return f.printAll(b, columns, "(", n.text, " ", a[0], ")")
	case nodeBinary:
		return f.printAll(b, columns, "(", a[0], " "+n.text+" ", a[1], ")")
	case nodeIs:
		return f.printAll(b, columns, "(", a[0], " "+n.text+")")
	case nodeBetween:
		return f.printAll(b, columns, "(", a[0], " "+n.text+" ", a[1], " AND ", a[2], ")")
	case nodeIn:
		return f.printAll(b, columns, "(", a[0], " "+n.text+" ", list(a[1:]), ")")
	case nodeCall:
		return f.printAll(b, columns, n.text, list(a))
	}
	return nil
}

// list is a parenthesised, comma-separated list of nodes (a call's arguments, IN's literals) as printAll
// takes it.
func list(items []*node) []any {
	out := []any{"("}
	for i, item := range items {
		if i > 0 {
			out = append(out, ", ")
		}
		out = append(out, item)
	}
	return append(out, ")")
}

// printAll prints pieces in order: strings as they are, nodes printed, and lists of pieces in turn.
func (f *Filter) printAll(b *strings.Builder, columns []string, pieces ...any) error {
	for _, piece := range pieces {
		switch piece := piece.(type) {
		case string:
			b.WriteString(piece)
		case *node:
			if err := f.print(b, piece, columns); err != nil {
				return err
			}
		case []any:
			if err := f.printAll(b, columns, piece...); err != nil {
				return err
			}
		}
	}
	return nil
}

func (f *Filter) quoteIdent(name string) string {
	q := `"`
	if f.dialect == MySQL {
		q = "`"
	}
	return q + strings.ReplaceAll(name, q, q+q) + q
}

// quoteString prints a string literal (which holds no backslash: the tokenizer refuses them) with its
// quotes doubled, which both dialects read alike.
func (f *Filter) quoteString(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

type nodeKind byte

const (
	nodeColumn  nodeKind = iota + 1
	nodeNumber           // text: the number as written (digits, '.', an exponent; a sign in an IN list)
	nodeString           // text: the value, unquoted
	nodeKeyword          // TRUE, FALSE, NULL
	nodeUnary            // text: NOT, - or +
	nodeBinary           // text: the operator; args: left, right
	nodeIs               // text: IS [NOT] NULL|TRUE|FALSE; args: the value
	nodeBetween          // text: [NOT] BETWEEN; args: value, low, high
	nodeIn               // text: [NOT] IN; args: value, then the list
	nodeCall             // text: the function, lower case; args: its arguments
)

type node struct {
	kind   nodeKind
	text   string
	quoted bool // a column named with quotes
	args   []*node
}

// boolean reports whether n can stand as a condition: a predicate, a logical operation, a boolean literal,
// or a column (a boolean one; the database checks its type).
func (n *node) boolean() bool {
	switch n.kind {
	case nodeColumn, nodeIs, nodeBetween, nodeIn:
		return true
	case nodeKeyword:
		return n.text != "NULL"
	case nodeUnary:
		return n.text == "NOT"
	case nodeBinary:
		return n.text != "+" && n.text != "-" && n.text != "*" && n.text != "/" && n.text != "%"
	}
	return false
}

type tokKind byte

const (
	tokEnd    tokKind = iota
	tokWord           // a bare name or keyword
	tokQuoted         // a quoted name
	tokNumber
	tokString
	tokOp // an operator or punctuation
)

type token struct {
	kind tokKind
	text string
	pos  int
}

// tokenize splits a filter into tokens, refusing at once what no filter holds.
func tokenize(s string, d Dialect) ([]token, error) {
	var toks []token
	for i := 0; i < len(s); {
		c := s[i]
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case strings.HasPrefix(s[i:], "--"), strings.HasPrefix(s[i:], "/*"), c == '#' && d == MySQL:
			return nil, fmt.Errorf("a comment at offset %d is not allowed", i)
		case c == ';':
			return nil, fmt.Errorf("';' at offset %d is not allowed: a filter is one condition, not statements", i)
		case c == '$':
			return nil, fmt.Errorf("'$' at offset %d is not allowed (no dollar quotes or parameters)", i)
		case c == '\'' || c == '"' && d == MySQL:
			text, end, err := quoted(s, i, c)
			if err != nil {
				return nil, err
			}
			if strings.ContainsAny(text, "\\\x00") {
				return nil, fmt.Errorf("the string at offset %d holds a backslash or NUL, which PostgreSQL and MySQL read differently; write the value without it", i)
			}
			toks = append(toks, token{tokString, text, i})
			i = end
		case c == '"' || c == '`' && d == MySQL:
			text, end, err := quoted(s, i, c)
			if err != nil {
				return nil, err
			}
			if text == "" || strings.ContainsRune(text, 0) {
				return nil, fmt.Errorf("the quoted name at offset %d is empty or holds NUL", i)
			}
			toks = append(toks, token{tokQuoted, text, i})
			i = end
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9':
			end := number(s, i)
			if end < len(s) && isNameRune(rune(s[end])) {
				return nil, fmt.Errorf("the number at offset %d runs into a name", i)
			}
			toks = append(toks, token{tokNumber, s[i:end], i})
			i = end
		case r == '_' || unicode.IsLetter(r):
			end := i + size
			for end < len(s) {
				r, n := utf8.DecodeRuneInString(s[end:])
				if !isNameRune(r) {
					break
				}
				end += n
			}
			toks = append(toks, token{tokWord, s[i:end], i})
			i = end
		default:
			op := ""
			for _, o := range []string{"<>", "!=", "<=", ">=", "=", "<", ">", "+", "-", "*", "/", "%", "(", ")", ",", "."} {
				if strings.HasPrefix(s[i:], o) {
					op = o
					break
				}
			}
			if op == "" {
				return nil, fmt.Errorf("%q at offset %d is not allowed", r, i)
			}
			toks = append(toks, token{tokOp, op, i})
			i += len(op)
		}
	}
	return append(toks, token{tokEnd, "", len(s)}), nil
}

func isNameRune(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// quoted reads the quoted text starting at s[i] (the quote q), a doubled quote standing for one; it
// returns the text and the offset after the closing quote.
func quoted(s string, i int, q byte) (string, int, error) {
	var b strings.Builder
	for j := i + 1; j < len(s); j++ {
		if s[j] != q {
			b.WriteByte(s[j])
			continue
		}
		if j+1 < len(s) && s[j+1] == q {
			b.WriteByte(q)
			j++
			continue
		}
		return b.String(), j + 1, nil
	}
	return "", 0, fmt.Errorf("the quote %c at offset %d is not closed", q, i)
}

// number is the end of the number starting at s[i]: digits, a fraction, an exponent.
func number(s string, i int) int {
	digits := func(j int) int {
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		return j
	}
	i = digits(i)
	if i < len(s) && s[i] == '.' {
		i = digits(i + 1)
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if k := digits(j); k > j {
			i = k
		}
	}
	return i
}

type parser struct {
	toks []token
	at   int
}

func (p *parser) peek() token { return p.toks[p.at] }

func (p *parser) next() token {
	t := p.toks[p.at]
	if t.kind != tokEnd {
		p.at++
	}
	return t
}

// keyword reports whether the next token is the bare word w, taking it if so.
func (p *parser) keyword(w string) bool {
	if t := p.peek(); t.kind == tokWord && strings.EqualFold(t.text, w) {
		p.at++
		return true
	}
	return false
}

// op reports whether the next token is the operator o, taking it if so.
func (p *parser) op(o string) bool {
	if t := p.peek(); t.kind == tokOp && t.text == o {
		p.at++
		return true
	}
	return false
}

func (p *parser) unexpected(where string) error {
	t := p.peek()
	if t.kind == tokEnd {
		return fmt.Errorf("the filter ends early (%s)", where)
	}
	if t.kind == tokWord && reserved(t.text) {
		return fmt.Errorf("%s at offset %d is not allowed (%s)", strings.ToUpper(t.text), t.pos, where)
	}
	return fmt.Errorf("%q at offset %d is not allowed (%s)", t.text, t.pos, where)
}

// reserved are the words that are never a column's bare name in a filter: the grammar's keywords and the
// statements' that a filter has no use for.
func reserved(w string) bool {
	return slices.Contains([]string{"and", "or", "not", "is", "null", "true", "false", "in", "between", "like",
		"select", "from", "where", "union", "exists", "case", "when", "then", "else", "end", "cast", "as",
		"escape", "similar", "ilike", "regexp", "rlike", "div", "mod", "xor", "any", "all", "some", "array",
		"row", "interval", "collate", "binary", "distinct"}, strings.ToLower(w))
}

func (p *parser) deeper(depth int) error {
	if depth >= MaxDepth {
		return errors.New("the filter nests too deeply")
	}
	return nil
}

func (p *parser) or(depth int) (*node, error) {
	return p.logical(depth, "OR", p.and)
}

func (p *parser) and(depth int) (*node, error) {
	return p.logical(depth, "AND", p.not)
}

// logical parses operands joined by word (AND, OR), each a condition.
func (p *parser) logical(depth int, word string, operand func(int) (*node, error)) (*node, error) {
	if err := p.deeper(depth); err != nil {
		return nil, err
	}
	left, err := operand(depth + 1)
	if err != nil {
		return nil, err
	}
	for p.keyword(word) {
		right, err := operand(depth + 1)
		if err != nil {
			return nil, err
		}
		if !left.boolean() || !right.boolean() {
			return nil, fmt.Errorf("%s joins values that are not conditions", word)
		}
		left = &node{kind: nodeBinary, text: word, args: []*node{left, right}}
	}
	return left, nil
}

func (p *parser) not(depth int) (*node, error) {
	if err := p.deeper(depth); err != nil {
		return nil, err
	}
	if p.keyword("NOT") {
		operand, err := p.not(depth + 1)
		if err != nil {
			return nil, err
		}
		if !operand.boolean() {
			return nil, errors.New("NOT of a value that is not a condition")
		}
		return &node{kind: nodeUnary, text: "NOT", args: []*node{operand}}, nil
	}
	return p.predicate(depth + 1)
}

func (p *parser) predicate(depth int) (*node, error) {
	left, err := p.value(depth)
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind == tokOp && slices.Contains([]string{"=", "<>", "!=", "<", "<=", ">", ">="}, t.text) {
		p.next()
		right, err := p.value(depth)
		if err != nil {
			return nil, err
		}
		return &node{kind: nodeBinary, text: t.text, args: []*node{left, right}}, nil
	}
	if p.keyword("IS") {
		text := "IS "
		if p.keyword("NOT") {
			text += "NOT "
		}
		switch {
		case p.keyword("NULL"):
			text += "NULL"
		case p.keyword("TRUE"):
			text += "TRUE"
		case p.keyword("FALSE"):
			text += "FALSE"
		default:
			return nil, p.unexpected("IS takes NULL, TRUE or FALSE")
		}
		return &node{kind: nodeIs, text: text, args: []*node{left}}, nil
	}
	negated := p.keyword("NOT")
	prefix := ""
	if negated {
		prefix = "NOT "
	}
	switch {
	case p.keyword("IN"):
		return p.inList(left, prefix+"IN")
	case p.keyword("BETWEEN"):
		low, err := p.value(depth)
		if err != nil {
			return nil, err
		}
		if !p.keyword("AND") {
			return nil, p.unexpected("BETWEEN low AND high")
		}
		high, err := p.value(depth)
		if err != nil {
			return nil, err
		}
		return &node{kind: nodeBetween, text: prefix + "BETWEEN", args: []*node{left, low, high}}, nil
	case p.keyword("LIKE"):
		pattern, err := p.value(depth)
		if err != nil {
			return nil, err
		}
		return &node{kind: nodeBinary, text: prefix + "LIKE", args: []*node{left, pattern}}, nil
	case negated:
		return nil, p.unexpected("NOT here takes IN, BETWEEN or LIKE")
	}
	return left, nil
}

// inList parses IN's list of literals, its "(" next.
func (p *parser) inList(left *node, text string) (*node, error) {
	if !p.op("(") {
		return nil, p.unexpected("IN takes a list of literals in parentheses")
	}
	return p.items(&node{kind: nodeIn, text: text, args: []*node{left}}, p.literal, "IN's list of literals")
}

// items parses a comma-separated list of item closed by ")" (its "(" taken), appending each to n's
// arguments; what names the list in an error.
func (p *parser) items(n *node, item func() (*node, error), what string) (*node, error) {
	for {
		it, err := item()
		if err != nil {
			return nil, err
		}
		n.args = append(n.args, it)
		if p.op(")") {
			return n, nil
		}
		if !p.op(",") {
			return nil, p.unexpected(what)
		}
	}
}

// literal parses a literal of an IN list: a number (maybe signed), a string, TRUE, FALSE or NULL.
func (p *parser) literal() (*node, error) {
	sign := ""
	if p.op("-") {
		sign = "-"
	}
	t := p.peek()
	switch {
	case t.kind == tokNumber:
		p.next()
		return &node{kind: nodeNumber, text: sign + t.text}, nil
	case sign != "":
	case t.kind == tokString:
		p.next()
		return &node{kind: nodeString, text: t.text}, nil
	case t.kind == tokWord && (strings.EqualFold(t.text, "TRUE") || strings.EqualFold(t.text, "FALSE") || strings.EqualFold(t.text, "NULL")):
		p.next()
		return &node{kind: nodeKeyword, text: strings.ToUpper(t.text)}, nil
	}
	return nil, p.unexpected("IN's list holds literals only")
}

// value parses an arithmetic expression (value in the grammar).
func (p *parser) value(depth int) (*node, error) {
	return p.arithmetic(depth, []string{"+", "-"}, p.term)
}

func (p *parser) term(depth int) (*node, error) {
	return p.arithmetic(depth, []string{"*", "/", "%"}, p.factor)
}

// arithmetic parses operands joined by the operators ops, each a value.
func (p *parser) arithmetic(depth int, ops []string, operand func(int) (*node, error)) (*node, error) {
	if err := p.deeper(depth); err != nil {
		return nil, err
	}
	left, err := operand(depth + 1)
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		if t.kind != tokOp || !slices.Contains(ops, t.text) {
			return left, nil
		}
		p.next()
		right, err := operand(depth + 1)
		if err != nil {
			return nil, err
		}
		left = &node{kind: nodeBinary, text: t.text, args: []*node{left, right}}
	}
}

func (p *parser) factor(depth int) (*node, error) {
	if err := p.deeper(depth); err != nil {
		return nil, err
	}
	t := p.next()
	switch t.kind {
	case tokOp:
		switch t.text {
		case "-", "+":
			operand, err := p.factor(depth + 1)
			if err != nil {
				return nil, err
			}
			return &node{kind: nodeUnary, text: t.text, args: []*node{operand}}, nil
		case "(":
			if w := p.peek(); w.kind == tokWord && strings.EqualFold(w.text, "SELECT") {
				return nil, fmt.Errorf("a subquery at offset %d is not allowed", w.pos)
			}
			inner, err := p.or(depth + 1)
			if err != nil {
				return nil, err
			}
			if !p.op(")") {
				return nil, p.unexpected("a ')' closing the '(' at offset " + fmt.Sprint(t.pos))
			}
			return inner, nil
		}
	case tokNumber:
		return &node{kind: nodeNumber, text: t.text}, nil
	case tokString:
		return &node{kind: nodeString, text: t.text}, nil
	case tokQuoted:
		return p.column(t, true)
	case tokWord:
		lower := strings.ToLower(t.text)
		if lower == "true" || lower == "false" || lower == "null" {
			return &node{kind: nodeKeyword, text: strings.ToUpper(t.text)}, nil
		}
		if p.peek().kind == tokOp && p.peek().text == "(" {
			return p.call(t, depth)
		}
		if reserved(t.text) {
			p.at--
			return nil, p.unexpected("a column, a literal or '(' was expected")
		}
		return p.column(t, false)
	}
	if t.kind != tokEnd {
		p.at--
	}
	return nil, p.unexpected("a column, a literal or '(' was expected")
}

// column is a column reference; a qualified name (t.col, schema.t.col) is refused.
func (p *parser) column(t token, quoted bool) (*node, error) {
	if next := p.peek(); next.kind == tokNumber && strings.HasPrefix(next.text, ".") || next.kind == tokOp && next.text == "." {
		return nil, fmt.Errorf("the qualified name at offset %d is not allowed; name the column alone", t.pos)
	}
	return &node{kind: nodeColumn, text: t.text, quoted: quoted}, nil
}

// call parses a call of an allowed function, its "(" next.
func (p *parser) call(name token, depth int) (*node, error) {
	fn := strings.ToLower(name.text)
	if !slices.Contains(Functions, fn) {
		return nil, fmt.Errorf("the function %s at offset %d is not allowed (only %s)", name.text, name.pos, strings.Join(Functions, ", "))
	}
	p.next() // "("
	if w := p.peek(); w.kind == tokWord && strings.EqualFold(w.text, "SELECT") {
		return nil, fmt.Errorf("a subquery at offset %d is not allowed", w.pos)
	}
	return p.items(&node{kind: nodeCall, text: fn}, func() (*node, error) { return p.value(depth + 1) }, fn+"'s arguments")
}
