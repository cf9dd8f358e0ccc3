package jsonconv

// AppendJavaDouble appends f as Java's Double.toString (JDK 19 and later) writes it, or Float.toString of
// float32(f) when bitSize is 32. Other Connect-compatible writers (the header converter, the offsets
// store) share it so that every number cdcd prints looks as Java prints it.
func AppendJavaDouble(dst []byte, f float64, bitSize int) []byte {
	return appendJavaDouble(dst, f, bitSize)
}

// AppendJSONString appends s as a JSON string exactly as Jackson writes it for Connect's JsonConverter (see
// appendJSONString); the offsets store writes its keys and values with it.
func AppendJSONString(dst []byte, s string) []byte {
	return appendJSONString(dst, s)
}
