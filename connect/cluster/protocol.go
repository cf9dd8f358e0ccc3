package cluster

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
)

// Connect's group protocol: protocol type "connect", the incremental cooperative subprotocols
// "sessioned" (header version 2) and "compatible" (version 1), whose member metadata and assignments
// are Kafka's old-style structs (IncrementalCooperativeConnectProtocol, ExtendedAssignment). cdcd
// offers both, sessioned first, as a Java worker with connect.protocol=sessioned does; it does not
// offer the eager "default" protocol, so a group never falls back to stop-the-world rebalances.
const (
	protocolType          = "connect"
	protocolSessioned     = "sessioned"
	protocolCompatible    = "compatible"
	versionCompatible     = int16(1)
	versionSessioned      = int16(2)
	assignmentNoError     = int16(0)
	assignmentConfigError = int16(1) // CONFIG_MISMATCH: the leader could not read the newest configs
)

// ConnectorTask is the task number that stands for a connector instance itself.
const ConnectorTask = -1

// Item is one unit of work: a connector instance (Task == ConnectorTask) or one of its tasks.
type Item struct {
	Connector string
	Task      int
}

// String is Connect's name for the item: "name" for a connector, "name-3" for its task 3.
func (i Item) String() string {
	if i.Task == ConnectorTask {
		return i.Connector
	}
	return i.Connector + "-" + strconv.Itoa(i.Task)
}

// IsConnector says whether the item is a connector instance rather than a task.
func (i Item) IsConnector() bool { return i.Task == ConnectorTask }

func compareItems(a, b Item) int {
	if a.Connector != b.Connector {
		if a.Connector < b.Connector {
			return -1
		}
		return 1
	}
	return a.Task - b.Task
}

// workerMetadata is a member's JoinGroup metadata (ExtendedWorkerState).
type workerMetadata struct {
	URL          string
	ConfigOffset int64
	// Allocation is the member's whole current assignment; nil before its first one.
	Allocation *assignment
}

// assignment is what SyncGroup hands a member (ExtendedAssignment). Assigned holds only the items
// added in this round; a member keeps what it had minus Revoked. In a member's metadata the same
// structure carries its full allocation in Assigned.
type assignment struct {
	Error        int16
	Leader       string // the leader's member id
	LeaderURL    string
	ConfigOffset int64
	Assigned     []Item
	Revoked      []Item
	Delay        int32 // ms until the member should rejoin so that delayed work is handed out
}

func encodeMetadata(version int16, m workerMetadata) []byte {
	b := binary.BigEndian.AppendUint16(nil, uint16(version))
	b = appendString(b, m.URL)
	b = binary.BigEndian.AppendUint64(b, uint64(m.ConfigOffset))
	if m.Allocation == nil {
		return binary.BigEndian.AppendUint32(b, 0xffffffff) // null bytes
	}
	alloc := encodeAssignment(version, *m.Allocation)
	b = binary.BigEndian.AppendUint32(b, uint32(len(alloc)))
	return append(b, alloc...)
}

func decodeMetadata(data []byte) (workerMetadata, error) {
	r := reader{b: data}
	version := r.int16()
	m := workerMetadata{URL: r.string(), ConfigOffset: r.int64()}
	if r.err != nil {
		return workerMetadata{}, fmt.Errorf("connect member metadata: %w", r.err)
	}
	if version < 0 {
		return workerMetadata{}, fmt.Errorf("connect member metadata: unsupported version %d", version)
	}
	if version == 0 || r.done() {
		return m, nil // eager metadata carries no allocation
	}
	alloc, ok := r.nullableBytes()
	if r.err != nil {
		return workerMetadata{}, fmt.Errorf("connect member metadata: %w", r.err)
	}
	if ok {
		a, err := decodeAssignment(alloc)
		if err != nil {
			return workerMetadata{}, fmt.Errorf("connect member metadata: allocation: %w", err)
		}
		m.Allocation = &a
	}
	return m, nil
}

func encodeAssignment(version int16, a assignment) []byte {
	b := binary.BigEndian.AppendUint16(nil, uint16(version))
	b = binary.BigEndian.AppendUint16(b, uint16(a.Error))
	b = appendString(b, a.Leader)
	b = appendString(b, a.LeaderURL)
	b = binary.BigEndian.AppendUint64(b, uint64(a.ConfigOffset))
	b = appendItems(b, a.Assigned)
	b = appendItems(b, a.Revoked)
	return binary.BigEndian.AppendUint32(b, uint32(a.Delay))
}

// decodeAssignment reads V0, V1 and V2 assignments; fields a V0 assignment lacks keep their
// defaults, as Java's tolerant schema fills them in.
func decodeAssignment(data []byte) (assignment, error) {
	r := reader{b: data}
	version := r.int16()
	a := assignment{Error: r.int16(), Leader: r.string(), LeaderURL: r.string(), ConfigOffset: r.int64()}
	a.Assigned = r.items()
	if version >= 1 && !r.done() {
		a.Revoked = r.items()
		if !r.done() {
			a.Delay = r.int32()
		}
	}
	if r.err != nil {
		return assignment{}, fmt.Errorf("connect assignment: %w", r.err)
	}
	if version < 0 {
		return assignment{}, fmt.Errorf("connect assignment: unsupported version %d", version)
	}
	return a, nil
}

// appendItems writes CONNECTOR_ASSIGNMENT_V0 entries: one per connector, its instance as task -1.
func appendItems(b []byte, items []Item) []byte {
	byConnector := map[string][]int32{}
	for _, it := range items {
		byConnector[it.Connector] = append(byConnector[it.Connector], int32(it.Task))
	}
	b = binary.BigEndian.AppendUint32(b, uint32(len(byConnector)))
	for _, name := range slices.Sorted(maps.Keys(byConnector)) {
		b = appendString(b, name)
		tasks := byConnector[name]
		slices.Sort(tasks)
		b = binary.BigEndian.AppendUint32(b, uint32(len(tasks)))
		for _, t := range tasks {
			b = binary.BigEndian.AppendUint32(b, uint32(t))
		}
	}
	return b
}

func appendString(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
	return append(b, s...)
}

var errShort = errors.New("truncated")

// reader decodes Kafka's struct encoding; after the first error every read returns zero values and
// err keeps that error, so a decoder checks once at the end.
type reader struct {
	b   []byte
	err error
}

func (r *reader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || len(r.b) < n {
		r.err = errShort
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *reader) done() bool { return r.err != nil || len(r.b) == 0 }

func (r *reader) int16() int16 {
	if b := r.take(2); b != nil {
		return int16(binary.BigEndian.Uint16(b))
	}
	return 0
}

func (r *reader) int32() int32 {
	if b := r.take(4); b != nil {
		return int32(binary.BigEndian.Uint32(b))
	}
	return 0
}

func (r *reader) int64() int64 {
	if b := r.take(8); b != nil {
		return int64(binary.BigEndian.Uint64(b))
	}
	return 0
}

func (r *reader) string() string {
	n := r.int16()
	if n < 0 {
		r.err = errors.New("null string")
		return ""
	}
	return string(r.take(int(n)))
}

func (r *reader) nullableBytes() ([]byte, bool) {
	n := r.int32()
	if n == -1 || r.err != nil {
		return nil, false
	}
	return r.take(int(n)), true
}

// items reads a nullable array of connector assignments.
func (r *reader) items() []Item {
	n := r.int32()
	var items []Item
	for i := int32(0); i < n && r.err == nil; i++ {
		name := r.string()
		tasks := r.int32()
		for j := int32(0); j < tasks && r.err == nil; j++ {
			items = append(items, Item{Connector: name, Task: int(r.int32())})
		}
	}
	return items
}
