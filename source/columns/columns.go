// Package columns applies Debezium's column mappers, the options that change one column's field in the
// change events of both relational connectors:
//
//	column.truncate.to.N.chars=<columns>                   cut strings (and bytes) to N characters
//	column.mask.with.N.chars=<columns>                     replace strings with N '*'
//	column.mask.hash.ALG.with.salt.SALT=<columns>          replace strings with a salted hex digest
//	column.mask.hash.v2.ALG.with.salt.SALT=<columns>       the same, hashing the string's bytes only
//	column.propagate.source.type=<columns>                 add the source type to the field's schema
//	datatype.propagate.source.type=<types>                 the same, chosen by type
//
// <columns> are comma-separated regular expressions matched, whole and case-insensitively, against a
// column's fully qualified name ("schema.table.column" on PostgreSQL, "database.table.column" on
// MySQL/MariaDB); <types> against "schema.table.typename". The rules are Debezium 3.6.1's ColumnMappers,
// MaskStrings, TruncateColumn and PropagateSourceMetadataToSchemaParameter: one mapper per column, the
// first that matches in the order above (truncation wins over masking, masking over propagation);
// mappers change the row's fields only, never the key's.
package columns

import (
	"regexp"
	"slices"
	"sort"
	"strconv"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/source/props"
)

// Column is what the mappers need to know of a source column, as Debezium's relational Column has it.
type Column struct {
	Name string
	// TypeName is the source type's name (Column.typeName): "varchar", "_int4", "INT UNSIGNED".
	TypeName string
	// JDBCType is java.sql.Types' code of the type: masking touches only the character types.
	JDBCType int
	// Length is the declared or implied length or precision, -1 when the type has none.
	Length int
	// Scale is the declared scale, when HasScale.
	Scale    int
	HasScale bool
	// Comment is the column comment, "" for none.
	Comment string
}

// java.sql.Types codes of the character types, the only ones MaskStrings masks.
const (
	jdbcChar         = 1
	jdbcVarchar      = 12
	jdbcLongVarchar  = -1
	jdbcClob         = 2005
	jdbcNChar        = -15
	jdbcNVarchar     = -9
	jdbcLongNVarchar = -16
	jdbcNClob        = 2011
	jdbcDatalink     = 70
)

func (c Column) isCharacter() bool {
	switch c.JDBCType {
	case jdbcChar, jdbcVarchar, jdbcLongVarchar, jdbcClob, jdbcNChar, jdbcNVarchar, jdbcLongNVarchar, jdbcNClob, jdbcDatalink:
		return true
	}
	return false
}

// Mappers are a connector's column mapping rules. A nil *Mappers maps nothing. It is immutable and safe
// for concurrent use.
type Mappers struct {
	rules []rule
}

// rule is one option: the patterns it selects columns with and what it does to them.
type rule struct {
	patterns []*regexp.Regexp
	byType   bool // patterns match "table.typename" rather than "table.column"
	mapper   func(Column) *Mapper
}

// For returns the mapper of a column of table ("schema.table" or "database.table"): the first rule that
// selects the column decides, even when it leaves the column alone (a truncation longer than the
// column); nil when it does, or when no rule selects the column.
func (ms *Mappers) For(table string, col Column) *Mapper {
	if ms == nil {
		return nil
	}
	for _, r := range ms.rules {
		subject := table + "." + col.Name
		if r.byType {
			subject = table + "." + col.TypeName
		}
		if props.AnyMatch(r.patterns, subject) {
			return r.mapper(col)
		}
	}
	return nil
}

// Mapper changes one column's field: parameters added to its schema, and a function of its values. A
// nil *Mapper changes nothing. It is immutable and safe for concurrent use.
type Mapper struct {
	params []schema.Param
	value  func(any) any // nil: values pass unchanged
}

// Schema returns s with the mapper's parameters appended after s's own (a copy; s is not modified).
func (m *Mapper) Schema(s *schema.Schema) *schema.Schema {
	if m == nil || len(m.params) == 0 {
		return s
	}
	c := *s
	c.Parameters = append(slices.Clip(s.Parameters), m.params...)
	return &c
}

// Value maps a converted value: the value Debezium's converter produced for the field, fallbacks and
// unavailable-value placeholders included, null as nil.
func (m *Mapper) Value(v any) any {
	if m == nil || m.value == nil {
		return v
	}
	return m.value(v)
}

// Changes reports whether the mapper can change values (not only the schema).
func (m *Mapper) Changes() bool { return m != nil && m.value != nil }

// The option keys, in the order Debezium's ColumnMappers.create registers them: for a column that several
// options select, the first registered wins.
var (
	truncateKey       = regexp.MustCompile(`^column\.truncate\.to\.(\d+)\.chars$`)
	maskKey           = regexp.MustCompile(`^column\.mask\.with\.(\d+)\.chars$`)
	hashKey           = regexp.MustCompile(`^column\.mask\.hash\.([^.]+)\.with\.salt\.(.+)$`)
	hashV2Key         = regexp.MustCompile(`^column\.mask\.hash\.v2\.([^.]+)\.with\.salt\.(.+)$`)
	propagateKey      = "column.propagate.source.type"
	propagateTypesKey = "datatype.propagate.source.type"
)

// IsOptionKey reports whether key is a column mapper's key with its parameters in the name
// (column.truncate.to.N.chars, column.mask.with.N.chars, column.mask.hash[.v2].ALGORITHM.with.salt.SALT),
// which Parse reads.
func IsOptionKey(key string) bool {
	return truncateKey.MatchString(key) || maskKey.MatchString(key) || hashKey.MatchString(key) || hashV2Key.MatchString(key)
}

// Parse reads the column mapping options of settings, reporting refused values on p. It returns nil when
// no option is set.
func Parse(p *props.Parser, settings map[string]string) *Mappers {
	// Debezium visits the keys of one option in hash-map order; sorted order is the stable stand-in, and
	// matters only when two keys of the same option select the same column.
	keys := make([]string, 0, len(settings))
	for k := range settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)

	ms := &Mappers{}
	add := func(key string, byType bool, mapper func(Column) *Mapper) {
		if patterns := p.RegexList(key); len(patterns) > 0 {
			ms.rules = append(ms.rules, rule{patterns: patterns, byType: byType, mapper: mapper})
		}
	}
	forEach := func(re *regexp.Regexp, fn func(key string, groups []string)) {
		for _, k := range keys {
			if g := re.FindStringSubmatch(k); g != nil {
				fn(k, g[1:])
			}
		}
	}
	forEach(truncateKey, func(key string, g []string) {
		if n, ok := chars(p, key, g[0]); ok {
			add(key, false, truncator(n))
		}
	})
	forEach(maskKey, func(key string, g []string) {
		if n, ok := chars(p, key, g[0]); ok {
			add(key, false, masker(n))
		}
	})
	add(propagateKey, false, propagator)
	add(propagateTypesKey, true, propagator)
	for _, v := range []struct {
		key *regexp.Regexp
		v2  bool
	}{{hashKey, false}, {hashV2Key, true}} {
		forEach(v.key, func(key string, g []string) {
			newHash, err := digest(g[0])
			if err != nil {
				p.Fail(key, settings[key], err.Error())
				return
			}
			add(key, false, hasher(newHash, []byte(g[1]), v.v2))
		})
	}
	if len(ms.rules) == 0 {
		return nil
	}
	return ms
}

// chars reads the N of a key: Debezium takes any int.
func chars(p *props.Parser, key, n string) (int, bool) {
	v, err := strconv.ParseInt(n, 10, 32)
	if err != nil {
		p.Fail(key, n, "the number of characters in the key must be at most 2147483647")
		return 0, false
	}
	return int(v), true
}
