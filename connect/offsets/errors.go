package offsets

import "fmt"

// FormatError reports bytes that are not a Java-serialized HashMap<byte[],byte[]>
// as FileOffsetBackingStore writes it.
type FormatError struct {
	Offset int    // byte offset in the stream where the problem was found
	Reason string // what was wrong there
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("java serialization: at byte %d: %s", e.Offset, e.Reason)
}

// JSONError reports an offset key or value that is not in the shape Connect
// writes: a [connector, {partition}] array, or an object of primitive values.
type JSONError struct {
	Reason string
}

func (e *JSONError) Error() string {
	return "offset json: " + e.Reason
}
