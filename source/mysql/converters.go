package mysql

import (
	"regexp"
	"slices"
	"strings"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/source/mysql/tables"
	"github.com/cdcd/cdcd/source/mysql/types"
	"github.com/cdcd/cdcd/source/props"
)

// booleanConverterClasses name Debezium's TinyIntOneToBooleanConverter, the one custom converter cdcd
// runs (converters=<name>, <name>.type=…): the binlog module's and the MySQL connector's older name.
var booleanConverterClasses = []string{
	"io.debezium.connector.binlog.converters.TinyIntOneToBooleanConverter",
	"io.debezium.connector.mysql.converters.TinyIntOneToBooleanConverter",
}

// booleanConverterOptions are the converter's settings (<name>.<option>) besides type.
var booleanConverterOptions = []string{"selector", "length.checker"}

// booleanConverter is one TinyIntOneToBooleanConverter: it makes a TINYINT column a boolean, as the
// converter does: TINYINT or TINYINT UNSIGNED, of declared length 1 unless length.checker=false, and
// named by selector (regular expressions on db.table.column, ignoring case) when one is given.
type booleanConverter struct {
	selector      []*regexp.Regexp // nil: every such column
	lengthChecker bool
}

func (b booleanConverter) applies(table string, col *tables.Column) bool {
	if t := strings.ToUpper(col.TypeName); t != "TINYINT" && t != "TINYINT UNSIGNED" {
		return false
	}
	if b.lengthChecker && (!col.HasLength || col.Length != 1) {
		return false
	}
	return b.selector == nil || props.AnyMatch(b.selector, table+"."+col.Name)
}

// converterNames are the names converters lists.
func converterNames(settings map[string]string) []string {
	var out []string
	for _, name := range strings.Split(settings["converters"], ",") {
		if name = strings.TrimSpace(name); name != "" {
			out = append(out, name)
		}
	}
	return out
}

// keysFor is Keys for one config: the settings of the converters it runs are honoured too.
func keysFor(flavor types.Flavor, settings map[string]string) props.Keys {
	keys := Keys(flavor)
	honoured, converterKey := keys.Honoured, honouredConverterKey(settings)
	keys.Honoured = func(key string) bool { return honoured(key) || converterKey(key) }
	return keys
}

// honouredConverterKey claims the settings of the converters cdcd runs, so that Refusals leaves them to
// parseConverters; another converter's settings stay refused with it.
func honouredConverterKey(settings map[string]string) func(key string) bool {
	return func(key string) bool {
		for _, name := range converterNames(settings) {
			option, ok := strings.CutPrefix(key, name+".")
			if ok && slices.Contains(booleanConverterClasses, strings.TrimSpace(settings[name+".type"])) &&
				(option == "type" || slices.Contains(booleanConverterOptions, option)) {
				return true
			}
		}
		return false
	}
}

// parseConverters reads converters and each converter's settings. A converter of another class is
// refused on its type key (by Keys.Refusals, which honouredConverterKey leaves it to): cdcd does not load
// Java classes.
func parseConverters(p *props.Parser, settings map[string]string) []booleanConverter {
	p.Honour("converters")
	var out []booleanConverter
	for _, name := range converterNames(settings) {
		typ := strings.TrimSpace(p.Str(name+".type", ""))
		if typ == "" {
			p.Fail(name+".type", "", "converters lists "+name+", which needs its class: cdcd runs "+booleanConverterClasses[0])
			continue
		}
		if !slices.Contains(booleanConverterClasses, typ) {
			continue // refused by Keys.Refusals, with the converter's other settings
		}
		b := booleanConverter{lengthChecker: p.Boolean(name+".length.checker", true)}
		for _, expr := range strings.Split(p.Str(name+".selector", ""), ",") {
			if expr = strings.TrimSpace(expr); expr == "" {
				continue
			}
			re, err := regexp.Compile("^(?i:" + expr + ")$")
			if err != nil {
				p.Fail(name+".selector", expr, "not a regular expression: "+err.Error())
				continue
			}
			b.selector = append(b.selector, re)
		}
		out = append(out, b)
	}
	return out
}

// booleanColumn reports whether a converter makes column col of table (db.table) a boolean.
func (c *Config) booleanColumn(table string, col *tables.Column) bool {
	return slices.ContainsFunc(c.BooleanConverters, func(b booleanConverter) bool { return b.applies(table, col) })
}

// asBoolean is the converter's value for a TINYINT's converted value: a number above 0 is true; null stays
// null in an optional column and is the default (else false) in a required one.
func asBoolean(v any, optional bool, def any) any {
	switch x := v.(type) {
	case nil:
		if optional {
			return nil
		}
		if def != nil {
			return def
		}
		return false
	case int8:
		return x > 0
	case int16:
		return x > 0
	case int32:
		return x > 0
	case int64:
		return x > 0
	case bool:
		return x
	}
	return false
}

// booleanSchema is a converted column's schema: Connect's boolean, with the column's optionality and its
// default converted.
func booleanSchema(s *schema.Schema) *schema.Schema {
	out := &schema.Schema{Type: schema.Boolean, Optional: s.Optional, HasDefault: s.HasDefault}
	if s.HasDefault {
		out.Default = asBoolean(s.Default, true, nil)
	}
	return out
}
