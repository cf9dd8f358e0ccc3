package columns

import "github.com/cdcd/cdcd/schema"

// Debezium maps only the row's fields: a key column keeps its value in the key even when the row's copy
// is masked or truncated. The readers build the key from the row, so a row of a table with a mapped key
// column carries the key's unmapped values with it, in the spare capacity of its Values, where nothing
// that walks the row's schema fields sees them.

// NewRow returns an empty row of s with room for keyLen unmapped key values.
func NewRow(s *schema.Schema, keyLen int) *schema.Struct {
	return &schema.Struct{Schema: s, Values: make([]any, len(s.Fields), len(s.Fields)+keyLen)}
}

// SetKeyValue records the unmapped value of the i-th key column of a row made by NewRow; a row without
// room for it is left as it is.
func SetKeyValue(row *schema.Struct, i int, v any) {
	if all := row.Values[:cap(row.Values)]; i >= 0 && len(row.Values)+i < len(all) {
		all[len(row.Values)+i] = v
	}
}

// KeyValue returns what SetKeyValue recorded, nil when the row has no room for it.
func KeyValue(row *schema.Struct, i int) any {
	if all := row.Values[:cap(row.Values)]; i >= 0 && len(row.Values)+i < len(all) {
		return all[len(row.Values)+i]
	}
	return nil
}
