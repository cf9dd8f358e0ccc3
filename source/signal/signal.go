// Package signal is Debezium's signalling as cdcd's readers share it: the signals (execute-snapshot,
// stop-snapshot, pause-snapshot, resume-snapshot, log, and the incremental snapshot's watermarks), the
// channels they arrive on (the signal table, a file, a Kafka topic, cdcd's REST endpoint) and their settings.
//
// A reader owns what a signal does; this package only says what a signal is and brings the signals of the
// channels outside the database to the reader's Queue. Nothing here blocks except PollFile, which reads a
// small file, and the kafka channel's ReadKafka, which runs on a goroutine of its own (StartKafka) and
// waits on its KafkaConsumer and for room in the Queue.
package signal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/cdcd/cdcd/source/signal/sqlfilter"
)

// The signal types Debezium defines for relational connectors.
const (
	ExecuteSnapshot = "execute-snapshot"
	StopSnapshot    = "stop-snapshot"
	PauseSnapshot   = "pause-snapshot"
	ResumeSnapshot  = "resume-snapshot"
	Log             = "log"
	// SetBinlogPosition is the MySQL and MariaDB connectors' own: stream from the binlog position or GTID
	// set in its data.
	SetBinlogPosition = "set-binlog-position"
	// OpenWindow and CloseWindow are the watermarks an incremental snapshot writes into the signal table
	// around each chunk it reads (Debezium's snapshot-window-open and snapshot-window-close).
	OpenWindow  = "snapshot-window-open"
	CloseWindow = "snapshot-window-close"
)

// Signal is one signal as every channel carries it: Debezium's SignalRecord without the channel's
// additional data. Data is the JSON document of the signal's parameters ("" when it has none).
type Signal struct {
	ID   string `json:"id"`
	Type string `json:"type"`
	Data string `json:"data"`
	// Channel is the channel the signal came on when it matters to what is done with it: ChannelKafka's
	// signals are acted on each time they are read, as Debezium acts on them (the consumer's committed
	// offset, not the id, keeps one from being read twice), and may have no id. "" for the others.
	Channel string `json:"-"`
}

// Parse reads a signal written as a JSON document {"id", "type", "data"} (a signal file's line, the body
// of POST /connectors/{name}/signals). data may be a JSON object or a string holding one.
func Parse(doc []byte) (Signal, error) {
	var raw struct {
		ID   string          `json:"id"`
		Type string          `json:"type"`
		Data json.RawMessage `json:"data"`
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return Signal{}, fmt.Errorf("a signal is a JSON object {\"id\", \"type\", \"data\"}: %w", err)
	}
	s := Signal{ID: raw.ID, Type: raw.Type}
	switch d := bytes.TrimSpace(raw.Data); {
	case len(d) == 0 || string(d) == "null":
	case d[0] == '"':
		if err := json.Unmarshal(d, &s.Data); err != nil {
			return Signal{}, fmt.Errorf("signal data: %w", err)
		}
	default:
		s.Data = string(d)
	}
	if s.ID == "" || s.Type == "" {
		return Signal{}, errors.New(`a signal needs an "id" and a "type"`)
	}
	return s, nil
}

// Snapshot types of execute-snapshot and stop-snapshot, upper-cased as Debezium compares them.
const (
	Incremental = "INCREMENTAL"
	Blocking    = "BLOCKING"
)

// SnapshotRequest is the data of an execute-snapshot or stop-snapshot signal.
type SnapshotRequest struct {
	// DataCollections are regular expressions matched against whole table names (schema.table); for
	// stop-snapshot, empty means every table.
	DataCollections []string
	Type            string // Incremental or Blocking
	// AdditionalConditions are WHERE conditions for the tables their expression matches.
	AdditionalConditions []AdditionalCondition
	SurrogateKey         string // a column to chunk by instead of the primary key; "" for the key
}

// AdditionalCondition is one entry of execute-snapshot's additional-conditions.
type AdditionalCondition struct {
	DataCollection *regexp.Regexp
	Filter         string
}

// ParseSnapshotRequest reads the data of an execute-snapshot (or, with stop, a stop-snapshot) signal as
// Debezium's ExecuteSnapshot and StopSnapshot actions do: type defaults to incremental, data-collections
// is required to start a snapshot.
func ParseSnapshotRequest(data string, stop bool) (SnapshotRequest, error) {
	var raw struct {
		DataCollections      []string `json:"data-collections"`
		Type                 string   `json:"type"`
		AdditionalConditions []struct {
			DataCollection string `json:"data-collection"`
			Filter         string `json:"filter"`
		} `json:"additional-conditions"`
		SurrogateKey string `json:"surrogate-key"`
	}
	if strings.TrimSpace(data) != "" {
		if err := json.Unmarshal([]byte(data), &raw); err != nil {
			return SnapshotRequest{}, fmt.Errorf("signal data %q: %w", data, err)
		}
	}
	req := SnapshotRequest{Type: strings.ToUpper(strings.TrimSpace(raw.Type)), SurrogateKey: raw.SurrogateKey}
	if req.Type == "" {
		req.Type = Incremental
	}
	if req.Type != Incremental && req.Type != Blocking {
		return SnapshotRequest{}, fmt.Errorf(`signal data: snapshot type %q: use "incremental" or "blocking"`, raw.Type)
	}
	for _, dc := range raw.DataCollections {
		if dc = strings.TrimSpace(dc); dc != "" {
			req.DataCollections = append(req.DataCollections, dc)
		}
	}
	if !stop && len(req.DataCollections) == 0 {
		return SnapshotRequest{}, errors.New(`signal data: "data-collections" names no table to snapshot`)
	}
	for _, c := range raw.AdditionalConditions {
		re, err := regexp.Compile(`^(?:` + c.DataCollection + `)$`)
		if err != nil {
			return SnapshotRequest{}, fmt.Errorf("signal data: additional-conditions data-collection %q: %w", c.DataCollection, err)
		}
		req.AdditionalConditions = append(req.AdditionalConditions, AdditionalCondition{DataCollection: re, Filter: c.Filter})
	}
	return req, nil
}

// Expand turns the request's data-collections into the tables of known they name, in the order the
// expressions list them, each once: an expression names a table it equals or matches as a whole (as
// Debezium's expandDataCollectionIds). An expression that names no known table is reported in unknown.
func (r SnapshotRequest) Expand(known []string) (tables, unknown []string, err error) {
	seen := map[string]bool{}
	for _, expr := range r.DataCollections {
		re, err := regexp.Compile(`^(?:` + expr + `)$`)
		if err != nil {
			return nil, nil, fmt.Errorf("signal data: data-collections %q: %w", expr, err)
		}
		matched := false
		for _, t := range known {
			if t == expr || re.MatchString(t) {
				matched = true
				if !seen[t] {
					seen[t] = true
					tables = append(tables, t)
				}
			}
		}
		if !matched {
			unknown = append(unknown, expr)
		}
	}
	return tables, unknown, nil
}

// CheckFilters refuses the request unless every additional-conditions filter is a condition sqlfilter
// accepts in dialect d. Its columns are checked when a table's query is built (sqlfilter.Render).
func (r SnapshotRequest) CheckFilters(d sqlfilter.Dialect) error {
	for _, c := range r.AdditionalConditions {
		if _, err := sqlfilter.Parse(c.Filter, d); err != nil {
			return fmt.Errorf("signal data: additional-conditions of %q: %w", c.DataCollection.String(), err)
		}
	}
	return nil
}

// ConditionFor is the additional condition of table ("" when none matches): the first that matches.
func (r SnapshotRequest) ConditionFor(table string) string {
	for _, c := range r.AdditionalConditions {
		if c.DataCollection.MatchString(table) {
			return c.Filter
		}
	}
	return ""
}

// LogMessage is the message of a log signal's data ({"message": "…"}).
func LogMessage(data string) (string, error) {
	var raw struct {
		Message string `json:"message"`
	}
	if err := json.Unmarshal([]byte(data), &raw); err != nil || raw.Message == "" {
		return "", fmt.Errorf(`log signal data %q: want {"message": "…"}`, data)
	}
	return raw.Message, nil
}
