package catalog

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/schema/javacompat"
)

// pgInterval is pgjdbc's PGInterval as Debezium reads pgoutput's interval text into it.
type pgInterval struct {
	years, months, days, hours, minutes int32
	wholeSeconds, microSeconds          int32
}

// parseInterval is PGInterval.setValue for PostgreSQL's default IntervalStyle (postgres), e.g.
// "1 year 2 mons 3 days 04:05:06.78" or "-1 days +02:03:00". Like pgjdbc it pairs a number with the unit
// word after it, reads an hh:mm:ss token on its own, and ignores words it does not know.
func parseInterval(s string) (pgInterval, error) {
	var years, months, days, hours, minutes int32
	var seconds float64
	if strings.HasPrefix(s, "@") || strings.HasPrefix(s, "P") {
		return pgInterval{}, fmt.Errorf("interval %q: only IntervalStyle postgres is supported", truncate(s))
	}
	bad := func() (pgInterval, error) { return pgInterval{}, fmt.Errorf("invalid interval %q", truncate(s)) }
	atoi := func(t string) (int32, bool) {
		if t == "" {
			return 0, true
		}
		v, err := strconv.ParseInt(t, 10, 32)
		return int32(v), err == nil
	}
	fields := strings.Fields(strings.ToLower(strings.ReplaceAll(s, "+", " ")))
	var value string
	for i, tok := range fields {
		if i%2 == 0 {
			colon := strings.IndexByte(tok, ':')
			if colon < 0 {
				value = tok
				continue
			}
			neg := tok[0] == '-'
			if neg {
				tok = tok[1:]
				colon--
			}
			var ok1, ok2 bool
			hours, ok1 = atoi(tok[:colon])
			if colon+3 > len(tok) {
				return bad()
			}
			minutes, ok2 = atoi(tok[colon+1 : colon+3])
			if !ok1 || !ok2 {
				return bad()
			}
			seconds = 0
			if j := strings.IndexByte(tok[colon+1:], ':'); j >= 0 {
				v, err := strconv.ParseFloat(tok[colon+1+j+1:], 64)
				if err != nil {
					return bad()
				}
				seconds = v
			}
			if neg {
				hours, minutes, seconds = -hours, -minutes, -seconds
			}
			value = ""
			continue
		}
		var ok = true
		switch {
		case strings.HasPrefix(tok, "year"):
			years, ok = atoi(value)
		case strings.HasPrefix(tok, "mon"):
			months, ok = atoi(value)
		case strings.HasPrefix(tok, "day"):
			days, ok = atoi(value)
		case strings.HasPrefix(tok, "hour"):
			hours, ok = atoi(value)
		case strings.HasPrefix(tok, "min"):
			minutes, ok = atoi(value)
		case strings.HasPrefix(tok, "sec"):
			if value != "" {
				v, err := strconv.ParseFloat(value, 64)
				seconds, ok = v, err == nil
			}
		}
		if !ok {
			return bad()
		}
	}
	iv := pgInterval{years: years, months: months, days: days, hours: hours, minutes: minutes}
	// setSeconds: Math.round(seconds * 1e6), split into whole seconds and microseconds.
	total := javacompat.Round(float64(seconds * 1e6))
	iv.wholeSeconds, iv.microSeconds = int32(total/1_000_000), int32(total%1_000_000)
	return iv, nil
}

// seconds is PGInterval.getSeconds.
func (iv pgInterval) seconds() float64 {
	return float64(iv.wholeSeconds) + float64(iv.microSeconds)/1_000_000
}

// micros is MicroDuration.durationMicros with DAYS_PER_MONTH_AVG = 365.25/12: floating-point arithmetic
// in Java's order, each step rounded (the explicit conversions keep Go from fusing multiply-adds).
func (iv pgInterval) micros() int64 {
	const daysPerMonthAvg = 365.25 / 12.0
	numberOfDays := float64(float64(iv.years*12+iv.months)*daysPerMonthAvg) + float64(iv.days)
	numberOfSeconds := float64(float64(float64(float64(numberOfDays*24)+float64(iv.hours))*60)+float64(iv.minutes))*60 + iv.seconds()
	return javacompat.DoubleToLong(float64(numberOfSeconds * 1e6))
}

// isoString is Interval.toIsoString(years, months, days, hours, minutes, BigDecimal.valueOf(seconds)):
// the seconds as Double.toString writes them, cut to 9 fraction digits, trailing zeros stripped.
func (iv pgInterval) isoString() string {
	secs := strconv.FormatFloat(iv.seconds(), 'f', -1, 64)
	neg := strings.HasPrefix(secs, "-")
	secs = strings.TrimPrefix(secs, "-")
	whole, frac, _ := strings.Cut(secs, ".")
	if len(frac) > 9 {
		frac = frac[:9] // RoundingMode.DOWN
	}
	frac = strings.TrimRight(frac, "0")
	secs = whole
	if frac != "" {
		secs += "." + frac
	}
	if neg && strings.Trim(secs, "0.") != "" {
		secs = "-" + secs
	}
	return fmt.Sprintf("P%dY%dM%dDT%dH%dM%sS", iv.years, iv.months, iv.days, iv.hours, iv.minutes, secs)
}

func (b builder) intervalType() valueType {
	if b.m.Interval == IntervalString {
		decode := func(s string) (any, error) {
			iv, err := parseInterval(s)
			if err != nil {
				return nil, err
			}
			return iv.isoString(), nil
		}
		return valueType{schema: schema.Interval(), decode: decode, fallback: "P0Y0M0DT0H0M0S"}
	}
	decode := func(s string) (any, error) {
		iv, err := parseInterval(s)
		if err != nil {
			return nil, err
		}
		return iv.micros(), nil
	}
	return valueType{schema: schema.MicroDuration(), decode: decode, fallback: int64(0)}
}
