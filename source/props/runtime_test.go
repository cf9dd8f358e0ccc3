package props

import (
	"strings"
	"testing"
)

// The tuning keys are read, not refused: max.batch.size and max.queue.size as the runtime honours them
// (the queue larger than the batch, as Debezium requires), the others with a note saying why they change
// nothing in cdcd.
func TestReadRuntimeKeysTuning(t *testing.T) {
	p := NewParser(map[string]string{"max.batch.size": "4096", "max.queue.size": "16384", "max.queue.size.in.bytes": "104857600",
		"poll.interval.ms": "100", "query.fetch.size": "10000"})
	notes := ReadRuntimeKeys(p)
	if err := p.Err(); err != nil {
		t.Fatal(err)
	}
	if len(notes) != 3 || !strings.HasPrefix(notes[0], "max.queue.size.in.bytes=104857600 changes nothing in cdcd") ||
		!strings.HasPrefix(notes[1], "poll.interval.ms=100") || !strings.HasPrefix(notes[2], "query.fetch.size=10000") ||
		(NoEffectKeys{"internal.advanced.metrics.enable": "x"}).Notes(p) != nil {
		t.Errorf("notes %q, want one per set tuning key cdcd does without", notes)
	}
	for _, key := range []string{"max.batch.size", "max.queue.size", "poll.interval.ms"} {
		if !p.Read(key) {
			t.Errorf("%s not read", key)
		}
	}

	p = NewParser(map[string]string{"max.batch.size": "10000"})
	ReadRuntimeKeys(p)
	if err := p.Err(); err == nil || !strings.Contains(err.Error(), "max.queue.size") || !strings.Contains(err.Error(), "max.batch.size=10000") {
		t.Errorf("a batch larger than the default queue: %v, want max.queue.size refused naming the batch size", err)
	}
}
