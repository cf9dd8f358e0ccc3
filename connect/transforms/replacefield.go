package transforms

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/source"
)

// replaceField is Kafka's ReplaceField$Key or ReplaceField$Value: it keeps the fields "include" lists (all
// when empty) minus those "exclude" lists, and renames fields by "renames" (old:new pairs).
type replaceField struct {
	part
	include, exclude       []string
	renames                map[string]string // old name → new name
	reverse                map[string]string // new name → old name
	replaceNullWithDefault bool
	schemas                schemaCache[*schema.Schema]
}

const replaceFieldPurpose = "field replacement"

func newReplaceField(s settings, p part) (transformation, error) {
	// Kafka 4 removed the names Kafka 2 and 3 accepted; Connect 4 ignores them, which would silently keep
	// every field. Refusing says what to write instead.
	for old, now := range map[string]string{"whitelist": "include", "blacklist": "exclude"} {
		if v, ok := s.lookup(old); ok {
			return nil, &ConfigError{Key: s.key(old), Value: v,
				Problem: fmt.Sprintf("Kafka 4 removed this setting and ignores it; write %s instead", s.key(now))}
		}
	}
	t := &replaceField{part: p, include: s.list("include"), exclude: s.list("exclude"),
		renames: map[string]string{}, reverse: map[string]string{}}
	for _, mapping := range s.list("renames") {
		parts := strings.Split(mapping, ":")
		// Java's String.split drops trailing empty strings: "a:" is one part, "a:b:" two.
		for len(parts) > 0 && parts[len(parts)-1] == "" {
			parts = parts[:len(parts)-1]
		}
		if len(parts) != 2 {
			return nil, &ConfigError{Key: s.key("renames"), Value: s.str("renames", ""), Problem: "Invalid rename mapping: " + mapping}
		}
		t.renames[parts[0]] = parts[1]
		t.reverse[parts[1]] = parts[0]
	}
	var err error
	if t.replaceNullWithDefault, err = replaceNullWithDefaultSetting(s); err != nil {
		return nil, err
	}
	return t, nil
}

func (t *replaceField) keeps(name string) bool {
	return !slices.Contains(t.exclude, name) && (len(t.include) == 0 || slices.Contains(t.include, name))
}

func (t *replaceField) renamed(name string) string {
	if n, ok := t.renames[name]; ok {
		return n
	}
	return name
}

func (t *replaceField) apply(ev *source.Event) (bool, error) {
	sch, val := t.get(ev)
	if val == nil {
		return true, nil
	}
	if sch == nil {
		m, err := requireMap(val, replaceFieldPurpose)
		if err != nil {
			return false, err
		}
		out := newHashMap(nil)
		for _, e := range m {
			if name, _ := e.Key.(string); t.keeps(name) {
				out.put(t.renamed(name), e.Value)
			}
		}
		t.set(ev, nil, out.entries())
		return true, nil
	}
	st, err := requireStruct(val, replaceFieldPurpose)
	if err != nil {
		return false, err
	}
	updated, err := t.schemas.get(st.Schema, func() (*schema.Schema, error) {
		out := copyBasics(st.Schema)
		for _, f := range st.Schema.Fields {
			if t.keeps(f.Name) {
				if err := withField(out, t.renamed(f.Name), f.Schema); err != nil {
					return nil, err
				}
			}
		}
		return out, nil
	})
	if err != nil {
		return false, err
	}
	values := make([]any, len(updated.Fields))
	for i, f := range updated.Fields {
		old := f.Name
		if o, ok := t.reverse[f.Name]; ok {
			old = o
		}
		// Struct.get of a name the input lacks fails in Java: a rename onto another field's name.
		idx := st.Schema.FieldIndex(old)
		if idx < 0 {
			return false, fmt.Errorf("%s is not a valid field name", old)
		}
		values[i] = structValue(st, idx, t.replaceNullWithDefault)
	}
	t.set(ev, updated, &schema.Struct{Schema: updated, Values: values})
	return true, nil
}
