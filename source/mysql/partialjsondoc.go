package mysql

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/go-mysql-org/go-mysql/replication"
)

// jsonValue is a JSON document as a partial update changes it: objects keep their members in the order
// the server stores them (which is how go-mysql renders them), scalars keep their text.
type jsonValue struct {
	scalar string // a string literal (as written), number or literal; "" for an object or array
	object bool
	keys   []string     // an object's member names, decoded
	items  []*jsonValue // an object's member values, or an array's elements
}

// parseJSON reads one JSON document (go-mysql's rendering of a column).
func parseJSON(text string) (*jsonValue, error) {
	p := jsonParser{text: text}
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	if p.skipSpace(); p.pos != len(text) {
		return nil, fmt.Errorf("text after the document at byte %d", p.pos)
	}
	return v, nil
}

// maxJSONDepth is MySQL's limit on a document's nesting.
const maxJSONDepth = 100

type jsonParser struct {
	text string
	pos  int
}

func (p *jsonParser) skipSpace() {
	for p.pos < len(p.text) && strings.IndexByte(" \t\r\n", p.text[p.pos]) >= 0 {
		p.pos++
	}
}

func (p *jsonParser) value(depth int) (*jsonValue, error) {
	if depth > maxJSONDepth {
		return nil, fmt.Errorf("nested deeper than %d", maxJSONDepth)
	}
	p.skipSpace()
	if p.pos >= len(p.text) {
		return nil, fmt.Errorf("the document ends early")
	}
	switch c := p.text[p.pos]; c {
	case '{', '[':
		v := &jsonValue{object: c == '{'}
		end := byte(']')
		if v.object {
			end = '}'
		}
		p.pos++
		for first := true; ; first = false {
			p.skipSpace()
			if p.pos < len(p.text) && p.text[p.pos] == end {
				p.pos++
				return v, nil
			}
			if !first {
				if p.pos >= len(p.text) || p.text[p.pos] != ',' {
					return nil, fmt.Errorf("no ',' at byte %d", p.pos)
				}
				p.pos++
			}
			if v.object {
				p.skipSpace()
				key, err := p.stringLiteral()
				if err != nil {
					return nil, err
				}
				var name string
				if err := json.Unmarshal([]byte(key), &name); err != nil {
					return nil, fmt.Errorf("member name %s: %w", key, err)
				}
				if p.skipSpace(); p.pos >= len(p.text) || p.text[p.pos] != ':' {
					return nil, fmt.Errorf("no ':' at byte %d", p.pos)
				}
				p.pos++
				v.keys = append(v.keys, name)
			}
			item, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			v.items = append(v.items, item)
		}
	case '"':
		s, err := p.stringLiteral()
		return &jsonValue{scalar: s}, err
	default:
		start := p.pos
		for p.pos < len(p.text) && strings.IndexByte(",]} \t\r\n", p.text[p.pos]) < 0 {
			p.pos++
		}
		if start == p.pos {
			return nil, fmt.Errorf("unexpected %q at byte %d", c, start)
		}
		return &jsonValue{scalar: p.text[start:p.pos]}, nil
	}
}

// stringLiteral returns the string literal at the parser's position, quotes and escapes as written.
func (p *jsonParser) stringLiteral() (string, error) {
	start := p.pos
	if p.pos >= len(p.text) || p.text[p.pos] != '"' {
		return "", fmt.Errorf("no string at byte %d", p.pos)
	}
	for p.pos++; p.pos < len(p.text); p.pos++ {
		switch p.text[p.pos] {
		case '\\':
			p.pos++
		case '"':
			p.pos++
			return p.text[start:p.pos], nil
		}
	}
	return "", fmt.Errorf("a string that does not end, from byte %d", start)
}

// write renders v compactly, as go-mysql renders a document.
func (v *jsonValue) write(out *bytes.Buffer) {
	switch {
	case v.scalar != "":
		out.WriteString(v.scalar)
	case v.object:
		out.WriteByte('{')
		for i, k := range v.keys {
			if i > 0 {
				out.WriteByte(',')
			}
			out.WriteString(quoteJSON(k))
			out.WriteByte(':')
			v.items[i].write(out)
		}
		out.WriteByte('}')
	default:
		out.WriteByte('[')
		for i, item := range v.items {
			if i > 0 {
				out.WriteByte(',')
			}
			item.write(out)
		}
		out.WriteByte(']')
	}
}

func quoteJSON(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

// pathLeg is one step of a JSON path: an object member or an array element.
type pathLeg struct {
	member string
	index  int // -1 for a member
}

// parsePath reads the JSON path of a diff as MySQL writes it: $ followed by .name, ."quoted name" and
// [index] legs.
func parsePath(path string) ([]pathLeg, error) {
	if !strings.HasPrefix(path, "$") {
		return nil, fmt.Errorf("path %q does not start with $", path)
	}
	var legs []pathLeg
	for rest := path[1:]; rest != ""; {
		switch rest[0] {
		case '.':
			rest = rest[1:]
			if strings.HasPrefix(rest, `"`) {
				p := jsonParser{text: rest}
				lit, err := p.stringLiteral()
				if err != nil {
					return nil, fmt.Errorf("path %q: %w", path, err)
				}
				var name string
				if err := json.Unmarshal([]byte(lit), &name); err != nil {
					return nil, fmt.Errorf("path %q: %w", path, err)
				}
				legs, rest = append(legs, pathLeg{member: name, index: -1}), rest[p.pos:]
				continue
			}
			end := strings.IndexAny(rest, ".[")
			if end < 0 {
				end = len(rest)
			}
			if end == 0 {
				return nil, fmt.Errorf("path %q: an empty member name", path)
			}
			legs, rest = append(legs, pathLeg{member: rest[:end], index: -1}), rest[end:]
		case '[':
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return nil, fmt.Errorf("path %q: '[' without ']'", path)
			}
			i, err := strconv.Atoi(strings.TrimSpace(rest[1:end]))
			if err != nil || i < 0 {
				return nil, fmt.Errorf("path %q: array index %q", path, rest[1:end])
			}
			legs, rest = append(legs, pathLeg{index: i}), rest[end+1:]
		default:
			return nil, fmt.Errorf("path %q: unexpected %q", path, rest[0])
		}
	}
	return legs, nil
}

// apply returns doc changed by d.
func (d jsonDiff) apply(doc *jsonValue) (*jsonValue, error) {
	legs, err := parsePath(d.path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errPartialJSON, err)
	}
	var value *jsonValue
	if d.op != replication.JsonDiffOperationRemove {
		if value, err = parseJSON(d.value); err != nil {
			return nil, fmt.Errorf("%w: the new value at %s: %w", errPartialJSON, d.path, err)
		}
	}
	if len(legs) == 0 {
		if d.op != replication.JsonDiffOperationReplace {
			return nil, fmt.Errorf("%w: %s of the whole document", errPartialJSON, d.op)
		}
		return value, nil
	}
	parent := doc
	for _, leg := range legs[:len(legs)-1] {
		i := parent.find(leg)
		if i < 0 {
			return nil, fmt.Errorf("%w: %s at %s, which the before image does not have", errPartialJSON, d.op, d.path)
		}
		parent = parent.items[i]
	}
	last := legs[len(legs)-1]
	if (last.index < 0) != parent.object || parent.scalar != "" {
		return nil, fmt.Errorf("%w: %s at %s, whose parent is not an %s", errPartialJSON, d.op, d.path, map[bool]string{true: "object", false: "array"}[last.index < 0])
	}
	i := parent.find(last)
	switch {
	case d.op == replication.JsonDiffOperationRemove && i >= 0:
		parent.keys = deleteAt(parent.keys, i, parent.object)
		parent.items = append(parent.items[:i], parent.items[i+1:]...)
	case d.op == replication.JsonDiffOperationReplace && i >= 0:
		parent.items[i] = value
	case d.op == replication.JsonDiffOperationInsert && parent.object && i < 0:
		at := parent.memberPosition(last.member)
		parent.keys = append(parent.keys[:at], append([]string{last.member}, parent.keys[at:]...)...)
		parent.items = append(parent.items[:at], append([]*jsonValue{value}, parent.items[at:]...)...)
	case d.op == replication.JsonDiffOperationInsert && !parent.object:
		at := min(last.index, len(parent.items))
		parent.items = append(parent.items[:at], append([]*jsonValue{value}, parent.items[at:]...)...)
	default:
		return nil, fmt.Errorf("%w: %s at %s does not fit the before image", errPartialJSON, d.op, d.path)
	}
	return doc, nil
}

// find is the position of leg's member or element in v, -1 when v has none.
func (v *jsonValue) find(leg pathLeg) int {
	if v.scalar != "" || (leg.index < 0) != v.object {
		return -1
	}
	if leg.index >= 0 {
		if leg.index < len(v.items) {
			return leg.index
		}
		return -1
	}
	for i, k := range v.keys {
		if k == leg.member {
			return i
		}
	}
	return -1
}

// memberPosition is where a new member name goes among v's: MySQL keeps an object's members ordered by
// the length of their names, then by their bytes.
func (v *jsonValue) memberPosition(name string) int {
	for i, k := range v.keys {
		if len(k) > len(name) || len(k) == len(name) && k > name {
			return i
		}
	}
	return len(v.keys)
}

func deleteAt(keys []string, i int, object bool) []string {
	if !object {
		return keys
	}
	return append(keys[:i], keys[i+1:]...)
}
