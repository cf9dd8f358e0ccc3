// Package javacompat holds the rules of the Java platform that cdcd must follow to the letter so that
// what it writes matches what Kafka, Kafka Connect and Debezium (all Java) write: offsets compared by
// their bytes, messages users grep for, JSON fields in the order Jackson meets them.
//
// What belongs here is a rule of a Java API itself, the same whichever cdcd component needs it:
//   - java.util.HashMap / HashSet iteration order and String.hashCode (HashMapOrder, StringHash);
//   - Java's number printing: Double.toString and Float.toString (AppendDouble, FormatDouble),
//     BigDecimal.toString and toPlainString (AppendBigDecimal, FormatBigDecimal, FormatBigDecimalPlain),
//     BigInteger.toByteArray (AppendBigIntegerBytes);
//   - Java's number parsing: Double.parseDouble, Long.parseLong and its narrower siblings, new
//     BigDecimal(String) (ParseDouble, ParseInteger, ParseBigDecimal);
//   - Java's numeric conversions: the (long) and (int) casts of a double, Math.round, BigDecimal.setScale
//     (DoubleToLong, DoubleToInt, Round, SetScale, SetScaleHalfUp);
//   - String.trim and the trim().isEmpty() test (Trim, TrimIsEmpty).
//
// What does not: how one component applies these rules (which Connect value becomes which Java class,
// the messages a particular transform throws), Jackson's JSON syntax (schema/jsonconv), and date and
// time formats.
//
// The package imports nothing of cdcd, so that every layer can use it, package schema included. A
// BigDecimal is therefore passed as Java holds one, an unscaled *big.Int and a scale: the two fields of
// schema.Decimal.
package javacompat
