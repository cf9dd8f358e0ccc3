package connect

import (
	"strconv"
	"strings"

	"github.com/cdcd/cdcd/source"
	"github.com/cdcd/cdcd/source/props"
)

// maxBatchSize reads max.batch.size (Debezium's records per poll; the connector's parse refused a bad
// value, see props.RuntimeKeys).
func maxBatchSize(cfg map[string]string) int {
	n, err := strconv.Atoi(strings.TrimSpace(cfg["max.batch.size"]))
	if err != nil || n < 1 {
		return props.DefaultMaxBatchSize
	}
	return n
}

// splitBatch cuts b into batches of at most max events. Every part but the last carries no offset and no
// position, as a reader's own parts of a large transaction do (source.Batch), so the offset is recorded
// only once the whole of b is delivered.
func splitBatch(b source.Batch, max int) []source.Batch {
	if max < 1 || len(b.Events) <= max {
		return []source.Batch{b}
	}
	var parts []source.Batch
	for len(b.Events) > max {
		parts = append(parts, source.Batch{Events: b.Events[:max:max]})
		b.Events = b.Events[max:]
	}
	return append(parts, b)
}
