package jsonconv

// AppendJacksonFloat appends f as Jackson writes a Java double (bitSize 64) or float (32), see
// appendJavaFloatJSON; the Avro converter's schema defaults are written with it.
func AppendJacksonFloat(dst []byte, f float64, bitSize int) []byte {
	return appendJavaFloatJSON(dst, f, bitSize)
}

// AppendJSONString appends s as a JSON string exactly as Jackson writes it for Connect's JsonConverter (see
// appendJSONString); the offsets store writes its keys and values with it.
func AppendJSONString(dst []byte, s string) []byte {
	return appendJSONString(dst, s)
}
