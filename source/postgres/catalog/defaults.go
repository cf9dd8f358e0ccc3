package catalog

import (
	"regexp"
	"strings"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/schema/javacompat"
)

// Default values follow PostgresDefaultValueConverter: a parser picked by the declared type's name turns
// the pg_get_expr text into a raw value, which then goes through the column's value converter. A call
// such as nextval(...) or now(), and CURRENT_DATE and friends, become a type-zero placeholder; anything
// the parser cannot read leaves the field without a default. Types without a parser (arrays, bytea,
// money, domains, timetz, ...) never get one.

var (
	// FUNCTION_DEFAULT_PATTERN, applied with find(): a call at the start of the expression.
	functionDefault = regexp.MustCompile(`^[(]?[A-Za-z0-9_.]+\((?:.+(?:, ?.+)*)?\)`)
	// LITERAL_DEFAULT_PATTERN: the first single-quoted string, non-greedy (so 'it''s' reads as "it").
	literalDefault   = regexp.MustCompile(`'(.*?)'`)
	currentDateTimes = map[string]bool{"current_timestamp": true, "current_time": true, "current_date": true, "localtime": true, "localtimestamp": true}
	// TRIM_DATA_TYPES: the types whose expression is trimmed first.
	trimmedTypes = map[string]bool{"bit": true, "varbit": true, "bool": true, "numeric": true, "float4": true, "float8": true,
		"int2": true, "int4": true, "serial": true, "int8": true, "bigserial": true, "smallserial": true, "uuid": true,
		"date": true, "time": true, "timestamp": true, "timestamptz": true, "interval": true}
	// placeholders are the values the parsers use for generated defaults, keyed by type name.
	placeholders = map[string]string{
		"bit": "00", "varbit": "0", "bool": "false", "bpchar": "", "varchar": "", "text": "", "xml": "",
		"numeric": "0.0", "float4": "0.0", "float8": "0.0", "int2": "0", "int4": "0", "int8": "0",
		"json": "{}", "jsonb": "{}", "uuid": "00000000-0000-0000-0000-000000000000",
		"date": "1970-01-01", "time": "00:00", "timestamp": "1970-01-01", "timestamptz": "1970-01-01", "interval": "epoch",
	}
)

// extractDefault is PostgresDefaultValueConverter.extractDefault; ok is false for a NULL default.
func extractDefault(expr, placeholder string) (string, bool) {
	if functionDefault.MatchString(expr) || currentDateTimes[strings.ToLower(expr)] {
		return placeholder, true
	}
	if !strings.Contains(expr, "'") {
		return expr, !strings.HasPrefix(expr, "NULL::")
	}
	m := literalDefault.FindStringSubmatch(expr)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// defaultValue is the field default of col, whose value type is vt; ok is false when Debezium sets none.
func defaultValue(col Column, ti *TypeInfo, vt valueType) (any, bool) {
	name := ti.Name
	if col.Type == ti && col.TypeName != "" {
		name = col.TypeName // the declared name: a domain's own name has no parser
	}
	expr := col.DefaultExpr
	if trimmedTypes[name] {
		expr = javacompat.Trim(expr)
	}
	var raw string
	switch {
	case ti.Kind == 'e' && col.Type == ti && name == ti.Name:
		v, ok := extractEnumDefault(ti, expr)
		if !ok {
			return nil, false
		}
		raw = v
	case placeholders[name] != "" || name == "bpchar" || name == "varchar" || name == "text" || name == "xml":
		v, ok := extractDefault(expr, placeholders[name])
		if !ok {
			return nil, false
		}
		raw = v
	default:
		return nil, false
	}
	v, ok := rawDefault(name, raw, vt)
	if _, isStruct := v.(*schema.Struct); isStruct {
		return nil, false // Debezium drops struct defaults (KAFKA-12694), e.g. a VariableScaleDecimal
	}
	return v, ok && v != nil
}

// rawDefault converts a parser's raw text with the column's decoder, after the adjustments that make
// the parsers' Java types meet the pgoutput text the decoders expect.
func rawDefault(name, raw string, vt valueType) (any, bool) {
	switch name {
	case "bool": // Boolean.parseBoolean
		return strings.EqualFold(raw, "true"), true
	case "numeric": // new BigDecimal(...) rejects NaN and Infinity
		if _, _, err := javacompat.ParseBigDecimal(raw); err != nil {
			return nil, false
		}
	case "uuid": // UUID.fromString then toString
		raw = strings.ToLower(raw)
	case "time": // TimestampUtils.toLocalTime also reads hh:mm
		if len(raw) == 5 {
			raw += ":00"
		}
	case "date", "timestamp", "timestamptz":
		if raw == "infinity" || raw == "-infinity" {
			return nil, false // pgjdbc's LocalDateTime.MAX/MIN have no faithful counterpart here
		}
		if name != "date" && !strings.Contains(raw, " ") {
			raw += " 00:00:00"
		}
		if name == "timestamptz" && !hasOffset(raw) {
			raw += "+00" // TimestampUtils.toOffsetDateTime reads a value without offset as UTC
		}
	}
	v, err := vt.decode(raw)
	return v, err == nil
}

func hasOffset(ts string) bool {
	_, clock, _ := strings.Cut(strings.TrimSuffix(ts, " BC"), " ")
	return strings.ContainsAny(clock, "+-")
}

// extractEnumDefault is PostgresDefaultValueConverter.extractEnumDefault: 'label'::type with the cast
// naming the enum (schema-qualified or not), the label taken verbatim from between the quotes.
func extractEnumDefault(ti *TypeInfo, expr string) (string, bool) {
	cast := strings.LastIndex(expr, "::")
	if cast < 0 {
		return "", false
	}
	suffix := expr[cast+2:]
	typeName := suffix
	if dot := strings.LastIndexByte(suffix, '.'); dot >= 0 {
		if schemaName := strings.Trim(suffix[:dot], `"`); schemaName != ti.Schema {
			return "", false
		}
		typeName = suffix[dot+1:]
	}
	if strings.Trim(typeName, `"`) != ti.Name {
		return "", false
	}
	v := expr[:cast]
	if len(v) < 2 || v[0] != '\'' || v[len(v)-1] != '\'' {
		return "", false
	}
	return v[1 : len(v)-1], true
}
