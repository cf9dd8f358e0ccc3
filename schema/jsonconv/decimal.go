package jsonconv

import (
	"encoding/base64"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/schema/javacompat"
)

// appendDecimalBase64 writes the BASE64 form of a Connect Decimal: the two's complement bytes of the
// unscaled value, base64 with padding, as a JSON string.
func appendDecimalBase64(dst []byte, d schema.Decimal) []byte {
	var small [32]byte
	raw := javacompat.AppendBigIntegerBytes(small[:0], d.Unscaled)
	dst = append(dst, '"')
	dst = base64.StdEncoding.AppendEncode(dst, raw)
	return append(dst, '"')
}
