package props

import (
	"fmt"
	"maps"
	"math"
	"slices"
)

// RuntimeKeys are the keys of Debezium's shared configuration that cdcd's runtime (connect/) honours for
// every connector, whatever its database:
//
//   - errors.max.retries: how many consecutive retries after retriable errors (a lost connection) the
//     task makes before it is FAILED; -1, the default, retries forever, 0 fails at the first error.
//   - connection.validation.timeout.ms: how long validation's connection check (Debezium's
//     validateConnection, run on create, config change and validate) waits for the database.
//   - max.batch.size: the most events one batch handed to the producer holds (Debezium's records per
//     poll): a larger transaction is passed on in several batches, whose offset is recorded with the last.
//     Under exactly-once delivery with transaction.boundary=poll, each batch is one Kafka transaction, as
//     each poll is in Connect.
//   - max.queue.size: the most events read ahead of the producer. cdcd holds one batch ahead, so a
//     max.batch.size below max.queue.size (which Debezium requires, and so does cdcd) bounds it.
//
// A connector's parse reads them with ReadRuntimeKeys, so that a wrong value is refused on its key.
var RuntimeKeys = []string{"errors.max.retries", "connection.validation.timeout.ms", "max.batch.size", "max.queue.size"}

// DefaultMaxBatchSize is Debezium's max.batch.size.
const DefaultMaxBatchSize = 2048

// ReadRuntimeKeys checks the RuntimeKeys' values in p; the runtime reads them from the config itself. It
// also reads the tuning keys whose job cdcd does without them (TuningNotes), and returns a note on each
// set one, saying why it changes nothing.
func ReadRuntimeKeys(p *Parser) []string {
	p.Integer("errors.max.retries", -1, -1, math.MaxInt32)
	p.Integer("connection.validation.timeout.ms", 60000, 1, math.MaxInt32)
	batch := p.Integer("max.batch.size", DefaultMaxBatchSize, 1, math.MaxInt32)
	if queue := p.Integer("max.queue.size", 8192, 1, math.MaxInt32); queue <= batch {
		v, _ := p.Raw("max.queue.size")
		p.Fail("max.queue.size", v, fmt.Sprintf("Must be larger than the maximum batch size (max.batch.size=%d), as Debezium requires", batch))
	}
	p.Integer("max.queue.size.in.bytes", 0, 0, math.MaxInt32)
	p.Integer("poll.interval.ms", 500, 0, math.MaxInt32)
	p.Integer("query.fetch.size", 0, 0, math.MaxInt32)
	p.Boolean("internal.advanced.metrics.enable", false)
	return TuningNotes.Notes(p)
}

// NoEffectKeys are keys cdcd accepts without acting on them: key → why it changes nothing in cdcd.
type NoEffectKeys map[string]string

// Notes returns one line for each key of k that p's config sets, saying it changes nothing and why, in key
// order.
func (k NoEffectKeys) Notes(p *Parser) []string {
	var notes []string
	for _, key := range slices.Sorted(maps.Keys(k)) {
		if v, set := p.Raw(key); set {
			notes = append(notes, fmt.Sprintf("%s=%s changes nothing in cdcd: %s", key, v, k[key]))
		}
	}
	return notes
}

// TuningNotes are Debezium's tuning keys whose job cdcd does without them.
var TuningNotes = NoEffectKeys{
	"internal.advanced.metrics.enable": "it adds Debezium's per-table JMX metrics; cdcd's metrics are its own (see the README's Metrics), and the events are the same either way",
	"max.queue.size.in.bytes":          "cdcd holds one batch (at most max.batch.size events) ahead of the producer, never a queue of them; lower max.batch.size to hold less",
	"poll.interval.ms":                 "cdcd passes each batch on as the database commits it, never waiting for a batch to fill or polling an empty queue",
	"query.fetch.size":                 "Debezium's PostgreSQL, MySQL and MariaDB connectors do not read it either (snapshot.fetch.size sets the snapshot's fetch)",
}
