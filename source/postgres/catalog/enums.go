package catalog

import (
	"context"
	"fmt"
	"sync"
)

// EnumLabels pins every enum type's labels to the list first read, as Debezium's TypeRegistry keeps the
// types it has read for the life of the task: after ALTER TYPE … ADD VALUE, Debezium's schemas keep the old
// "allowed" list (even for a row holding the new label) until the task restarts. One EnumLabels serves one
// run of a reader (its snapshot, stream and incremental chunks), primed at its start as Debezium primes
// its registry when the task starts; a nil *EnumLabels pins nothing.
type EnumLabels struct {
	mu    sync.Mutex
	byOID map[uint32][]string
}

// NewEnumLabels returns an empty set of pinned labels.
func NewEnumLabels() *EnumLabels { return &EnumLabels{byOID: map[uint32][]string{}} }

// Prime records the labels of every enum type the database has now.
func (e *EnumLabels) Prime(ctx context.Context, q Querier) error {
	rows, err := q.Query(ctx, "SELECT enumtypid, array_agg(enumlabel::text ORDER BY enumsortorder) FROM pg_enum GROUP BY 1")
	if err != nil {
		return fmt.Errorf("reading enum types: %w", err)
	}
	defer rows.Close()
	e.mu.Lock()
	defer e.mu.Unlock()
	for rows.Next() {
		var oid uint32
		var labels []string
		if err := rows.Scan(&oid, &labels); err != nil {
			return fmt.Errorf("reading enum types: %w", err)
		}
		e.byOID[oid] = labels
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("reading enum types: %w", err)
	}
	return nil
}

// Pin gives the enum columns of t (and enum array elements) the labels first read for their type,
// recording those of types not seen before.
func (e *EnumLabels) Pin(t *Table) {
	if e == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, c := range t.Columns {
		if c.Type != nil {
			e.pin(c.Type)
			e.pin(c.Type.Elem)
		}
	}
}

func (e *EnumLabels) pin(ti *TypeInfo) {
	if ti == nil || ti.Kind != 'e' {
		return
	}
	if labels, ok := e.byOID[ti.OID]; ok {
		ti.EnumValues = labels
		return
	}
	e.byOID[ti.OID] = ti.EnumValues
}
