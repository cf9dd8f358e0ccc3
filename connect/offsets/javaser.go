package offsets

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/cdcd/cdcd/schema/javacompat"
)

// Entry is one offset record: the key and value bytes Connect stores.
// A nil Value is Java's null, which Connect writes for a reset (tombstoned)
// partition; an empty non-nil Value is an empty byte array.
type Entry struct {
	Key   []byte
	Value []byte
}

// Tags, flags and identities of the java.io serialization protocol
// (java.io.ObjectStreamConstants, "Object Serialization Stream Protocol").
const (
	streamMagic   = 0xACED
	streamVersion = 5

	tcNull           = 0x70
	tcReference      = 0x71
	tcClassDesc      = 0x72
	tcObject         = 0x73
	tcString         = 0x74
	tcArray          = 0x75
	tcClass          = 0x76
	tcBlockData      = 0x77
	tcEndBlockData   = 0x78
	tcReset          = 0x79
	tcBlockDataLong  = 0x7A
	tcException      = 0x7B
	tcLongString     = 0x7C
	tcProxyClassDesc = 0x7D
	tcEnum           = 0x7E

	// baseWireHandle is the first handle number; handles count up from it in
	// the order objects and class descriptors appear.
	baseWireHandle = 0x7E0000

	scWriteMethod    = 0x01
	scSerializable   = 0x02
	scExternalizable = 0x04
	scEnum           = 0x10

	hashMapClass     = "java.util.HashMap"
	hashMapSUID      = 362498820763181265
	byteArrayClass   = "[B"
	byteArraySUID    = 0xACF317F8060854E0 // -5984413125824719648 as a Java long
	hashMapLoadField = "loadFactor"
	hashMapThreshold = "threshold"
	defaultLoad      = float32(0.75)

	// maxClassDepth bounds superclass chains so a hostile stream cannot recurse
	// deeply; HashMap's chain has length one (AbstractMap is not serializable).
	maxClassDepth = 32
)

// appendMap appends entries as ObjectOutputStream.writeObject writes a
// HashMap<byte[],byte[]> built with new HashMap<>() and one put per entry:
// the bytes FileOffsetBackingStore.save produces. Entries are written in the
// given order. Java's own order is the HashMap's iteration order, which for
// byte[] keys follows identity hash codes and so differs from run to run; any
// order reads back as the same map. Keys must be distinct and non-nil.
func appendMap(b []byte, entries []Entry) ([]byte, error) {
	b = binary.BigEndian.AppendUint16(b, streamMagic)
	b = binary.BigEndian.AppendUint16(b, streamVersion)

	// The HashMap's class descriptor (handle 0) and the map itself (handle 1).
	b = append(b, tcObject, tcClassDesc)
	b = appendUTF(b, hashMapClass)
	b = binary.BigEndian.AppendUint64(b, uint64(hashMapSUID))
	b = append(b, scSerializable|scWriteMethod)
	b = binary.BigEndian.AppendUint16(b, 2) // fields, primitives sorted by name
	b = append(b, 'F')
	b = appendUTF(b, hashMapLoadField)
	b = append(b, 'I')
	b = appendUTF(b, hashMapThreshold)
	b = append(b, tcEndBlockData, tcNull) // no class annotations, no serializable superclass
	nextHandle := 2

	// defaultWriteObject: the field values. An empty new HashMap<>() has no
	// table yet, so its threshold is still 0.
	capacity := javacompat.HashMapCapacity(len(entries))
	threshold := 0
	if len(entries) > 0 {
		threshold = capacity / 4 * 3
	}
	b = binary.BigEndian.AppendUint32(b, math.Float32bits(defaultLoad))
	b = binary.BigEndian.AppendUint32(b, uint32(threshold))

	// HashMap.writeObject's own data: bucket count and size as block data,
	// then key and value objects, then the end-of-custom-data marker.
	b = append(b, tcBlockData, 8)
	b = binary.BigEndian.AppendUint32(b, uint32(capacity))
	b = binary.BigEndian.AppendUint32(b, uint32(len(entries)))
	byteArrayDesc := -1
	appendArray := func(b, a []byte) ([]byte, error) {
		if a == nil {
			return append(b, tcNull), nil
		}
		if len(a) > math.MaxInt32 {
			return nil, fmt.Errorf("offsets map: byte array of %d bytes is too long for Java", len(a))
		}
		b = append(b, tcArray)
		if byteArrayDesc < 0 {
			b = append(b, tcClassDesc)
			b = appendUTF(b, byteArrayClass)
			b = binary.BigEndian.AppendUint64(b, byteArraySUID)
			b = append(b, scSerializable)
			b = binary.BigEndian.AppendUint16(b, 0)
			b = append(b, tcEndBlockData, tcNull)
			byteArrayDesc = nextHandle
			nextHandle++
		} else {
			b = append(b, tcReference)
			b = binary.BigEndian.AppendUint32(b, uint32(baseWireHandle+byteArrayDesc))
		}
		nextHandle++ // the array itself
		b = binary.BigEndian.AppendUint32(b, uint32(len(a)))
		return append(b, a...), nil
	}
	for i, e := range entries {
		if e.Key == nil {
			return nil, fmt.Errorf("offsets map: entry %d has a nil key", i)
		}
		var err error
		if b, err = appendArray(b, e.Key); err != nil {
			return nil, err
		}
		if b, err = appendArray(b, e.Value); err != nil {
			return nil, err
		}
	}
	return append(b, tcEndBlockData), nil
}

// appendUTF appends s in DataOutput.writeUTF form. It is used only for the
// fixed ASCII class and field names above, where modified UTF-8 is plain ASCII.
func appendUTF(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
	return append(b, s...)
}

// classDesc is a class descriptor read from the stream.
type classDesc struct {
	name   string
	suid   int64
	flags  byte
	fields []fieldDesc
}

type fieldDesc struct {
	typeCode byte
	name     string
}

// mapHandle stands for the map itself in the handle table; nothing may
// refer to it.
type mapHandle struct{}

// decoder reads one serialization stream held in memory. Every read checks
// the remaining length first, so malformed input yields an error, never a
// panic or an allocation larger than the input.
type decoder struct {
	buf     []byte
	pos     int
	handles []any  // *classDesc, string (field type name), []byte, or mapHandle
	block   []byte // unread part of the current block-data segment
	// repeated counts the array bytes that back references yielded again.
	repeated int
}

func (d *decoder) fail(format string, args ...any) error {
	return &FormatError{Offset: d.pos, Reason: fmt.Sprintf(format, args...)}
}

func (d *decoder) take(n int) ([]byte, error) {
	if n < 0 || n > len(d.buf)-d.pos {
		return nil, d.fail("unexpected end of stream: need %d more bytes, have %d", n, len(d.buf)-d.pos)
	}
	b := d.buf[d.pos : d.pos+n]
	d.pos += n
	return b, nil
}

func (d *decoder) u8() (byte, error) {
	b, err := d.take(1)
	if err != nil {
		return 0, err
	}
	return b[0], nil
}

func (d *decoder) u16() (uint16, error) {
	b, err := d.take(2)
	if err != nil {
		return 0, err
	}
	return binary.BigEndian.Uint16(b), nil
}

func (d *decoder) u32() (uint32, error) {
	b, err := d.take(4)
	if err != nil {
		return 0, err
	}
	return binary.BigEndian.Uint32(b), nil
}

func (d *decoder) u64() (uint64, error) {
	b, err := d.take(8)
	if err != nil {
		return 0, err
	}
	return binary.BigEndian.Uint64(b), nil
}

func (d *decoder) utf() (string, error) {
	n, err := d.u16()
	if err != nil {
		return "", err
	}
	b, err := d.take(int(n))
	return string(b), err
}

// length reads a non-negative 32-bit length and checks that at least
// minBytesEach*n bytes remain, so a forged length cannot force a huge
// allocation.
func (d *decoder) length(what string, minBytesEach int) (int, error) {
	v, err := d.u32()
	if err != nil {
		return 0, err
	}
	n := int(int32(v))
	if n < 0 {
		return 0, d.fail("negative %s %d", what, n)
	}
	if remaining := len(d.buf) - d.pos; n > remaining/minBytesEach {
		return 0, d.fail("%s %d exceeds the %d bytes left in the stream", what, n, remaining)
	}
	return n, nil
}

func (d *decoder) handle() (any, error) {
	v, err := d.u32()
	if err != nil {
		return nil, err
	}
	i := int64(v) - baseWireHandle
	if i < 0 || i >= int64(len(d.handles)) {
		return nil, d.fail("reference to unknown handle 0x%x", v)
	}
	return d.handles[i], nil
}

// decodeMap reads a Java-serialized HashMap<byte[],byte[]>, as
// FileOffsetBackingStore writes it, and returns its entries in stream order.
// It accepts what any ObjectOutputStream produces for such a map (back
// references, block data split anywhere, a reset before the map); anything
// else, including trailing bytes and null keys, is a *FormatError. Java's
// FileOffsetBackingStore treats a truncated file as empty; decodeMap reports it.
func decodeMap(data []byte) ([]Entry, error) {
	d := &decoder{buf: data}
	magic, err := d.u16()
	if err != nil {
		return nil, err
	}
	if magic != streamMagic {
		return nil, d.fail("stream magic is 0x%04x, want 0x%04x", magic, streamMagic)
	}
	version, err := d.u16()
	if err != nil {
		return nil, err
	}
	if version != streamVersion {
		return nil, d.fail("stream version is %d, want %d", version, streamVersion)
	}
	tc, err := d.u8()
	for err == nil && tc == tcReset { // resets may precede a top-level object
		d.handles = d.handles[:0]
		tc, err = d.u8()
	}
	if err != nil {
		return nil, err
	}
	if tc != tcObject {
		return nil, d.fail("top-level %s, want a %s object", tagName(tc), hashMapClass)
	}
	desc, err := d.classDesc(0)
	if err != nil {
		return nil, err
	}
	if err := d.checkHashMapDesc(desc); err != nil {
		return nil, err
	}
	d.handles = append(d.handles, mapHandle{})
	if err := d.hashMapFields(desc); err != nil {
		return nil, err
	}
	if _, err := d.blockInt(); err != nil { // bucket count, which readers ignore
		return nil, err
	}
	size, err := d.blockInt()
	if err != nil {
		return nil, err
	}
	if size < 0 {
		return nil, d.fail("negative map size %d", size)
	}
	if size > (len(d.buf)-d.pos)/2 { // each key and value takes at least one byte
		return nil, d.fail("map size %d exceeds what the %d bytes left can hold", size, len(d.buf)-d.pos)
	}
	// The declared size only caps the reading: capacity grows with entries
	// actually read, so allocations stay proportional to the input (an Entry
	// is 48 bytes; a forged size of len/2 would have asked for 24 times it).
	entries := make([]Entry, 0, min(size, 1024))
	for i := range size {
		key, err := d.byteArray(fmt.Sprintf("key of entry %d", i))
		if err != nil {
			return nil, err
		}
		if key == nil {
			return nil, d.fail("key of entry %d is null; offset keys are never null", i)
		}
		value, err := d.byteArray(fmt.Sprintf("value of entry %d", i))
		if err != nil {
			return nil, err
		}
		entries = append(entries, Entry{Key: key, Value: value})
	}
	if len(d.block) > 0 {
		return nil, d.fail("%d bytes of block data after the last entry", len(d.block))
	}
	tc, err = d.u8()
	if err != nil {
		return nil, err
	}
	if tc != tcEndBlockData {
		return nil, d.fail("%s after the last of %d entries, want the end of the map", tagName(tc), size)
	}
	if d.pos != len(d.buf) {
		return nil, d.fail("%d trailing bytes after the map", len(d.buf)-d.pos)
	}
	return entries, nil
}

// classDesc reads a class descriptor in a position where one is expected
// (TC_CLASSDESC, a reference to one, or TC_NULL), including its superclass
// chain, of which only the most derived descriptor is returned.
func (d *decoder) classDesc(depth int) (*classDesc, error) {
	if depth > maxClassDepth {
		return nil, d.fail("class descriptors nested deeper than %d", maxClassDepth)
	}
	tc, err := d.u8()
	if err != nil {
		return nil, err
	}
	switch tc {
	case tcNull:
		return nil, nil
	case tcReference:
		h, err := d.handle()
		if err != nil {
			return nil, err
		}
		desc, ok := h.(*classDesc)
		if !ok {
			return nil, d.fail("reference to a %T where a class descriptor was expected", h)
		}
		return desc, nil
	case tcClassDesc:
	default:
		return nil, d.fail("%s where a class descriptor was expected", tagName(tc))
	}
	desc := &classDesc{}
	if desc.name, err = d.utf(); err != nil {
		return nil, err
	}
	suid, err := d.u64()
	if err != nil {
		return nil, err
	}
	desc.suid = int64(suid)
	d.handles = append(d.handles, desc) // assigned before the body, as Java does
	if desc.flags, err = d.u8(); err != nil {
		return nil, err
	}
	nfields, err := d.u16()
	if err != nil {
		return nil, err
	}
	for range nfields {
		var f fieldDesc
		if f.typeCode, err = d.u8(); err != nil {
			return nil, err
		}
		if f.name, err = d.utf(); err != nil {
			return nil, err
		}
		if f.typeCode == '[' || f.typeCode == 'L' {
			if err := d.fieldClassName(); err != nil {
				return nil, err
			}
		}
		desc.fields = append(desc.fields, f)
	}
	if err := d.skipClassAnnotation(); err != nil {
		return nil, err
	}
	if _, err := d.classDesc(depth + 1); err != nil { // superclass
		return nil, err
	}
	return desc, nil
}

// fieldClassName reads the type-name string of an object field.
func (d *decoder) fieldClassName() error {
	tc, err := d.u8()
	if err != nil {
		return err
	}
	switch tc {
	case tcString:
		s, err := d.utf()
		if err != nil {
			return err
		}
		d.handles = append(d.handles, s)
		return nil
	case tcLongString:
		n, err := d.u64()
		if err != nil {
			return err
		}
		if n > uint64(len(d.buf)-d.pos) {
			return d.fail("long string of %d bytes exceeds the stream", n)
		}
		s, err := d.take(int(n))
		if err != nil {
			return err
		}
		d.handles = append(d.handles, string(s))
		return nil
	case tcReference:
		h, err := d.handle()
		if err != nil {
			return err
		}
		if _, ok := h.(string); !ok {
			return d.fail("reference to a %T where a field type name was expected", h)
		}
		return nil
	default:
		return d.fail("%s where a field type name was expected", tagName(tc))
	}
}

// skipClassAnnotation skips what ObjectOutputStream.annotateClass wrote, which
// by default is nothing. Only block data is accepted: objects in an annotation
// would come from a custom stream class, not from FileOffsetBackingStore.
func (d *decoder) skipClassAnnotation() error {
	for {
		tc, err := d.u8()
		if err != nil {
			return err
		}
		switch tc {
		case tcEndBlockData:
			return nil
		case tcBlockData, tcBlockDataLong:
			if _, err := d.blockSegment(tc); err != nil {
				return err
			}
		default:
			return d.fail("%s in a class annotation", tagName(tc))
		}
	}
}

func (d *decoder) checkHashMapDesc(desc *classDesc) error {
	switch {
	case desc == nil:
		return d.fail("null top-level object, want a %s", hashMapClass)
	case desc.name != hashMapClass:
		return d.fail("top-level object is a %s, want a %s", desc.name, hashMapClass)
	case desc.suid != hashMapSUID:
		return d.fail("%s serialVersionUID is %d, want %d", hashMapClass, desc.suid, int64(hashMapSUID))
	case desc.flags&(scSerializable|scWriteMethod) != scSerializable|scWriteMethod,
		desc.flags&(scExternalizable|scEnum) != 0:
		return d.fail("%s class flags 0x%02x, want serializable with a writeObject method", hashMapClass, desc.flags)
	}
	return nil
}

// hashMapFields reads the values of the map's serializable fields. HashMap
// reads only loadFactor (default 0.75) and rejects a non-positive or NaN one.
func (d *decoder) hashMapFields(desc *classDesc) error {
	sizes := map[byte]int{'B': 1, 'Z': 1, 'C': 2, 'S': 2, 'I': 4, 'F': 4, 'J': 8, 'D': 8}
	for _, f := range desc.fields {
		size, ok := sizes[f.typeCode]
		if !ok {
			return d.fail("%s field %q has type %q; only primitive fields are expected", hashMapClass, f.name, f.typeCode)
		}
		v, err := d.take(size)
		if err != nil {
			return err
		}
		if f.name != hashMapLoadField {
			continue
		}
		if f.typeCode != 'F' {
			return d.fail("%s field %s has type %q, want float", hashMapClass, f.name, f.typeCode)
		}
		lf := math.Float32frombits(binary.BigEndian.Uint32(v))
		if !(lf > 0) {
			return d.fail("illegal %s load factor %v", hashMapClass, lf)
		}
	}
	return nil
}

// blockSegment reads the body of a block-data segment whose tag tc was read.
func (d *decoder) blockSegment(tc byte) ([]byte, error) {
	var n int
	if tc == tcBlockData {
		v, err := d.u8()
		if err != nil {
			return nil, err
		}
		n = int(v)
	} else {
		var err error
		if n, err = d.length("block data length", 1); err != nil {
			return nil, err
		}
	}
	return d.take(n)
}

// blockInt reads a 32-bit int of writeObject's custom data, which may span
// block-data segments.
func (d *decoder) blockInt() (int, error) {
	var v [4]byte
	got := 0
	for got < len(v) {
		if len(d.block) == 0 {
			tc, err := d.u8()
			if err != nil {
				return 0, err
			}
			if tc != tcBlockData && tc != tcBlockDataLong {
				return 0, d.fail("%s where the map's bucket count and size were expected", tagName(tc))
			}
			if d.block, err = d.blockSegment(tc); err != nil {
				return 0, err
			}
			continue
		}
		n := copy(v[got:], d.block)
		d.block = d.block[n:]
		got += n
	}
	return int(int32(binary.BigEndian.Uint32(v[:]))), nil
}

// byteArray reads a map key or value: null, a byte[] or a reference to an
// earlier byte[]. The result never aliases the input buffer; a reference
// yields the very slice of the array it refers to, so entries may share one
// (callers must not modify entries in place).
func (d *decoder) byteArray(what string) ([]byte, error) {
	if len(d.block) > 0 {
		return nil, d.fail("%d bytes of block data before the %s", len(d.block), what)
	}
	tc, err := d.u8()
	if err != nil {
		return nil, err
	}
	switch tc {
	case tcNull:
		return nil, nil
	case tcReference:
		h, err := d.handle()
		if err != nil {
			return nil, err
		}
		a, ok := h.([]byte)
		if !ok {
			return nil, d.fail("%s refers to a %T, want a byte[]", what, h)
		}
		// Shared, not copied: a reference costs 5 bytes of input, and a copy per
		// reference let a small file allocate its largest array over and over
		// (issue 17: 1 MiB with 100 references, 200 MiB). What references
		// repeat is bounded too, since callers copy entries (map keys, the
		// rewritten file): at most the stream's size, so the entries hold at
		// most twice the input. Connect writes each key and value as its own
		// array, so its files repeat nothing.
		if d.repeated += len(a); d.repeated > len(d.buf) {
			return nil, d.fail("back references repeat %d bytes of arrays, more than the %d-byte stream", d.repeated, len(d.buf))
		}
		return a, nil
	case tcArray:
	default:
		return nil, d.fail("%s is a %s, want a byte[]", what, tagName(tc))
	}
	desc, err := d.classDesc(0)
	if err != nil {
		return nil, err
	}
	// Java checks no serialVersionUID for array classes, so neither do we.
	if desc == nil || desc.name != byteArrayClass {
		return nil, d.fail("%s is an array of another type, want a byte[]", what)
	}
	h := len(d.handles)
	d.handles = append(d.handles, nil)
	n, err := d.length("byte array length", 1)
	if err != nil {
		return nil, err
	}
	b, err := d.take(n)
	if err != nil {
		return nil, err
	}
	a := append([]byte{}, b...)
	d.handles[h] = a
	return a, nil
}

func tagName(tc byte) string {
	names := map[byte]string{
		tcNull: "TC_NULL", tcReference: "TC_REFERENCE", tcClassDesc: "TC_CLASSDESC",
		tcObject: "TC_OBJECT", tcString: "TC_STRING", tcArray: "TC_ARRAY", tcClass: "TC_CLASS",
		tcBlockData: "TC_BLOCKDATA", tcEndBlockData: "TC_ENDBLOCKDATA", tcReset: "TC_RESET",
		tcBlockDataLong: "TC_BLOCKDATALONG", tcException: "TC_EXCEPTION",
		tcLongString: "TC_LONGSTRING", tcProxyClassDesc: "TC_PROXYCLASSDESC", tcEnum: "TC_ENUM",
	}
	if name, ok := names[tc]; ok {
		return name
	}
	return fmt.Sprintf("byte 0x%02x", tc)
}
