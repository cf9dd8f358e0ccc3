package columns

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha3"
	"crypto/sha512"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/cdcd/cdcd/schema"
)

// Schema parameters the mappers add, Debezium's names.
const (
	ParamTruncateLength = "truncateLength"
	ParamMasked         = "masked"
	ParamSourceType     = "__debezium.source.column.type"
	ParamSourceLength   = "__debezium.source.column.length"
	ParamSourceScale    = "__debezium.source.column.scale"
	ParamSourceComment  = "__debezium.source.column.comment"
	ParamSourceName     = "__debezium.source.column.name"
)

// truncator is TruncateColumn: only a column whose length is unknown or longer than n is truncated, and
// only it gets the truncateLength parameter.
func truncator(n int) func(Column) *Mapper {
	return func(col Column) *Mapper {
		if col.Length >= 0 && col.Length <= n {
			return nil
		}
		return &Mapper{
			params: []schema.Param{{Key: ParamTruncateLength, Value: strconv.Itoa(n)}},
			value:  func(v any) any { return truncate(v, n) },
		}
	}
}

// truncate cuts a string to n Java chars (UTF-16 code units, as String.substring counts) and bytes to n
// bytes; other values pass unchanged.
func truncate(v any, n int) any {
	switch v := v.(type) {
	case string:
		if len(v) <= n { // n bytes hold at least n UTF-16 units
			return v
		}
		units := 0
		for i, r := range v {
			w := utf16.RuneLen(r)
			if w < 0 {
				w = 1 // invalid UTF-8 decodes to U+FFFD, one unit
			}
			if units+w > n {
				// A cut between the halves of a surrogate pair leaves Java a lone surrogate, which a Go
				// string cannot hold: the whole character goes.
				return v[:i]
			}
			units += w
		}
		return v
	case []byte:
		if len(v) > n {
			return v[:n:n]
		}
	}
	return v
}

// masker is MaskStrings with a fixed mask: every value of a character column, null included, becomes n
// '*'. Every selected column gets masked=true, whatever its type.
func masker(n int) func(Column) *Mapper {
	mask := strings.Repeat("*", n)
	return func(col Column) *Mapper {
		m := &Mapper{params: []schema.Param{{Key: ParamMasked, Value: "true"}}}
		if col.isCharacter() {
			m.value = func(any) any { return mask }
		}
		return m
	}
}

// hasher is MaskStrings with a hash: a character column's string becomes the lower-case hex digest of the
// salt followed by the string's bytes, cut to the column's length when it has one; null stays null. v1
// hashes the string as Java serialises it (ObjectOutputStream), v2 its UTF-8 bytes.
func hasher(newHash func() hash.Hash, salt []byte, v2 bool) func(Column) *Mapper {
	return func(col Column) *Mapper {
		m := &Mapper{params: []schema.Param{{Key: ParamMasked, Value: "true"}}}
		if !col.isCharacter() {
			return m
		}
		m.value = func(v any) any {
			s, ok := v.(string)
			if !ok {
				return v // null, and no other value of a character column reaches here
			}
			h := newHash()
			h.Write(salt)
			if v2 {
				h.Write([]byte(s))
			} else {
				h.Write(javaSerializedString(s))
			}
			sum := hex.EncodeToString(h.Sum(nil))
			if col.Length > 0 && len(sum) > col.Length {
				sum = sum[:col.Length]
			}
			return sum
		}
		return m
	}
}

// javaSerializedString is the stream ObjectOutputStream.writeObject writes for a String: the stream
// header, then TC_STRING with a 2-byte length (TC_LONGSTRING with an 8-byte length beyond 65535 bytes)
// and the string in modified UTF-8.
func javaSerializedString(s string) []byte {
	var body []byte
	for _, u := range utf16.Encode([]rune(s)) {
		switch {
		case u >= 0x01 && u <= 0x7f:
			body = append(body, byte(u))
		case u <= 0x7ff: // U+0000 too: modified UTF-8 writes it in two bytes
			body = append(body, byte(0xc0|u>>6), byte(0x80|u&0x3f))
		default: // each half of a surrogate pair on its own
			body = append(body, byte(0xe0|u>>12), byte(0x80|(u>>6)&0x3f), byte(0x80|u&0x3f))
		}
	}
	out := []byte{0xac, 0xed, 0x00, 0x05}
	if len(body) <= 0xffff {
		out = append(out, 0x74)
		out = binary.BigEndian.AppendUint16(out, uint16(len(body)))
	} else {
		out = append(out, 0x7c)
		out = binary.BigEndian.AppendUint64(out, uint64(len(body)))
	}
	return append(out, body...)
}

// digest finds a hash by its Java MessageDigest name (case-insensitive, with the JDK's aliases).
func digest(name string) (func() hash.Hash, error) {
	switch strings.ToUpper(name) {
	case "MD5":
		return md5.New, nil
	case "SHA-1", "SHA1", "SHA":
		return sha1.New, nil
	case "SHA-224", "SHA224":
		return sha256.New224, nil
	case "SHA-256", "SHA256":
		return sha256.New, nil
	case "SHA-384", "SHA384":
		return sha512.New384, nil
	case "SHA-512", "SHA512":
		return sha512.New, nil
	case "SHA-512/224", "SHA512/224":
		return sha512.New512_224, nil
	case "SHA-512/256", "SHA512/256":
		return sha512.New512_256, nil
	case "SHA3-224":
		return func() hash.Hash { return sha3.New224() }, nil
	case "SHA3-256":
		return func() hash.Hash { return sha3.New256() }, nil
	case "SHA3-384":
		return func() hash.Hash { return sha3.New384() }, nil
	case "SHA3-512":
		return func() hash.Hash { return sha3.New512() }, nil
	}
	return nil, errors.New("unknown hash algorithm " + strconv.Quote(name) + " in the key: use a Java MessageDigest name such as SHA-256, SHA-512, SHA3-256, SHA-1 or MD5")
}

// propagator is PropagateSourceMetadataToSchemaParameter: the source type, length, scale and comment as
// schema parameters, and the column's own name (field.name.adjustment.mode may have changed the field's).
func propagator(col Column) *Mapper {
	params := []schema.Param{{Key: ParamSourceType, Value: strings.ToUpper(col.TypeName)}}
	if col.Length != -1 {
		params = append(params, schema.Param{Key: ParamSourceLength, Value: strconv.Itoa(col.Length)})
	}
	if col.HasScale {
		params = append(params, schema.Param{Key: ParamSourceScale, Value: strconv.Itoa(col.Scale)})
	}
	if col.Comment != "" {
		params = append(params, schema.Param{Key: ParamSourceComment, Value: col.Comment})
	}
	params = append(params, schema.Param{Key: ParamSourceName, Value: col.Name})
	return &Mapper{params: params}
}
