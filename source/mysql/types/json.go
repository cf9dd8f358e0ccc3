package types

import (
	"bytes"
	"math/big"
	"strconv"
	"strings"

	"github.com/cdcd/cdcd/schema/javacompat"
)

// debeziumJSON rewrites the text go-mysql renders for a MySQL binary JSON value (SyncerConfig turns on
// its MySQL-text mode, which keeps the document's key order and writes no spaces) into the text
// Debezium's binlog client (JsonBinary.parseAsString with its JsonStringFormatter) writes:
//
//   - a number with a fraction or an exponent is a DOUBLE, written as Java's Double.toString, or, where
//     that would use an exponent, as the exact decimal expansion of the double (BigDecimal.toPlainString);
//   - control characters in strings are escaped with upper-case hex digits (\u001F).
//
// Known differences, outside what JSON columns usually hold: a DECIMAL inside a document (from CAST) is
// read as a DOUBLE, and dates, times and other opaque values keep go-mysql's rendering.
func debeziumJSON(text string) string {
	var out bytes.Buffer
	out.Grow(len(text))
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case c == '"':
			i = copyString(&out, text, i)
		case c == '-' || (c >= '0' && c <= '9'):
			j := i + 1
			for j < len(text) && strings.IndexByte("0123456789.eE+-", text[j]) >= 0 {
				j++
			}
			writeNumber(&out, text[i:j])
			i = j
		default:
			out.WriteByte(c)
			i++
		}
	}
	return out.String()
}

// copyString copies the string literal starting at text[i] and returns the index after it.
func copyString(out *bytes.Buffer, text string, i int) int {
	out.WriteByte('"')
	for i++; i < len(text); i++ {
		c := text[i]
		out.WriteByte(c)
		switch c {
		case '"':
			return i + 1
		case '\\':
			if i+1 < len(text) && text[i+1] == 'u' && i+5 < len(text) {
				out.WriteString("u" + strings.ToUpper(text[i+2:i+6]))
				i += 5
			} else if i+1 < len(text) {
				i++
				out.WriteByte(text[i])
			}
		}
	}
	return i
}

func writeNumber(out *bytes.Buffer, tok string) {
	if !strings.ContainsAny(tok, ".eE") {
		out.WriteString(tok)
		return
	}
	f, err := strconv.ParseFloat(tok, 64)
	if err != nil {
		out.WriteString(tok)
		return
	}
	java := javacompat.AppendDouble(nil, f, 64)
	if !bytes.ContainsRune(java, 'E') {
		out.Write(java)
		return
	}
	out.WriteString(exactDecimal(f))
}

// exactDecimal is new BigDecimal(f).toPlainString(): every digit of the binary value.
func exactDecimal(f float64) string {
	r := new(big.Rat).SetFloat64(f)
	// The denominator is a power of two, 2^k, whose reciprocal has exactly k decimal digits.
	s := r.FloatString(r.Denom().BitLen() - 1)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}
