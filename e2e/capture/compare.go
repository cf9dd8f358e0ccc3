package capture

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"sort"
	"strconv"
	"strings"
)

// Mode says which fields two captures may legitimately disagree on.
type Mode int

const (
	// SameDB compares two captures of one database (e.g. two slots reading the same WAL): only processing
	// times, the connector version and the snapshot's own time and position may differ.
	SameDB Mode = iota
	// Replay compares a capture with one taken on a fresh database replaying the same SQL (the goldens):
	// additionally every database time and position (LSNs, xids, transaction ids, offset positions).
	Replay
)

// ParseMode accepts "same-db" and "replay".
func ParseMode(s string) (Mode, error) {
	switch s {
	case "same-db":
		return SameDB, nil
	case "replay":
		return Replay, nil
	}
	return 0, fmt.Errorf("unknown compare mode %q (want same-db or replay)", s)
}

// OffsetsTopic is the topic name given to Connect offset entries (see ReadOffsetsJSON); records of this
// topic are compared as offsets, whose position fields are blanked in Replay mode.
const OffsetsTopic = "connect-offsets"

// blanked replaces every blanked field's bytes on both sides, so they compare equal whatever they held.
const blanked = `"<blanked>"`

// Difference is one disagreement between two captures.
type Difference struct {
	Where  string // "topic#index", or just the topic
	Path   string // JSON path such as value.payload.after.x; empty for record-level differences
	Detail string // "A != B" or a sentence
}

func (d Difference) String() string {
	if d.Path == "" {
		return d.Where + ": " + d.Detail
	}
	return d.Where + " " + d.Path + ": " + d.Detail
}

// Compare compares captures a and b topic by topic, record by record in order: keys, values and header
// values byte for byte after blanking what mode allows to differ. Kafka timestamps, partitions and offsets
// are not compared. The result is empty when the captures match.
func Compare(a, b []Record, mode Mode) []Difference {
	byTopicA, byTopicB := groupByTopic(a), groupByTopic(b)
	var diffs []Difference
	for _, topic := range unionKeys(byTopicA, byTopicB) {
		ra, rb := byTopicA[topic], byTopicB[topic]
		if len(ra) != len(rb) {
			diffs = append(diffs, Difference{Where: topic, Detail: fmt.Sprintf("%d records != %d records", len(ra), len(rb))})
		}
		for i := 0; i < len(ra) || i < len(rb); i++ {
			where := topic + "#" + strconv.Itoa(i)
			switch {
			case i >= len(rb):
				diffs = append(diffs, Difference{Where: where, Detail: fmt.Sprintf("only in A (partition %d offset %d)", ra[i].Partition, ra[i].Offset)})
			case i >= len(ra):
				diffs = append(diffs, Difference{Where: where, Detail: fmt.Sprintf("only in B (partition %d offset %d)", rb[i].Partition, rb[i].Offset)})
			default:
				diffs = append(diffs, compareRecord(where, ra[i], rb[i], mode)...)
			}
		}
	}
	return diffs
}

func groupByTopic(records []Record) map[string][]Record {
	sorted := append([]Record(nil), records...)
	SortRecords(sorted)
	out := map[string][]Record{}
	for _, r := range sorted {
		out[r.Topic] = append(out[r.Topic], r)
	}
	return out
}

func unionKeys[V any](a, b map[string]V) []string {
	seen := map[string]bool{}
	for k := range a {
		seen[k] = true
	}
	for k := range b {
		seen[k] = true
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func compareRecord(where string, a, b Record, mode Mode) []Difference {
	rules := envelopeRules
	if a.Topic == OffsetsTopic {
		rules = offsetRules
	}
	var keyRule blankRule
	if randomKey(a.Value) && randomKey(b.Value) {
		keyRule = func(_ []byte, payload *node) []*node {
			if id := payload.get("id"); id != nil {
				return []*node{id}
			}
			return nil
		}
	}
	if a.Topic == OffsetsTopic || isTransactionValue(a.Value) {
		a.Value, b.Value = normaliseMessageCollections(a.Value), normaliseMessageCollections(b.Value)
	}
	if isTransactionValue(a.Value) {
		rules, keyRule = transactionRules, transactionKeyRules(mode)
	}
	diffs := compareDocument(where, "key", a.Key, b.Key, keyRule)
	diffs = append(diffs, compareNotificationData(where, a.Value, b.Value)...)
	diffs = append(diffs, compareDocument(where, "value", a.Value, b.Value, func(raw []byte, payload *node) []*node {
		return rules(raw, payload, mode)
	})...)
	if len(a.Headers) != len(b.Headers) {
		diffs = append(diffs, Difference{Where: where, Path: "headers", Detail: fmt.Sprintf("%d headers != %d headers", len(a.Headers), len(b.Headers))})
	}
	for i := 0; i < len(a.Headers) && i < len(b.Headers); i++ {
		ha, hb := a.Headers[i], b.Headers[i]
		path := fmt.Sprintf("headers[%d]", i)
		if ha.Key != hb.Key {
			diffs = append(diffs, Difference{Where: where, Path: path + ".key", Detail: strconv.Quote(ha.Key) + " != " + strconv.Quote(hb.Key)})
		}
		if ha.Key == hb.Key && runScopedHeaders[ha.Key] {
			continue
		}
		diffs = append(diffs, compareDocument(where, path+"("+ha.Key+")", ha.Value, hb.Value, nil)...)
	}
	return diffs
}

// runScopedHeaders are headers whose value is new for every connector run (Debezium 3's context headers
// carry a random run id); only their presence and position are compared.
var runScopedHeaders = map[string]bool{"__debezium.context.runId": true}

// blankRule picks, within a document's payload, the nodes to blank; raw is the document's text.
type blankRule func(raw []byte, payload *node) []*node

// envelopeRules covers Debezium change events, PG logical-message events and heartbeats. payload is the
// document root with schemas off, or the "payload" member of a {"schema","payload"} document.
func envelopeRules(raw []byte, payload *node, mode Mode) []*node {
	var out []*node
	pick := func(parent *node, names ...string) {
		for _, name := range names {
			if n := parent.get(name); n != nil {
				out = append(out, n)
			}
		}
	}
	isEnvelope := payload.get("op") != nil || payload.get("ddl") != nil // a change event or a binlog schema change
	isHeartbeat := len(payload.keys) == 1 && payload.keys[0] == "ts_ms"
	if isEnvelope || isHeartbeat {
		pick(payload, "ts_ms", "ts_us", "ts_ns") // processing time
	}
	if isNotification(payload) {
		// additional_data is compared as a map (compareNotificationData): Debezium copies a Map.of, whose
		// iteration order is salted per JVM, into a HashMap, so keys sharing a bucket come in either order.
		pick(payload, "timestamp", "additional_data")
		if randomNotificationID(raw, payload) {
			pick(payload, "id")
		}
		return out
	}
	source := payload.get("source")
	if source == nil || source.kind != '{' {
		// A record flattened by ExtractNewRecordState carries the source and envelope fields it was asked
		// to add under add.fields' prefix (__lsn, __source_ts_ms, __ts_ms…): blank those as the envelope's.
		pick(payload, unwrappedBlanks[mode]...)
		return out
	}
	pick(source, "version")
	if after := payload.get("after"); after != nil && after.kind == '{' && watermarkType(raw, after) {
		pick(after, "id", "data") // a random chunk id and the window's times
	}
	if mode == Replay || inSnapshot(raw, source) {
		pick(source, "ts_ms", "ts_us", "ts_ns", "lsn", "txId", "sequence", "xmin", "file", "pos", "gtid")
	}
	if mode == Replay {
		if tx := payload.get("transaction"); tx != nil {
			pick(tx, "id")
		}
	}
	return out
}

// unwrappedBlanks are the fields ExtractNewRecordState's add.fields (default prefix "__") copies from what
// envelopeRules blanks: the processing time always, the database's positions and times in Replay mode.
var unwrappedBlanks = map[Mode][]string{
	SameDB: {"__ts_ms", "__ts_us", "__ts_ns"},
	Replay: {"__ts_ms", "__ts_us", "__ts_ns", "__source_ts_ms", "__source_ts_us", "__source_ts_ns",
		"__lsn", "__txId", "__sequence", "__xmin", "__source_lsn", "__source_txId", "__source_sequence", "__source_xmin"},
}

// isNotification reports whether payload is one of Debezium's notifications (a record of
// notification.sink.topic.name).
func isNotification(payload *node) bool {
	return payload.get("aggregate_type") != nil && payload.get("additional_data") != nil && payload.get("timestamp") != nil
}

// compareNotificationData compares the additional_data of two notifications as maps.
func compareNotificationData(where string, a, b Bytes) []Difference {
	data := func(value Bytes) (map[string]string, bool) {
		var doc struct {
			Payload *struct {
				AggregateType  *string           `json:"aggregate_type"`
				AdditionalData map[string]string `json:"additional_data"`
			} `json:"payload"`
			AggregateType  *string           `json:"aggregate_type"`
			AdditionalData map[string]string `json:"additional_data"`
		}
		if json.Unmarshal(value, &doc) != nil {
			return nil, false
		}
		if doc.Payload != nil {
			return doc.Payload.AdditionalData, doc.Payload.AggregateType != nil
		}
		return doc.AdditionalData, doc.AggregateType != nil
	}
	da, okA := data(a)
	db, okB := data(b)
	if !okA || !okB || maps.Equal(da, db) {
		return nil
	}
	return []Difference{{Where: where, Path: "value.payload.additional_data", Detail: fmt.Sprintf("%v != %v", da, db)}}
}

// randomNotificationID reports whether a notification's id is random: all but an incremental
// snapshot's, whose id is its signal's.
func randomNotificationID(raw []byte, payload *node) bool {
	kind := payload.get("aggregate_type")
	return kind != nil && string(raw[kind.start:kind.end]) != `"Incremental Snapshot"`
}

// watermarkType reports whether a signal table row (after) is an incremental snapshot's watermark.
func watermarkType(raw []byte, after *node) bool {
	t := after.get("type")
	if t == nil {
		return false
	}
	switch string(raw[t.start:t.end]) {
	case `"snapshot-window-open"`, `"snapshot-window-close"`:
		return true
	}
	return false
}

// randomKey reports whether a record's key is new in every run: the id of an incremental snapshot's
// watermark row, or of a notification with a random id.
func randomKey(value Bytes) bool {
	doc, err := parseJSON(value)
	if err != nil {
		return false
	}
	payload := payloadOf(doc)
	if payload.kind != '{' {
		return false
	}
	if isNotification(payload) {
		return randomNotificationID(value, payload)
	}
	after := payload.get("after")
	return after != nil && after.kind == '{' && watermarkType(value, after)
}

// inSnapshot reports whether a source block belongs to a snapshot row (snapshot set and not "false").
func inSnapshot(raw []byte, source *node) bool {
	s := source.get("snapshot")
	return s != nil && s.kind != 'z' && string(raw[s.start:s.end]) != `"false"`
}

// offsetRules covers Connect offset values (PostgreSQL and binlog): positions differ on a replayed database.
func offsetRules(_ []byte, payload *node, mode Mode) []*node {
	if mode != Replay {
		return nil
	}
	var out []*node
	for _, name := range []string{"lsn", "lsn_proc", "lsn_commit", "txId", "ts_usec", "transaction_id", "file", "pos", "gtids", "ts_sec", "event", "row"} {
		if n := payload.get(name); n != nil {
			out = append(out, n)
		}
	}
	return out
}

// compareDocument compares one key, value or header value. JSON documents are blanked in place and
// diffed by path; anything else is compared as raw bytes.
func compareDocument(where, name string, a, b Bytes, rule blankRule) []Difference {
	if a == nil || b == nil {
		if (a == nil) != (b == nil) {
			return []Difference{{Where: where, Path: name, Detail: preview(a) + " != " + preview(b)}}
		}
		return nil
	}
	docA, errA := parseJSON(a)
	docB, errB := parseJSON(b)
	if errA != nil || errB != nil {
		if !bytes.Equal(a, b) {
			return []Difference{{Where: where, Path: name, Detail: preview(a) + " != " + preview(b)}}
		}
		return nil
	}
	blankA, blankB := blank(a, docA, rule), blank(b, docB, rule)
	if bytes.Equal(blankA, blankB) {
		return nil
	}
	// Re-parse the blanked bytes so node spans refer to them, then walk both trees for readable paths.
	docA, errA = parseJSON(blankA)
	docB, errB = parseJSON(blankB)
	if errA != nil || errB != nil {
		return []Difference{{Where: where, Path: name, Detail: fmt.Sprintf("blanking broke the document: %v / %v", errA, errB)}}
	}
	d := differ{where: where, a: blankA, b: blankB}
	d.walk(name, docA, docB)
	if len(d.diffs) == 0 {
		// Same tree, same leaf bytes: only the whitespace between tokens differs.
		at := firstDifference(blankA, blankB)
		d.diffs = append(d.diffs, Difference{Where: where, Path: name, Detail: fmt.Sprintf("formatting differs at byte %d", at)})
	}
	return d.diffs
}

// payloadOf returns the "payload" member of a JsonConverter {"schema":…,"payload":…} document, else the root.
func payloadOf(doc *node) *node {
	if doc.kind == '{' && len(doc.keys) == 2 && doc.keys[0] == "schema" && doc.keys[1] == "payload" {
		return doc.children[1]
	}
	return doc
}

// blank returns raw with every node chosen by rule replaced by the blanked token; the rest is untouched.
func blank(raw []byte, doc *node, rule blankRule) []byte {
	if rule == nil {
		return raw
	}
	payload := payloadOf(doc)
	if payload.kind != '{' {
		return raw
	}
	targets := rule(raw, payload)
	if len(targets) == 0 {
		return raw
	}
	sort.Slice(targets, func(i, j int) bool { return targets[i].start < targets[j].start })
	out := make([]byte, 0, len(raw))
	pos := 0
	for _, t := range targets {
		out = append(out, raw[pos:t.start]...)
		out = append(out, blanked...)
		pos = t.end
	}
	return append(out, raw[pos:]...)
}

type differ struct {
	where string
	a, b  []byte
	diffs []Difference
}

func (d *differ) add(path, detail string) {
	d.diffs = append(d.diffs, Difference{Where: d.where, Path: path, Detail: detail})
}

func (d *differ) walk(path string, a, b *node) {
	textA, textB := d.a[a.start:a.end], d.b[b.start:b.end]
	switch {
	case a.kind != b.kind || (a.kind != '{' && a.kind != '['):
		if !bytes.Equal(textA, textB) {
			d.add(path, preview(textA)+" != "+preview(textB))
		}
	case a.kind == '[':
		if len(a.children) != len(b.children) {
			d.add(path, fmt.Sprintf("%d elements != %d elements", len(a.children), len(b.children)))
		}
		for i := 0; i < len(a.children) && i < len(b.children); i++ {
			d.walk(fmt.Sprintf("%s[%d]", path, i), a.children[i], b.children[i])
		}
	default:
		d.walkObject(path, a, b)
	}
}

func (d *differ) walkObject(path string, a, b *node) {
	for i, k := range a.keys {
		if b.get(k) == nil {
			d.add(path+"."+k, "only in A: "+preview(d.a[a.children[i].start:a.children[i].end]))
		}
	}
	for i, k := range b.keys {
		if a.get(k) == nil {
			d.add(path+"."+k, "only in B: "+preview(d.b[b.children[i].start:b.children[i].end]))
		}
	}
	if commonOrder(a.keys, b) != commonOrder(b.keys, a) {
		d.add(path, "key order ["+strings.Join(a.keys, ",")+"] != ["+strings.Join(b.keys, ",")+"]")
	}
	for i, k := range a.keys {
		if other := b.get(k); other != nil {
			d.walk(path+"."+k, a.children[i], other)
		}
	}
}

// commonOrder lists the keys that also exist in other, in the order given.
func commonOrder(keys []string, other *node) string {
	var kept []string
	for _, k := range keys {
		if other.get(k) != nil {
			kept = append(kept, k)
		}
	}
	return strings.Join(kept, "\x00")
}

// preview shows a value for a difference line, shortened so one field cannot flood the report.
func preview(b []byte) string {
	if b == nil {
		return "null"
	}
	const limit = 200
	s := string(b)
	if len(s) > limit {
		return s[:limit] + fmt.Sprintf("…(%d bytes)", len(s))
	}
	return s
}

func firstDifference(a, b []byte) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
