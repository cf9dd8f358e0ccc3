package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
)

// record is one Kafka record as the demo consumer hands it to the console.
type record struct {
	Topic   string
	Key     []byte
	Value   []byte // nil for a tombstone
	Headers []header
}

type header struct {
	Key   string
	Value []byte
}

// console is the demo's only writer to stdout: events arrive from the consumer goroutine while
// the workload goroutine echoes its SQL, so every line is written whole under one lock.
type console struct {
	mu    sync.Mutex
	w     io.Writer
	color bool
}

// ANSI styles, used only when stdout is a terminal.
const (
	styleReset  = "\x1b[0m"
	styleDim    = "\x1b[2m"
	styleGreen  = "\x1b[32m"
	styleYellow = "\x1b[33m"
	styleRed    = "\x1b[31m"
	styleCyan   = "\x1b[36m"
)

func (c *console) event(r record) { c.line(formatRecord(r, c.color)) }

// sql echoes a statement the workload is about to run, set apart from events.
func (c *console) sql(stmt string) { c.line(c.paint(styleDim, "sql> "+stmt)) }

// note prints the demo's own progress messages.
func (c *console) note(format string, args ...any) { c.line(fmt.Sprintf(format, args...)) }

func (c *console) line(s string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fmt.Fprintln(c.w, s)
}

func (c *console) paint(style, s string) string { return paint(c.color, style, s) }

func paint(color bool, style, s string) string {
	if !color {
		return s
	}
	return style + s + styleReset
}

// opStyles colours Debezium's op codes: c create, r snapshot read, u update, d delete.
var opStyles = map[string]string{"c": styleGreen, "r": styleCyan, "u": styleYellow, "d": styleRed}

// headerValueMax bounds how much of a header value is shown; Debezium's own headers are short keys.
const headerValueMax = 60

// formatRecord renders one record as a single line:
//
//	TOPIC  key=KEY  OP  BODY  [HEADERS]
//
// BODY is the after image of a create or read, the before image of a delete, and for an update
// with both images only the fields that changed ("…" marks the ones left out). A value that is
// not a Debezium envelope is shown as it is.
func formatRecord(r record, color bool) string {
	var b strings.Builder
	b.WriteString(r.Topic)
	b.WriteString("  key=")
	b.WriteString(orNull(r.Key))
	if r.Value == nil {
		b.WriteString("  ")
		b.WriteString(paint(color, styleDim, "(tombstone)"))
	} else {
		op, body := describeValue(r.Value)
		if op != "" {
			b.WriteString("  ")
			b.WriteString(paint(color, opStyles[op], op))
		}
		b.WriteString("  ")
		b.WriteString(body)
	}
	if headers := formatHeaders(r.Headers); headers != "" {
		b.WriteString("  ")
		b.WriteString(paint(color, styleDim, headers))
	}
	return b.String()
}

func orNull(raw []byte) string {
	if raw == nil {
		return "null"
	}
	return string(raw)
}

// envelope is the part of Debezium's value (JsonConverter, schemas disabled) the demo shows.
type envelope struct {
	Op      string          `json:"op"`
	Before  json.RawMessage `json:"before"`
	After   json.RawMessage `json:"after"`
	Message json.RawMessage `json:"message"`
}

// describeValue returns the op code and the body to print for a record value.
func describeValue(value []byte) (op, body string) {
	var env envelope
	if err := json.Unmarshal(value, &env); err != nil || env.Op == "" {
		return "", string(value)
	}
	before, after := nonNull(env.Before), nonNull(env.After)
	switch {
	case env.Op == "t":
		return env.Op, "(truncate)"
	case env.Op == "m":
		return env.Op, string(env.Message)
	case env.Op == "u" && before != nil && after != nil:
		return env.Op, diffImages(before, after)
	case env.Op == "d":
		return env.Op, orNull(before)
	default:
		return env.Op, orNull(after)
	}
}

// nonNull maps an absent or JSON null image to nil.
func nonNull(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	return raw
}

// diffImages renders "BEFORE → AFTER" with only the fields whose values differ. If either image
// is not an object both are shown whole.
func diffImages(before, after json.RawMessage) string {
	beforeFields, errB := objectFields(before)
	afterFields, errA := objectFields(after)
	if errB != nil || errA != nil {
		return string(before) + " → " + string(after)
	}
	beforeByName := make(map[string]json.RawMessage, len(beforeFields))
	for _, f := range beforeFields {
		beforeByName[f.name] = f.value
	}
	afterNames := make(map[string]bool, len(afterFields))
	var changedBefore, changedAfter []field
	for _, f := range afterFields {
		afterNames[f.name] = true
		old, ok := beforeByName[f.name]
		if ok && bytes.Equal(old, f.value) {
			continue
		}
		if ok {
			changedBefore = append(changedBefore, field{f.name, old})
		}
		changedAfter = append(changedAfter, f)
	}
	for _, f := range beforeFields {
		if !afterNames[f.name] {
			changedBefore = append(changedBefore, f)
		}
	}
	if len(changedBefore) == 0 && len(changedAfter) == 0 {
		return "(no change)"
	}
	return formatFields(changedBefore, len(beforeFields)) + " → " + formatFields(changedAfter, len(afterFields))
}

type field struct {
	name  string
	value json.RawMessage // compacted
}

// objectFields returns a JSON object's fields in their written order, values compacted so that
// equal values compare equal byte for byte.
func objectFields(raw json.RawMessage) ([]field, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("not a JSON object: %s", raw)
	}
	var fields []field
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		name, _ := tok.(string) // object keys are always strings
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil, err
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, value); err != nil {
			return nil, err
		}
		fields = append(fields, field{name, compact.Bytes()})
	}
	return fields, nil
}

// formatFields writes fields as a JSON object, with "…" when the image had more fields than shown.
func formatFields(fields []field, total int) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(f.name) // marshalling a string cannot fail
		b.Write(name)
		b.WriteByte(':')
		b.Write(f.value)
	}
	if len(fields) < total {
		if len(fields) > 0 {
			b.WriteByte(',')
		}
		b.WriteString("…")
	}
	b.WriteByte('}')
	return b.String()
}

// formatHeaders shows headers as [name=value …], dropping Debezium's "__debezium." prefix so that
// the key-change headers read as oldkey=… and newkey=…. The context headers every record carries
// (__debezium.context.*: connector, task, run id) would only repeat themselves and are left out.
func formatHeaders(headers []header) string {
	var parts []string
	for _, h := range headers {
		if strings.HasPrefix(h.Key, "__debezium.context.") {
			continue
		}
		value := string(h.Value)
		if runes := []rune(value); len(runes) > headerValueMax {
			value = string(runes[:headerValueMax]) + "…"
		}
		parts = append(parts, strings.TrimPrefix(h.Key, "__debezium.")+"="+value)
	}
	if len(parts) == 0 {
		return ""
	}
	return "[" + strings.Join(parts, " ") + "]"
}
