package connect

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"slices"

	"github.com/cdcd/cdcd/connect/offsets"
)

// ConnectorOffsets returns the connector's offsets from the offsets file.
func (w *Worker) ConnectorOffsets(name string) (ConnectorOffsets, error) {
	if _, ok := w.lookup(name); !ok {
		return ConnectorOffsets{}, connectorNotFound(name)
	}
	return storedOffsets(w.offsets, name), nil
}

// storedOffsets lists the connector's partitions and offsets in store; a partition known without an
// offset (see offsetStore.Entries) has a null one, as Connect lists it.
func storedOffsets(store offsetStore, name string) ConnectorOffsets {
	out := ConnectorOffsets{Offsets: []ConnectorOffset{}}
	for _, e := range store.Entries() {
		partition, ok := partitionOf(e.Key, name)
		if !ok {
			continue
		}
		offset := json.RawMessage(e.Value)
		if e.Value == nil {
			offset = json.RawMessage("null")
		}
		out.Offsets = append(out.Offsets, ConnectorOffset{Partition: partition, Offset: offset})
	}
	return out
}

// partitionOf returns the partition JSON of an offset key if the key belongs to connector name.
func partitionOf(key []byte, name string) (json.RawMessage, bool) {
	var parts []json.RawMessage
	if err := json.Unmarshal(key, &parts); err != nil || len(parts) != 2 {
		return nil, false
	}
	var connector string
	if err := json.Unmarshal(parts[0], &connector); err != nil || connector != name {
		return nil, false
	}
	return parts[1], true
}

// Messages Connect answers a successful offsets change with, for connectors (like Debezium's) that do not
// manage offsets themselves.
const (
	OffsetsAlteredMessage = "The Connect framework-managed offsets for this connector have been altered successfully. However, if this connector manages offsets externally, they will need to be manually altered in the system that the connector uses."
	OffsetsResetMessage   = "The Connect framework-managed offsets for this connector have been reset successfully. However, if this connector manages offsets externally, they will need to be manually reset in the system that the connector uses."
)

// checkStopped checks that the connector exists and is STOPPED. Callers hold its operation lock (ops).
func (w *Worker) checkStopped(name string) error {
	c, ok := w.lookup(name)
	if !ok {
		return connectorNotFound(name)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if c.target != TargetStopped || c.task != nil {
		return notStoppedError(name)
	}
	return nil
}

func notStoppedError(name string) error {
	return &RequestError{Kind: BadRequest, Message: "Connectors must be in the STOPPED state before their offsets can be modified. This can be done for the specified connector by issuing a 'PUT' request to the '/connectors/" + name + "/stop' endpoint"}
}

// AlterConnectorOffsets writes the given offsets (a null offset erases its partition's) for a STOPPED
// connector, and returns Connect's message.
func (w *Worker) AlterConnectorOffsets(name string, changes []ConnectorOffset) (string, error) {
	defer w.ops.lock(name)()
	if err := w.checkStopped(name); err != nil {
		return "", err
	}
	return alterOffsets(w.offsets, name, changes)
}

// alterOffsets writes offset changes to a connector's store (see Worker.offsetsFor) once its tasks are
// known to be stopped.
func alterOffsets(store offsetStore, name string, changes []ConnectorOffset) (string, error) {
	entries := make([]offsets.Entry, 0, len(changes))
	for _, ch := range changes {
		partition, err := primitiveFields(ch.Partition, "Partitions")
		if err != nil {
			return "", err
		}
		offset, err := primitiveFields(ch.Offset, "Offsets")
		if err != nil {
			return "", err
		}
		var pmap map[string]any
		if partition != nil {
			pmap = partition.Map()
		}
		key, err := offsets.Key(name, pmap)
		if err != nil {
			return "", &RequestError{Kind: ServerError, Message: err.Error()}
		}
		value, err := offsets.EncodeValue(offset)
		if err != nil {
			return "", &RequestError{Kind: ServerError, Message: err.Error()}
		}
		entries = append(entries, offsets.Entry{Key: key, Value: value})
	}
	if err := store.Put(context.Background(), entries); err != nil {
		return "", &RequestError{Kind: ServerError, Message: err.Error()}
	}
	return OffsetsAlteredMessage, nil
}

// primitiveFields decodes a partition or offset JSON object (or null) keeping its field order, refusing
// nested values with OffsetUtils.validateFormat's message.
func primitiveFields(raw json.RawMessage, what string) (offsets.Fields, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil, nil
	}
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(raw, &probe); err != nil {
		return nil, &RequestError{Kind: ServerError, Message: what + " must be specified as a Map"}
	}
	for _, k := range slices.Sorted(maps.Keys(probe)) {
		switch v := bytes.TrimSpace(probe[k]); {
		case len(v) > 0 && v[0] == '[':
			return nil, &RequestError{Kind: ServerError, Message: what + " may only contain primitive types as values, but field " + k + " contains ARRAY"}
		case len(v) > 0 && v[0] == '{':
			return nil, &RequestError{Kind: ServerError, Message: what + " may only contain primitive types as values, but field " + k + " contains MAP"}
		}
	}
	fields, err := offsets.DecodeValue(raw)
	if err != nil {
		return nil, &RequestError{Kind: ServerError, Message: err.Error()}
	}
	return fields, nil
}

// ResetConnectorOffsets erases every offset of a STOPPED connector (tombstones in the offsets file), and
// returns Connect's message.
func (w *Worker) ResetConnectorOffsets(name string) (string, error) {
	defer w.ops.lock(name)()
	if err := w.checkStopped(name); err != nil {
		return "", err
	}
	return resetOffsets(w.offsets, name)
}

// resetOffsets erases every offset of a connector in its store (see Worker.offsetsFor) once its tasks are
// known to be stopped: a tombstone for each partition the store lists, Connect's reset.
func resetOffsets(store offsetStore, name string) (string, error) {
	var entries []offsets.Entry
	for _, e := range store.Entries() {
		if _, ok := partitionOf(e.Key, name); ok {
			entries = append(entries, offsets.Entry{Key: e.Key})
		}
	}
	if err := store.Put(context.Background(), entries); err != nil {
		return "", &RequestError{Kind: ServerError, Message: err.Error()}
	}
	return OffsetsResetMessage, nil
}
