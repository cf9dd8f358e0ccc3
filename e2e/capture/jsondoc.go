package capture

import (
	"encoding/json"
	"fmt"
)

// node is one JSON value parsed without losing its bytes: start and end delimit the value's exact text in
// the document it came from, so blanking can splice bytes in place and everything else keeps the bytes the
// producer wrote (number spelling, string escapes, key order).
type node struct {
	kind     byte // '{', '[', '"', 'n' (number), 't', 'f', 'z' (null)
	start    int
	end      int
	keys     []string // object member names in document order
	children []*node  // object members (parallel to keys) or array elements
}

// get returns the member named key of an object node, or nil.
func (n *node) get(key string) *node {
	if n == nil || n.kind != '{' {
		return nil
	}
	for i, k := range n.keys {
		if k == key {
			return n.children[i]
		}
	}
	return nil
}

// parseJSON parses one complete JSON document (surrounding whitespace allowed).
func parseJSON(doc []byte) (*node, error) {
	p := parser{doc: doc}
	p.skipSpace()
	n, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos != len(doc) {
		return nil, fmt.Errorf("trailing data at byte %d", p.pos)
	}
	return n, nil
}

// maxDepth bounds recursion so a hostile document cannot exhaust the stack.
const maxDepth = 512

type parser struct {
	doc []byte
	pos int
}

func (p *parser) skipSpace() {
	for p.pos < len(p.doc) {
		switch p.doc[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) errorf(format string, args ...any) error {
	return fmt.Errorf("byte %d: %s", p.pos, fmt.Sprintf(format, args...))
}

func (p *parser) value(depth int) (*node, error) {
	if depth > maxDepth {
		return nil, p.errorf("nesting deeper than %d", maxDepth)
	}
	if p.pos >= len(p.doc) {
		return nil, p.errorf("unexpected end of document")
	}
	switch c := p.doc[p.pos]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		start := p.pos
		if err := p.skipString(); err != nil {
			return nil, err
		}
		return &node{kind: '"', start: start, end: p.pos}, nil
	case c == 't':
		return p.literal("true", 't')
	case c == 'f':
		return p.literal("false", 'f')
	case c == 'n':
		return p.literal("null", 'z')
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	default:
		return nil, p.errorf("unexpected character %q", c)
	}
}

func (p *parser) object(depth int) (*node, error) {
	n := &node{kind: '{', start: p.pos}
	p.pos++
	p.skipSpace()
	if p.pos < len(p.doc) && p.doc[p.pos] == '}' {
		p.pos++
		n.end = p.pos
		return n, nil
	}
	for {
		p.skipSpace()
		if p.pos >= len(p.doc) || p.doc[p.pos] != '"' {
			return nil, p.errorf("expected an object key")
		}
		keyStart := p.pos
		if err := p.skipString(); err != nil {
			return nil, err
		}
		var key string
		if err := json.Unmarshal(p.doc[keyStart:p.pos], &key); err != nil {
			return nil, p.errorf("bad object key: %v", err)
		}
		p.skipSpace()
		if p.pos >= len(p.doc) || p.doc[p.pos] != ':' {
			return nil, p.errorf("expected ':'")
		}
		p.pos++
		p.skipSpace()
		child, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		n.keys = append(n.keys, key)
		n.children = append(n.children, child)
		p.skipSpace()
		if p.pos >= len(p.doc) {
			return nil, p.errorf("unterminated object")
		}
		switch p.doc[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			n.end = p.pos
			return n, nil
		default:
			return nil, p.errorf("expected ',' or '}'")
		}
	}
}

func (p *parser) array(depth int) (*node, error) {
	n := &node{kind: '[', start: p.pos}
	p.pos++
	p.skipSpace()
	if p.pos < len(p.doc) && p.doc[p.pos] == ']' {
		p.pos++
		n.end = p.pos
		return n, nil
	}
	for {
		p.skipSpace()
		child, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		n.children = append(n.children, child)
		p.skipSpace()
		if p.pos >= len(p.doc) {
			return nil, p.errorf("unterminated array")
		}
		switch p.doc[p.pos] {
		case ',':
			p.pos++
		case ']':
			p.pos++
			n.end = p.pos
			return n, nil
		default:
			return nil, p.errorf("expected ',' or ']'")
		}
	}
}

// skipString advances past a string token; escapes are checked only for shape, the bytes are kept as written.
func (p *parser) skipString() error {
	p.pos++ // opening quote
	for p.pos < len(p.doc) {
		switch c := p.doc[p.pos]; {
		case c == '"':
			p.pos++
			return nil
		case c == '\\':
			p.pos += 2
		case c < 0x20:
			return p.errorf("control character in string")
		default:
			p.pos++
		}
	}
	return p.errorf("unterminated string")
}

func (p *parser) literal(word string, kind byte) (*node, error) {
	if len(p.doc)-p.pos < len(word) || string(p.doc[p.pos:p.pos+len(word)]) != word {
		return nil, p.errorf("expected %s", word)
	}
	n := &node{kind: kind, start: p.pos, end: p.pos + len(word)}
	p.pos += len(word)
	return n, nil
}

func (p *parser) number() (*node, error) {
	start := p.pos
	for p.pos < len(p.doc) {
		c := p.doc[p.pos]
		if (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' {
			p.pos++
			continue
		}
		break
	}
	if !json.Valid(p.doc[start:p.pos]) {
		return nil, p.errorf("bad number %q", p.doc[start:p.pos])
	}
	return &node{kind: 'n', start: start, end: p.pos}, nil
}
