package catalog

import (
	"bytes"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"

	"github.com/cdcd/cdcd/schema"
)

// Dates are proleptic Gregorian day numbers relative to 1970-01-01 and times are nanoseconds of the day,
// as java.time counts them. Go's time package is not used: PostgreSQL's range (4713 BC to 294276 AD and
// beyond for dates) and Java's year formatting are easier to follow with plain arithmetic.

const (
	nanosPerSecond = int64(1_000_000_000)
	nanosPerDay    = 86_400 * nanosPerSecond
	microsPerDay   = 86_400_000_000
)

// Debezium's stand-ins for ±infinity (PostgresValueConverter): timestamps use pgjdbc's
// DATE_POSITIVE_INFINITY / DATE_NEGATIVE_INFINITY read as microseconds; streamed dates use the LocalDates
// "-5877611-06-21" (positive!) and "-5877611-06-22". A date read through JDBC (a snapshot's, and every
// array's element: PgArray) is pgjdbc's java.sql.Date of those same milliseconds, whose LocalDate's epoch
// day Debezium truncates to an int (io.debezium.time.Date.toEpochDay in a UTC JVM).
const (
	positiveInfinityMicros  = int64(9223372036825200000)
	negativeInfinityMicros  = int64(-9223372036832400000)
	positiveInfinityDay     = int64(-2147472692)
	negativeInfinityDay     = int64(-2147472691)
	positiveInfinityJDBCDay = int64(-622191234)
	negativeInfinityJDBCDay = int64(-625821272)
)

// daysFromCivil is the epoch day of a proleptic Gregorian date (H. Hinnant's algorithm).
func daysFromCivil(y int64, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era--
	}
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := int64((153*mp+2)/5 + d - 1)
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

func civilFromDays(z int64) (y int64, m, d int) {
	z += 719468
	era := z / 146097
	if z < 0 && z%146097 != 0 {
		era--
	}
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = int(doy - (153*mp+2)/5 + 1)
	m = int(mp + 3)
	if m > 12 {
		m -= 12
	}
	if m <= 2 {
		y++
	}
	return y, m, d
}

// appendJavaYear formats a year as ISO_LOCAL_DATE does (SignStyle.EXCEEDS_PAD, width 4): "+" past 9999,
// "-" before year 0, zero-padded to four digits.
func appendJavaYear(b []byte, y int64) []byte {
	switch {
	case y > 9999:
		return strconv.AppendInt(append(b, '+'), y, 10)
	case y < 0:
		return appendPadded(append(b, '-'), -y, 4)
	}
	return appendPadded(b, y, 4)
}

// appendPadded appends v (not negative) with leading zeros to at least width digits.
func appendPadded(b []byte, v int64, width int) []byte {
	var digits [20]byte
	d := strconv.AppendInt(digits[:0], v, 10)
	for i := len(d); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, d...)
}

// Temporal strings are built append-style into a stack buffer (isoBuffer) and become a string once:
// every timestamptz column of every change goes through here, and joining small strings allocated each
// piece.

// isoBuffer holds the longest temporal string: a signed 19-digit year, date, time, nine fraction digits.
type isoBuffer [48]byte

// appendISODate is ISO_LOCAL_DATE.
func appendISODate(b []byte, day int64) []byte {
	y, m, d := civilFromDays(day)
	b = append(appendJavaYear(b, y), '-')
	b = append(appendPadded(b, int64(m), 2), '-')
	return appendPadded(b, int64(d), 2)
}

// appendISOTime is ISO_LOCAL_TIME with a fraction of exactly width digits when width is 1–9 (the
// formatter ZonedTimestamp builds for a column "length"), else of as few digits as needed, none for a
// whole second.
func appendISOTime(b []byte, nanos int64, width int) []byte {
	sec := nanos / nanosPerSecond
	b = append(appendPadded(b, sec/3600, 2), ':')
	b = append(appendPadded(b, sec/60%60, 2), ':')
	b = appendPadded(b, sec%60, 2)
	var digits [9]byte
	frac := appendPadded(digits[:0], nanos%nanosPerSecond, 9)
	if width < 1 || width > 9 {
		width = len(bytes.TrimRight(frac, "0"))
	}
	if width == 0 {
		return b
	}
	return append(append(b, '.'), frac[:width]...)
}

// parseDate reads PostgreSQL's ISO date output, "2016-11-04" or "0044-03-15 BC" (DateTimeFormat.date).
func parseDate(s string) (int64, error) {
	s, bc := strings.CutSuffix(s, " BC")
	ys, rest, ok1 := strings.Cut(s, "-")
	ms, ds, ok2 := strings.Cut(rest, "-")
	y, err1 := strconv.ParseInt(ys, 10, 64)
	m, err2 := strconv.Atoi(ms)
	d, err3 := strconv.Atoi(ds)
	if !ok1 || !ok2 || err1 != nil || err2 != nil || err3 != nil || len(ys) < 4 || y < 1 && !bc || m < 1 || m > 12 || d < 1 || d > 31 {
		return 0, fmt.Errorf("invalid date %q", truncate(s))
	}
	if bc {
		y = 1 - y // year-of-era to proleptic year
	}
	return daysFromCivil(y, m, d), nil
}

// parseClock reads "HH:MM:SS[.fraction]" with up to nine fraction digits and returns the nanoseconds
// and what follows (an offset). Hours may exceed 23 only where the caller allows it.
func parseClock(s string) (nanos int64, rest string, err error) {
	bad := func() error { return fmt.Errorf("invalid time %q", truncate(s)) }
	if len(s) < 8 || s[2] != ':' || s[5] != ':' {
		return 0, "", bad()
	}
	h, err1 := strconv.Atoi(s[0:2])
	mi, err2 := strconv.Atoi(s[3:5])
	se, err3 := strconv.Atoi(s[6:8])
	if err1 != nil || err2 != nil || err3 != nil || mi > 59 || se > 59 {
		return 0, "", bad()
	}
	nanos = (int64(h)*3600 + int64(mi)*60 + int64(se)) * nanosPerSecond
	rest = s[8:]
	if strings.HasPrefix(rest, ".") {
		i := 1
		for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
			i++
		}
		digits := rest[1:i]
		if digits == "" || len(digits) > 9 {
			return 0, "", bad()
		}
		f, _ := strconv.ParseInt(digits+strings.Repeat("0", 9-len(digits)), 10, 64)
		nanos += f
		rest = rest[i:]
	}
	return nanos, rest, nil
}

// parseOffset reads "+HH", "+HH:MM" or "+HH:MM:SS" and returns seconds east of UTC.
func parseOffset(s string) (int64, error) {
	bad := func() error { return fmt.Errorf("invalid time zone offset %q", s) }
	if len(s) < 3 || (s[0] != '+' && s[0] != '-') {
		return 0, bad()
	}
	sign := int64(1)
	if s[0] == '-' {
		sign = -1
	}
	var total int64
	for i, part := range strings.Split(s[1:], ":") {
		v, err := strconv.Atoi(part)
		if err != nil || len(part) != 2 || i > 2 {
			return 0, bad()
		}
		total += int64(v) * []int64{3600, 60, 1}[i]
	}
	return sign * total, nil
}

// parseTimestamp reads PostgreSQL's ISO timestamp output, "2016-11-04 13:51:30.123456", with an offset
// ("+02", "+05:30", "+00:53:28") when withZone, and an optional " BC" last (DateTimeFormat).
// It returns the UTC epoch day and nanosecond of that day.
func parseTimestamp(s string, withZone bool) (day, nanos int64, err error) {
	s, bc := strings.CutSuffix(s, " BC")
	date, clock, ok := strings.Cut(s, " ")
	if !ok {
		return 0, 0, fmt.Errorf("invalid timestamp %q", truncate(s))
	}
	if bc {
		date += " BC"
	}
	if day, err = parseDate(date); err != nil {
		return 0, 0, err
	}
	nanos, rest, err := parseClock(clock)
	if err != nil || nanos >= nanosPerDay {
		return 0, 0, fmt.Errorf("invalid timestamp %q", truncate(s))
	}
	if !withZone {
		if rest != "" {
			return 0, 0, fmt.Errorf("invalid timestamp %q", truncate(s))
		}
		return day, nanos, nil
	}
	off, err := parseOffset(rest)
	if err != nil {
		return 0, 0, err
	}
	nanos -= off * nanosPerSecond
	day += floorDiv(nanos, nanosPerDay)
	return day, floorMod(nanos, nanosPerDay), nil
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func floorMod(a, b int64) int64 { return a - floorDiv(a, b)*b }

// epochMicros is the instant's microseconds since the epoch; ok is false on int64 overflow.
func epochMicros(day, nanos int64) (int64, bool) {
	return mulAdd(day, microsPerDay, nanos/1000)
}

func mulAdd(a, b, c int64) (int64, bool) {
	hi, lo := bits.Mul64(uint64(abs(a)), uint64(b))
	if hi != 0 || lo > math.MaxInt64 {
		return 0, false
	}
	p := int64(lo)
	if a < 0 {
		p = -p
	}
	sum := p + c
	if (c > 0 && sum < p) || (c < 0 && sum > p) {
		return 0, false
	}
	return sum, true
}

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// dateType reads dates as proleptic Gregorian days, as Debezium's streamed dates are. Through JDBC
// (snapshots, and array elements wherever they come from: inArray) Debezium reads a java.sql.Date, which
// is wrong before the Gregorian reform (BC dates lose their era, 1582-10-05…14 move ten days on): cdcd
// keeps the day PostgreSQL holds there (README, differences from Debezium), and takes only Debezium's
// stand-ins for ±infinity from that path.
func (b builder) dateType(inArray bool) valueType {
	days := func(positive, negative int64) func(string) (int64, error) {
		return func(s string) (int64, error) {
			switch s {
			case "infinity":
				return positive, nil
			case "-infinity":
				return negative, nil
			}
			return parseDate(s)
		}
	}
	decode, jdbc := days(positiveInfinityDay, negativeInfinityDay), days(positiveInfinityJDBCDay, negativeInfinityJDBCDay)
	if inArray {
		decode = jdbc
	}
	switch b.m.TimePrecision {
	case TimeIsoString:
		iso := func(s string) (any, error) { // IsoDate: ISO_OFFSET_DATE in UTC
			day, err := decode(s)
			if err != nil {
				return nil, err
			}
			var buf isoBuffer
			return string(append(appendISODate(buf[:0], day), 'Z')), nil
		}
		return valueType{schema: schema.IsoDate(), decode: iso, fallback: "1970-01-01Z"}
	case TimeConnect:
		return valueType{schema: schema.ConnectDate(), decode: epochDayDecoder(decode), snapshotDecode: epochDayDecoder(jdbc), fallback: int32(0)}
	}
	return valueType{schema: schema.DebeziumDate(), decode: epochDayDecoder(decode), snapshotDecode: epochDayDecoder(jdbc), fallback: int32(0)}
}

func epochDayDecoder(decode func(string) (int64, error)) decodeFunc {
	return func(s string) (any, error) {
		day, err := decode(s)
		if err != nil {
			return nil, err
		}
		if day < math.MinInt32 || day > math.MaxInt32 {
			return nil, fmt.Errorf("date %q out of range", s)
		}
		return int32(day), nil
	}
}

// timeType follows PostgresValueConverter.convertTime: pgoutput's text goes through Strings.asDuration
// (hours may reach 24), then the mode picks the unit. Inside arrays pgjdbc reads a java.sql.Time, which
// keeps milliseconds only and wraps 24:00:00 to midnight.
func (b builder) timeType(precision int, inArray bool) valueType {
	parse := func(s string) (int64, error) {
		nanos, rest, err := parseClock(s)
		if err != nil || rest != "" || nanos > nanosPerDay {
			return 0, fmt.Errorf("invalid time %q", truncate(s))
		}
		if inArray {
			nanos = nanos / 1_000_000 * 1_000_000 % nanosPerDay
		}
		return nanos, nil
	}
	unit := func(s *schema.Schema, div int64, fallback any, toValue func(int64) any) valueType {
		decode := func(t string) (any, error) {
			nanos, err := parse(t)
			if err != nil {
				return nil, err
			}
			return toValue(nanos / div), nil
		}
		return valueType{schema: s, decode: decode, fallback: fallback}
	}
	millis := func(s *schema.Schema) valueType {
		return unit(s, 1_000_000, int32(0), func(v int64) any { return int32(v) })
	}
	micros := unit(schema.MicroTime(), 1000, int64(0), func(v int64) any { return v })
	nanos := unit(schema.NanoTime(), 1, int64(0), func(v int64) any { return v })
	switch b.m.TimePrecision {
	case TimeAdaptive:
		switch {
		case precision <= 3:
			return millis(schema.DebeziumTime())
		case precision <= 6:
			return micros
		}
		return nanos
	case TimeConnect:
		return millis(schema.ConnectTime())
	case TimeNanoseconds:
		return nanos
	case TimeIsoString:
		// IsoTime: LocalTime.of(0, 0).plus(duration), which wraps 24:00 to 00:00, at UTC.
		return unit(schema.IsoTime(), 1, "00:00:00Z", func(v int64) any {
			var buf isoBuffer
			return string(append(appendISOTime(buf[:0], v%nanosPerDay, 0), 'Z'))
		})
	}
	return micros // adaptive_time_microseconds, microseconds
}

// timetzType follows DateTimeFormat.timeWithTimeZone and ZonedTime: the time shifted to UTC (wrapping
// around midnight, 24:00:00 included) in ISO_OFFSET_TIME. Inside arrays pgjdbc's java.sql.Time ends up as whole seconds
// (PostgresValueConverter.resolveArrayValue goes through Time.toLocalTime).
func (b builder) timetzType(inArray bool) valueType {
	decode := func(s string) (any, error) {
		nanos, rest, err := parseClock(s)
		if err != nil || nanos > nanosPerDay {
			return nil, fmt.Errorf("invalid timetz %q", truncate(s))
		}
		// PostgreSQL's end of day, 24:00:00, is the next midnight, as java.time's parser resolves it.
		nanos %= nanosPerDay
		off, err := parseOffset(rest)
		if err != nil {
			return nil, err
		}
		if inArray {
			nanos -= nanos % nanosPerSecond
		}
		var buf isoBuffer
		return string(append(appendISOTime(buf[:0], floorMod(nanos-off*nanosPerSecond, nanosPerDay), 0), 'Z')), nil
	}
	return valueType{schema: schema.ZonedTime(), decode: decode, fallback: "00:00:00Z"}
}

// timestampType follows PostgresValueConverter for timestamp without time zone: the wall-clock value
// taken as UTC, ±infinity as Debezium's stand-in instants (Long.MAX/MIN_VALUE in nanoseconds).
func (b builder) timestampType(precision int) valueType {
	parse := func(s string) (micros int64, infinite bool, err error) {
		switch s {
		case "infinity":
			return positiveInfinityMicros, true, nil
		case "-infinity":
			return negativeInfinityMicros, true, nil
		}
		day, nanos, err := parseTimestamp(s, false)
		if err != nil {
			return 0, false, err
		}
		m, ok := epochMicros(day, nanos)
		if !ok {
			return 0, false, fmt.Errorf("timestamp %q out of range", s)
		}
		return m, false, nil
	}
	epoch := func(s *schema.Schema, convert func(micros int64, infinite bool) (any, error)) valueType {
		decode := func(t string) (any, error) {
			m, inf, err := parse(t)
			if err != nil {
				return nil, err
			}
			return convert(m, inf)
		}
		return valueType{schema: s, decode: decode, fallback: int64(0)}
	}
	millis := func(s *schema.Schema) valueType {
		return epoch(s, func(m int64, _ bool) (any, error) { return floorDiv(m, 1000), nil })
	}
	micros := epoch(schema.MicroTimestamp(), func(m int64, _ bool) (any, error) { return m, nil })
	nanos := epoch(schema.NanoTimestamp(), func(m int64, inf bool) (any, error) {
		switch {
		case inf && m > 0:
			return int64(math.MaxInt64), nil
		case inf:
			return int64(math.MinInt64), nil
		}
		n, ok := mulAdd(m, 1000, 0)
		if !ok { // NanoTimestamp's range is about 1677 to 2262
			return nil, fmt.Errorf("timestamp out of the range of epoch nanoseconds; use time.precision.mode microseconds or isostring")
		}
		return n, nil
	})
	switch b.m.TimePrecision {
	case TimeAdaptive, TimeAdaptiveTimeMicroseconds:
		switch {
		case precision <= 3:
			return millis(schema.DebeziumTimestamp())
		case precision <= 6:
			return micros
		}
		return nanos
	case TimeConnect:
		return millis(schema.ConnectTimestamp())
	case TimeNanoseconds:
		return nanos
	case TimeIsoString:
		vt := epoch(schema.IsoTimestamp(), func(m int64, _ bool) (any, error) {
			day := floorDiv(m, microsPerDay)
			var buf isoBuffer
			b := append(appendISODate(buf[:0], day), 'T')
			return string(append(appendISOTime(b, floorMod(m, microsPerDay)*1000, 0), 'Z')), nil
		})
		vt.fallback = "1970-01-01T00:00:00Z"
		return vt
	}
	return micros
}

// timestamptzType follows PostgresValueConverter.convertTimestampWithZone and ZonedTimestamp: UTC, and
// the fraction padded to the column's precision (pgjdbc reports 6 without a modifier), since the column
// "length" is 1–9; timestamptz(0) prints no fraction. ±infinity stay the strings "infinity"/"-infinity".
// The fallback goes through the OffsetDateTime overload, which never pads.
func (b builder) timestamptzType(precision int) valueType {
	decode := func(s string) (any, error) {
		if s == "infinity" || s == "-infinity" {
			return s, nil
		}
		day, nanos, err := parseTimestamp(s, true)
		if err != nil {
			return nil, err
		}
		var buf isoBuffer
		b := append(appendISODate(buf[:0], day), 'T')
		return string(append(appendISOTime(b, nanos, precision), 'Z')), nil
	}
	return valueType{schema: schema.ZonedTimestamp(), decode: decode, fallback: "1970-01-01T00:00:00Z"}
}
