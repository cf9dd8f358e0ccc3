package types

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// civil is a DATE or DATETIME value as the server writes it, before any validation: zero dates
// ('0000-00-00', '2020-00-15') are representable.
type civil struct {
	year, month, day     int
	hour, minute, second int
	nanos                int
}

// parseCivil reads "YYYY-MM-DD[ HH:MM:SS[.ffffff]]", the text protocol's and go-mysql's (ParseTime off)
// form of DATE, DATETIME and TIMESTAMP values.
func parseCivil(s string) (civil, error) {
	var c civil
	date, clock, hasClock := strings.Cut(s, " ")
	if !parseTriple(date, '-', &c.year, &c.month, &c.day) {
		return c, fmt.Errorf("%w: date %q", ErrValue, s)
	}
	if !hasClock {
		return c, nil
	}
	whole, frac, _ := strings.Cut(clock, ".")
	if !parseTriple(whole, ':', &c.hour, &c.minute, &c.second) {
		return c, fmt.Errorf("%w: time of day %q", ErrValue, s)
	}
	var err error
	if c.nanos, err = fractionNanos(frac); err != nil {
		return c, fmt.Errorf("%w: fraction %q", ErrValue, s)
	}
	return c, nil
}

// epochFirstSecond reads a binlog TIMESTAMP that go-mysql wrote as a zero date with a fraction: the
// stored second is 0 but the fraction is not, so it is an instant inside the epoch's first second
// ('1970-01-01 00:00:00.5' UTC), not the zero TIMESTAMP, and Debezium writes it as that instant.
func epochFirstSecond(d civil) civil {
	if d == (civil{nanos: d.nanos}) && d.nanos != 0 {
		return civil{year: 1970, month: 1, day: 1, nanos: d.nanos}
	}
	return d
}

// parseTriple reads "a<sep>b<sep>c" of unsigned decimal numbers.
func parseTriple(s string, sep byte, a, b, c *int) bool {
	first, rest, ok1 := strings.Cut(s, string(sep))
	second, third, ok2 := strings.Cut(rest, string(sep))
	if !ok1 || !ok2 {
		return false
	}
	var err1, err2, err3 error
	*a, err1 = atoi(first)
	*b, err2 = atoi(second)
	*c, err3 = atoi(third)
	return err1 == nil && err2 == nil && err3 == nil && *a >= 0 && *b >= 0 && *c >= 0
}

func atoi(s string) (int, error) {
	if s == "" {
		return 0, strconv.ErrSyntax
	}
	return strconv.Atoi(s)
}

// fractionNanos reads the digits after a decimal point as nanoseconds (left-justified to 9 digits).
func fractionNanos(frac string) (int, error) {
	if frac == "" {
		return 0, nil
	}
	if len(frac) > 9 {
		frac = frac[:9]
	}
	n, err := strconv.Atoi(frac + strings.Repeat("0", 9-len(frac)))
	if err != nil || n < 0 {
		return 0, strconv.ErrSyntax
	}
	return n, nil
}

// zeroDate is BinlogValueConverters' test for the MariaDB snapshot (stringToLocalDate,
// containsZeroValuesInDatePart): a zero month or day. A zero year alone is a valid date there.
func (c civil) zeroDate() bool { return c.month == 0 || c.day == 0 }

// anyZeroPart is RowDeserializers' test for binlog DATE and DATETIME values: any zero date part.
func (c civil) anyZeroPart() bool { return c.year == 0 || c.zeroDate() }

// adjusted applies BinlogValueConverters.adjustTemporal unless the time adjuster is off: two-digit
// years 0-69 become 2000-2069, 70-99 become 1970-1999.
func (m Modes) adjusted(c civil) civil {
	if m.NoTimeAdjuster {
		return c
	}
	switch {
	case c.year >= 0 && c.year <= 69:
		c.year += 2000
	case c.year >= 70 && c.year <= 99:
		c.year += 1900
	}
	return c
}

// utc is the wall-clock value read as UTC: Debezium treats DATETIME values as UTC, and TIMESTAMP
// values are UTC on the sessions this package prepares.
func (c civil) utc() time.Time {
	return time.Date(c.year, time.Month(c.month), c.day, c.hour, c.minute, c.second, c.nanos, time.UTC)
}

func civilOf(t time.Time) civil {
	t = t.UTC()
	return civil{t.Year(), int(t.Month()), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond()}
}

const secondsPerDay = 24 * 60 * 60

// epochDay is LocalDate.toEpochDay.
func (c civil) epochDay() int32 {
	secs := time.Date(c.year, time.Month(c.month), c.day, 0, 0, 0, 0, time.UTC).Unix()
	return int32(floorDiv(secs, secondsPerDay))
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// zonedTimestamp formats t in UTC as ZonedTimestamp.toIsoString does: with a column length of 1-9 the
// fraction has exactly that many digits (a ZonedDateTime from the binlog, DBZ-5996); otherwise
// ISO_OFFSET_DATE_TIME, whose fraction drops trailing zeros (a java.sql.Timestamp from the snapshot).
func zonedTimestamp(t time.Time, width int) string {
	t = t.UTC()
	b := make([]byte, 0, 32)
	b = t.AppendFormat(b, "2006-01-02T15:04:05")
	b = appendFraction(b, t.Nanosecond(), width)
	return string(append(b, 'Z'))
}

// appendFraction writes ".ddd" for nanos: exactly width digits when width is 1-9, else the shortest
// form without trailing zeros, and nothing for zero.
func appendFraction(b []byte, nanos, width int) []byte {
	digits := fmt.Sprintf("%09d", nanos)
	if width >= 1 && width <= 9 {
		return append(append(b, '.'), digits[:width]...)
	}
	digits = strings.TrimRight(digits, "0")
	if digits == "" {
		return b
	}
	return append(append(b, '.'), digits...)
}

// timeFieldPattern is BinlogValueConverters.TIME_FIELD_PATTERN.
var timeFieldPattern = regexp.MustCompile(`^(-?[0-9]*):([0-9]*)(:([0-9]*))?(\.([0-9]*))?$`)

// parseDuration is BinlogValueConverters.stringToDuration: a TIME value ("-838:59:59.000000") as
// nanoseconds. A leading minus negates the whole value, also when the hours are zero.
func parseDuration(s string) (int64, error) {
	m := timeFieldPattern.FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("%w: TIME %q", ErrValue, s)
	}
	hours, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: TIME %q", ErrValue, s)
	}
	minutes, err := strconv.ParseInt(m[2], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: TIME %q", ErrValue, s)
	}
	var seconds, nanos int64
	if m[3] != "" {
		if seconds, err = strconv.ParseInt(m[4], 10, 64); err != nil {
			return 0, fmt.Errorf("%w: TIME %q", ErrValue, s)
		}
		n, err := fractionNanos(m[6])
		if err != nil {
			return 0, fmt.Errorf("%w: TIME %q", ErrValue, s)
		}
		nanos = int64(n)
	}
	const ns = int64(time.Second)
	var d int64
	if hours >= 0 {
		d = hours*3600*ns + minutes*60*ns + seconds*ns + nanos
	} else {
		d = hours*3600*ns - minutes*60*ns - seconds*ns - nanos
	}
	if strings.HasPrefix(s, "-") && d > 0 {
		d = -d
	}
	return d, nil
}
