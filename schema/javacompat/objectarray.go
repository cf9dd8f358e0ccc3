package javacompat

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"unicode/utf16"
)

// Debezium keeps an incremental snapshot's chunk bounds in its offsets as the hex of a Java-serialised
// Object[] (ObjectOutputStream.writeObject of the key's column values). AppendObjectArray writes such an
// array byte for byte as Java does, and DecodeObjectArray reads what any ObjectOutputStream wrote, so that
// Debezium resumes cdcd's incremental snapshots and cdcd resumes Debezium's.
//
// The element types are the boxed values a JDBC driver returns for the key columns cdcd can chunk by:
//
//	Go value   Java class
//	nil        null
//	bool       java.lang.Boolean
//	int16      java.lang.Short
//	int32      java.lang.Integer
//	int64      java.lang.Long
//	string     java.lang.String
//
// Anything else is refused with ErrUnsupportedJavaType, so a caller can say which column it cannot chunk by.

// ErrUnsupportedJavaType is returned for an element whose Java class this package does not write or read.
var ErrUnsupportedJavaType = errors.New("unsupported Java type")

// Serialization protocol constants (java.io.ObjectStreamConstants).
const (
	streamMagic    = 0xaced
	streamVersion  = 5
	tcNull         = 0x70
	tcReference    = 0x71
	tcClassDesc    = 0x72
	tcObject       = 0x73
	tcString       = 0x74
	tcArray        = 0x75
	tcEndBlock     = 0x78
	tcLongString   = 0x7c
	scSerializable = 0x02
	baseHandle     = 0x7e0000
)

// javaClass is a class descriptor as ObjectOutputStream writes it: name, serialVersionUID, one primitive
// field at most (the boxed value), and the superclass.
type javaClass struct {
	name      string
	uid       uint64
	fieldType byte // 0: no field; else the primitive's type code ('I', 'J', 'S', 'Z')
	super     *javaClass
}

var (
	classObjectArray = &javaClass{name: "[Ljava.lang.Object;", uid: 0x90ce589f1073296c}
	classNumber      = &javaClass{name: "java.lang.Number", uid: 0x86ac951d0b94e08b}
	classInteger     = &javaClass{name: "java.lang.Integer", uid: 0x12e2a0a4f7818738, fieldType: 'I', super: classNumber}
	classLong        = &javaClass{name: "java.lang.Long", uid: 0x3b8be490cc8f23df, fieldType: 'J', super: classNumber}
	classShort       = &javaClass{name: "java.lang.Short", uid: 0x684d37133460da52, fieldType: 'S', super: classNumber}
	classBoolean     = &javaClass{name: "java.lang.Boolean", uid: 0xcd207280d59cfaee, fieldType: 'Z'}
	boxedClasses     = map[string]*javaClass{}
)

func init() {
	for _, c := range []*javaClass{classInteger, classLong, classShort, classBoolean} {
		boxedClasses[c.name] = c
	}
}

// AppendObjectArray appends the Java serialisation of the Object[] vals (of nil: a serialised null) to b.
// Like ObjectOutputStream, it writes each class descriptor once and refers back to it afterwards;
// strings are written in full every time (Java shares only the very same String instance, and a JDBC
// driver returns a new one per value), while a boxed value that Java's valueOf takes from its cache
// (Boolean, and Short, Integer and Long from -128 to 127) is the same instance every time it occurs, so
// its repetitions are back references, as in Debezium's offsets.
func AppendObjectArray(b []byte, vals []any) ([]byte, error) {
	b = binary.BigEndian.AppendUint16(b, streamMagic)
	b = binary.BigEndian.AppendUint16(b, streamVersion)
	if vals == nil {
		return append(b, tcNull), nil
	}
	w := &objectWriter{b: b, handles: map[*javaClass]uint32{}, cached: map[cachedBox]uint32{}}
	w.b = append(w.b, tcArray)
	w.classDesc(classObjectArray)
	w.next++ // the array itself
	w.b = binary.BigEndian.AppendUint32(w.b, uint32(len(vals)))
	for i, v := range vals {
		if err := w.element(v); err != nil {
			return nil, fmt.Errorf("element %d: %w", i, err)
		}
	}
	return w.b, nil
}

type objectWriter struct {
	b       []byte
	handles map[*javaClass]uint32
	cached  map[cachedBox]uint32 // boxed values from Java's valueOf caches, written once
	next    uint32               // the next handle, counted from baseHandle
}

// cachedBox is a boxed value that Java's valueOf returns from its cache: one instance per class and value.
type cachedBox struct {
	class *javaClass
	value int64
}

func (w *objectWriter) classDesc(c *javaClass) {
	if c == nil {
		w.b = append(w.b, tcNull)
		return
	}
	if h, ok := w.handles[c]; ok {
		w.b = append(w.b, tcReference)
		w.b = binary.BigEndian.AppendUint32(w.b, baseHandle+h)
		return
	}
	w.b = append(w.b, tcClassDesc)
	w.b = appendModifiedUTF(w.b, c.name)
	w.b = binary.BigEndian.AppendUint64(w.b, c.uid)
	w.b = append(w.b, scSerializable)
	w.handles[c] = w.next
	w.next++
	if c.fieldType == 0 {
		w.b = binary.BigEndian.AppendUint16(w.b, 0)
	} else {
		w.b = binary.BigEndian.AppendUint16(w.b, 1)
		w.b = append(w.b, c.fieldType)
		w.b = appendModifiedUTF(w.b, "value")
	}
	w.b = append(w.b, tcEndBlock)
	w.classDesc(c.super)
}

func (w *objectWriter) element(v any) error {
	switch v := v.(type) {
	case nil:
		w.b = append(w.b, tcNull)
	case string:
		if n := modifiedUTFLen(v); n > math.MaxUint16 {
			w.b = append(w.b, tcLongString)
			w.b = binary.BigEndian.AppendUint64(w.b, uint64(n))
			w.b = appendModifiedUTFBytes(w.b, v)
		} else {
			w.b = append(w.b, tcString)
			w.b = appendModifiedUTF(w.b, v)
		}
		w.next++
	case int32:
		if w.object(classInteger, int64(v)) {
			w.b = binary.BigEndian.AppendUint32(w.b, uint32(v))
		}
	case int64:
		if w.object(classLong, v) {
			w.b = binary.BigEndian.AppendUint64(w.b, uint64(v))
		}
	case int16:
		if w.object(classShort, int64(v)) {
			w.b = binary.BigEndian.AppendUint16(w.b, uint16(v))
		}
	case bool:
		var n int64
		if v {
			n = 1
		}
		if w.object(classBoolean, n) {
			w.b = append(w.b, byte(n))
		}
	default:
		return fmt.Errorf("%w %T", ErrUnsupportedJavaType, v)
	}
	return nil
}

// object starts the boxed value v of class c and reports whether the caller writes its field's bytes
// next; false when v is the cached instance written before, which this wrote a back reference to.
func (w *objectWriter) object(c *javaClass, v int64) bool {
	cacheable := c == classBoolean || -128 <= v && v <= 127
	key := cachedBox{c, v}
	if h, ok := w.cached[key]; ok && cacheable {
		w.b = append(w.b, tcReference)
		w.b = binary.BigEndian.AppendUint32(w.b, baseHandle+h)
		return false
	}
	w.b = append(w.b, tcObject)
	w.classDesc(c)
	if cacheable {
		w.cached[key] = w.next
	}
	w.next++ // the object
	return true
}

// modifiedUTFLen is the length of s in Java's modified UTF-8 (DataOutput.writeUTF): NUL takes two bytes
// and a character outside the BMP six (a surrogate pair of three bytes each).
func modifiedUTFLen(s string) int {
	n := 0
	for _, r := range s {
		switch {
		case r == 0:
			n += 2
		case r < 0x80:
			n++
		case r < 0x800:
			n += 2
		case r < 0x10000:
			n += 3
		default:
			n += 6
		}
	}
	return n
}

func appendModifiedUTF(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint16(b, uint16(modifiedUTFLen(s)))
	return appendModifiedUTFBytes(b, s)
}

func appendModifiedUTFBytes(b []byte, s string) []byte {
	for _, r := range s {
		if r >= 0x10000 {
			hi, lo := utf16.EncodeRune(r)
			b = appendUTF16Unit(b, uint16(hi))
			b = appendUTF16Unit(b, uint16(lo))
			continue
		}
		b = appendUTF16Unit(b, uint16(r))
	}
	return b
}

func appendUTF16Unit(b []byte, c uint16) []byte {
	switch {
	case c != 0 && c < 0x80:
		return append(b, byte(c))
	case c < 0x800:
		return append(b, 0xc0|byte(c>>6), 0x80|byte(c&0x3f))
	default:
		return append(b, 0xe0|byte(c>>12), 0x80|byte(c>>6&0x3f), 0x80|byte(c&0x3f))
	}
}

// DecodeObjectArray reads a serialised Object[] (or null, returned as nil) whose elements are of the
// types AppendObjectArray writes. It follows back references as ObjectInputStream does, and it is
// bounded: every length is checked against the bytes left, so no input makes it allocate more than its
// own size or loop.
func DecodeObjectArray(data []byte) ([]any, error) {
	r := &objectReader{data: data}
	vals, err := r.top()
	if err != nil {
		return nil, fmt.Errorf("serialised Object[] at byte %d: %w", r.pos, err)
	}
	if r.pos != len(r.data) {
		return nil, fmt.Errorf("serialised Object[]: %d bytes after its end", len(r.data)-r.pos)
	}
	return vals, nil
}

type objectReader struct {
	data    []byte
	pos     int
	handles []any // *javaClass for descriptors, the value for strings and objects
}

var errTruncated = errors.New("truncated")

func (r *objectReader) take(n int) ([]byte, error) {
	if n < 0 || n > len(r.data)-r.pos {
		return nil, errTruncated
	}
	b := r.data[r.pos : r.pos+n]
	r.pos += n
	return b, nil
}

func (r *objectReader) u8() (byte, error) {
	b, err := r.take(1)
	if err != nil {
		return 0, err
	}
	return b[0], nil
}

func (r *objectReader) uint(n int) (uint64, error) {
	b, err := r.take(n)
	if err != nil {
		return 0, err
	}
	var v uint64
	for _, x := range b {
		v = v<<8 | uint64(x)
	}
	return v, nil
}

func (r *objectReader) utf(lenBytes int) (string, error) {
	n, err := r.uint(lenBytes)
	if err != nil {
		return "", err
	}
	if n > uint64(len(r.data)-r.pos) {
		return "", errTruncated
	}
	b, _ := r.take(int(n))
	return decodeModifiedUTF(b)
}

func (r *objectReader) top() ([]any, error) {
	magic, err := r.uint(2)
	if err != nil {
		return nil, err
	}
	version, err := r.uint(2)
	if err != nil {
		return nil, err
	}
	if magic != streamMagic || version != streamVersion {
		return nil, fmt.Errorf("not a Java serialisation stream (header %04x %04x)", magic, version)
	}
	tc, err := r.u8()
	if err != nil {
		return nil, err
	}
	switch tc {
	case tcNull:
		return nil, nil
	case tcArray:
	default:
		return nil, fmt.Errorf("top-level object of type 0x%02x, want an array", tc)
	}
	c, err := r.classDesc()
	if err != nil {
		return nil, err
	}
	if c == nil || c.name != classObjectArray.name {
		return nil, fmt.Errorf("array class %v, want %s", className(c), classObjectArray.name)
	}
	r.handles = append(r.handles, nil) // the array
	n, err := r.uint(4)
	if err != nil {
		return nil, err
	}
	if n > uint64(len(r.data)-r.pos) { // every element takes at least one byte
		return nil, errTruncated
	}
	vals := make([]any, n)
	for i := range vals {
		if vals[i], err = r.element(); err != nil {
			return nil, fmt.Errorf("element %d: %w", i, err)
		}
	}
	return vals, nil
}

func className(c *javaClass) string {
	if c == nil {
		return "null"
	}
	return c.name
}

func (r *objectReader) reference() (any, error) {
	h, err := r.uint(4)
	if err != nil {
		return nil, err
	}
	if h < baseHandle || h-baseHandle >= uint64(len(r.handles)) {
		return nil, fmt.Errorf("back reference 0x%x to no object", h)
	}
	return r.handles[h-baseHandle], nil
}

// classDesc reads a class descriptor (or a reference to one, or null) of a class this package knows.
func (r *objectReader) classDesc() (*javaClass, error) {
	tc, err := r.u8()
	if err != nil {
		return nil, err
	}
	switch tc {
	case tcNull:
		return nil, nil
	case tcReference:
		v, err := r.reference()
		if err != nil {
			return nil, err
		}
		c, ok := v.(*javaClass)
		if !ok {
			return nil, errors.New("back reference to an object where a class descriptor belongs")
		}
		return c, nil
	case tcClassDesc:
	default:
		return nil, fmt.Errorf("type 0x%02x where a class descriptor belongs", tc)
	}
	name, err := r.utf(2)
	if err != nil {
		return nil, err
	}
	known := boxedClasses[name]
	switch name {
	case classObjectArray.name:
		known = classObjectArray
	case classNumber.name:
		known = classNumber
	}
	if known == nil {
		return nil, fmt.Errorf("%w %s", ErrUnsupportedJavaType, name)
	}
	if _, err := r.take(8 + 1); err != nil { // serialVersionUID and flags: the class is known by its name
		return nil, err
	}
	r.handles = append(r.handles, known)
	fields, err := r.uint(2)
	if err != nil {
		return nil, err
	}
	want := 0
	if known.fieldType != 0 {
		want = 1
	}
	if int(fields) != want {
		return nil, fmt.Errorf("%s with %d fields, want %d", name, fields, want)
	}
	if want == 1 {
		code, err := r.u8()
		if err != nil {
			return nil, err
		}
		if code != known.fieldType {
			return nil, fmt.Errorf("%s field of type %q, want %q", name, code, known.fieldType)
		}
		if _, err := r.utf(2); err != nil {
			return nil, err
		}
	}
	if end, err := r.u8(); err != nil || end != tcEndBlock {
		if err == nil {
			err = fmt.Errorf("class annotation of %s is not empty", name)
		}
		return nil, err
	}
	super, err := r.classDesc()
	if err != nil {
		return nil, err
	}
	if super != known.super {
		return nil, fmt.Errorf("%s with superclass %s, want %s", name, className(super), className(known.super))
	}
	return known, nil
}

func (r *objectReader) element() (any, error) {
	tc, err := r.u8()
	if err != nil {
		return nil, err
	}
	switch tc {
	case tcNull:
		return nil, nil
	case tcReference:
		v, err := r.reference()
		if _, isClass := v.(*javaClass); err == nil && isClass {
			return nil, errors.New("back reference to a class descriptor where a value belongs")
		}
		return v, err
	case tcString, tcLongString:
		lenBytes := 2
		if tc == tcLongString {
			lenBytes = 8
		}
		s, err := r.utf(lenBytes)
		if err != nil {
			return nil, err
		}
		r.handles = append(r.handles, s)
		return s, nil
	case tcObject:
	default:
		return nil, fmt.Errorf("%w: element of type 0x%02x", ErrUnsupportedJavaType, tc)
	}
	c, err := r.classDesc()
	if err != nil {
		return nil, err
	}
	if c == nil || c.fieldType == 0 {
		return nil, fmt.Errorf("%w: object of class %s", ErrUnsupportedJavaType, className(c))
	}
	slot := len(r.handles)
	r.handles = append(r.handles, nil)
	var v any
	switch c.fieldType {
	case 'I':
		n, err := r.uint(4)
		if err != nil {
			return nil, err
		}
		v = int32(uint32(n))
	case 'J':
		n, err := r.uint(8)
		if err != nil {
			return nil, err
		}
		v = int64(n)
	case 'S':
		n, err := r.uint(2)
		if err != nil {
			return nil, err
		}
		v = int16(uint16(n))
	case 'Z':
		n, err := r.u8()
		if err != nil {
			return nil, err
		}
		v = n != 0
	}
	r.handles[slot] = v
	return v, nil
}

// decodeModifiedUTF turns Java's modified UTF-8 into a Go string, joining surrogate pairs.
func decodeModifiedUTF(b []byte) (string, error) {
	units := make([]uint16, 0, len(b))
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c < 0x80:
			units = append(units, uint16(c))
			i++
		case c&0xe0 == 0xc0 && i+1 < len(b) && b[i+1]&0xc0 == 0x80:
			units = append(units, uint16(c&0x1f)<<6|uint16(b[i+1]&0x3f))
			i += 2
		case c&0xf0 == 0xe0 && i+2 < len(b) && b[i+1]&0xc0 == 0x80 && b[i+2]&0xc0 == 0x80:
			units = append(units, uint16(c&0x0f)<<12|uint16(b[i+1]&0x3f)<<6|uint16(b[i+2]&0x3f))
			i += 3
		default:
			return "", fmt.Errorf("malformed modified UTF-8 at byte %d", i)
		}
	}
	return string(utf16.Decode(units)), nil
}
