package transforms

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// javaDateFormat is a java.text.SimpleDateFormat in the UTC zone and the English locale, as TimestampConverter
// and TimestampRouter configure theirs: it formats instants and parses text (leniently, as SimpleDateFormat
// does by default: out-of-range fields roll over, text after the pattern is ignored).
//
// Supported letters: G y M L d H k K h m s S E u a D F z Z X. The week-based letters (Y, w, W) are refused
// when the config is read. Like java.util.GregorianCalendar, dates before the Gregorian reform
// (1582-10-15) are in the Julian calendar: PostgreSQL's -infinity timestamps land there.
type javaDateFormat struct {
	pattern string
	tokens  []dateToken
	now     func() time.Time // the reference for two-digit years
}

// dateToken is a pattern letter repeated count times, or literal text when letter is 0.
type dateToken struct {
	letter  byte
	count   int
	literal string
}

const javaDateLetters = "GyMLdHkKhmsSEuaDFzZX"

func compileJavaDateFormat(pattern string) (*javaDateFormat, error) {
	f := &javaDateFormat{pattern: pattern, now: time.Now}
	for i := 0; i < len(pattern); {
		c := pattern[i]
		switch {
		case c == '\'':
			end := i + 1
			var lit strings.Builder
			for {
				q := strings.IndexByte(pattern[end:], '\'')
				if q < 0 {
					return nil, fmt.Errorf("unterminated quote")
				}
				lit.WriteString(pattern[end : end+q])
				end += q + 1
				if end < len(pattern) && pattern[end] == '\'' { // '' inside quotes is a quote
					lit.WriteByte('\'')
					end++
					continue
				}
				break
			}
			if end == i+2 { // '' outside quotes is a quote
				lit.WriteByte('\'')
			}
			f.tokens = append(f.tokens, dateToken{literal: lit.String()})
			i = end
		case (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'):
			if !strings.ContainsRune(javaDateLetters, rune(c)) {
				if strings.ContainsRune("YwW", rune(c)) {
					return nil, fmt.Errorf("the week-based pattern letter '%c' is not supported by cdcd", c)
				}
				return nil, fmt.Errorf("illegal pattern character '%c'", c)
			}
			n := 1
			for i+n < len(pattern) && pattern[i+n] == c {
				n++
			}
			f.tokens = append(f.tokens, dateToken{letter: c, count: n})
			i += n
		default:
			f.tokens = append(f.tokens, dateToken{literal: string(c)})
			i++
		}
	}
	return f, nil
}

var (
	monthNames = []string{"January", "February", "March", "April", "May", "June", "July", "August",
		"September", "October", "November", "December"}
	dayNames = []string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}
)

func (f *javaDateFormat) format(t time.Time) string {
	t = t.UTC()
	date := javaCalendarDate(t)
	var b strings.Builder
	for _, tok := range f.tokens {
		if tok.letter == 0 {
			b.WriteString(tok.literal)
			continue
		}
		n := tok.count
		num := func(v int) { b.WriteString(zeroPad(v, n)) }
		switch tok.letter {
		case 'G':
			if date.year <= 0 {
				b.WriteString("BC")
			} else {
				b.WriteString("AD")
			}
		case 'y':
			y := date.year
			if y <= 0 {
				y = 1 - y
			}
			if n == 2 {
				b.WriteString(zeroPad(y%100, 2))
			} else {
				num(y)
			}
		case 'M', 'L':
			switch {
			case n >= 4:
				b.WriteString(monthNames[date.month-1])
			case n == 3:
				b.WriteString(monthNames[date.month-1][:3])
			default:
				num(date.month)
			}
		case 'd':
			num(date.day)
		case 'H':
			num(t.Hour())
		case 'k':
			num(cmpOr(t.Hour(), 24))
		case 'K':
			num(t.Hour() % 12)
		case 'h':
			num(cmpOr(t.Hour()%12, 12))
		case 'm':
			num(t.Minute())
		case 's':
			num(t.Second())
		case 'S':
			num(t.Nanosecond() / 1e6)
		case 'E':
			name := dayNames[date.weekday]
			if n < 4 {
				name = name[:3]
			}
			b.WriteString(name)
		case 'u':
			num(cmpOr(date.weekday, 7))
		case 'a':
			if t.Hour() < 12 {
				b.WriteString("AM")
			} else {
				b.WriteString("PM")
			}
		case 'D':
			num(date.yearDay)
		case 'F':
			num((date.day-1)/7 + 1)
		case 'z':
			if n >= 4 {
				b.WriteString("Coordinated Universal Time")
			} else {
				b.WriteString("UTC")
			}
		case 'Z':
			b.WriteString("+0000")
		case 'X':
			b.WriteString("Z")
		}
	}
	return b.String()
}

// cmpOr returns v, or zero when v is 0 (the 1-based clock and weekday fields).
func cmpOr(v, zero int) int {
	if v == 0 {
		return zero
	}
	return v
}

func zeroPad(v, width int) string {
	s := strconv.Itoa(v)
	if len(s) < width {
		s = strings.Repeat("0", width-len(s)) + s
	}
	return s
}

func isNumericToken(tok dateToken) bool {
	switch tok.letter {
	case 'y', 'd', 'H', 'k', 'K', 'h', 'm', 's', 'S', 'u', 'D', 'F':
		return true
	case 'M', 'L':
		return tok.count <= 2
	}
	return false
}

// parse reads text from its start as SimpleDateFormat.parse(String) does.
func (f *javaDateFormat) parse(text string) (time.Time, error) {
	fail := func() (time.Time, error) {
		return time.Time{}, fmt.Errorf("unparseable date: %q", text)
	}
	year, month, day, hour, minute, second, milli := 1970, 1, 1, 0, 0, 0, 0
	dayOfYear, pm, hour12, bc := -1, -1, false, false
	offset := 0
	pos := 0
	for i, tok := range f.tokens {
		if tok.letter == 0 {
			if !strings.HasPrefix(text[pos:], tok.literal) {
				return fail()
			}
			pos += len(tok.literal)
			continue
		}
		for pos < len(text) && (text[pos] == ' ' || text[pos] == '\t') {
			pos++
		}
		if isNumericToken(tok) {
			width := len(text) - pos
			if i+1 < len(f.tokens) && isNumericToken(f.tokens[i+1]) {
				width = min(width, tok.count) // abutting numeric fields take their pattern width
			}
			v, used := leadingNumber(text[pos:pos+width], tok.letter == 'y')
			if used == 0 {
				return fail()
			}
			if tok.letter == 'y' && tok.count <= 2 && used == 2 && v >= 0 {
				v = f.twoDigitYear(v)
			}
			pos += used
			switch tok.letter {
			case 'y':
				year = v
			case 'M', 'L':
				month = v
			case 'd':
				day = v
			case 'H', 'k':
				hour = v
				if tok.letter == 'k' && v == 24 {
					hour = 0
				}
				hour12 = false
			case 'K', 'h':
				hour = v
				if tok.letter == 'h' && v == 12 {
					hour = 0
				}
				hour12 = true
			case 'm':
				minute = v
			case 's':
				second = v
			case 'S':
				milli = v
			case 'D':
				dayOfYear = v
			}
			continue
		}
		rest := text[pos:]
		var idx, used int
		switch tok.letter {
		case 'M', 'L':
			idx, used = matchName(rest, monthNames)
			month = idx + 1
		case 'E':
			_, used = matchName(rest, dayNames)
		case 'a':
			idx, used = matchName(rest, []string{"AM", "PM"})
			pm = idx
		case 'G':
			idx, used = matchName(rest, []string{"BC", "AD"})
			bc = idx == 0
		case 'z', 'Z', 'X':
			offset, used = parseZone(rest)
		}
		if used == 0 {
			return fail()
		}
		pos += used
	}
	if bc {
		year = 1 - year
	}
	if hour12 && pm == 1 {
		hour += 12
	}
	if dayOfYear >= 0 {
		month, day = 1, dayOfYear
	}
	clock := time.Duration(hour)*time.Hour + time.Duration(minute)*time.Minute + time.Duration(second)*time.Second +
		time.Duration(milli)*time.Millisecond - time.Duration(offset)*time.Second
	return javaCalendarInstant(year, month, day).Add(clock), nil
}

// The Julian calendar, by Julian Day Numbers (JDN): days since 4713 BC, the epoch being JDN 2440588.
const (
	epochJDN = 2440588
	// gregorianCutoverJDN is 1582-10-15, where GregorianCalendar switches from the Julian calendar.
	gregorianCutoverJDN = 2299161
)

// calendarDate is a day as java.util.GregorianCalendar names it; year 0 is 1 BC.
type calendarDate struct {
	year, month, day, yearDay int
	weekday                   int // 0 is Sunday
}

func javaCalendarDate(t time.Time) calendarDate {
	jdn := floorDiv(t.Unix(), 86400) + epochJDN
	weekday := int((jdn+1)%7+7) % 7
	if jdn >= gregorianCutoverJDN {
		return calendarDate{year: t.Year(), month: int(t.Month()), day: t.Day(), yearDay: t.YearDay(), weekday: weekday}
	}
	// Richards' algorithm for the Julian calendar, with floor division for the years BC.
	c := jdn + 32082
	d := floorDiv(4*c+3, 1461)
	e := c - floorDiv(1461*d, 4)
	m := floorDiv(5*e+2, 153)
	date := calendarDate{
		day:     int(e - floorDiv(153*m+2, 5) + 1),
		month:   int(m + 3 - 12*floorDiv(m, 10)),
		year:    int(d - 4800 + floorDiv(m, 10)),
		weekday: weekday,
	}
	date.yearDay = int(jdn-julianJDN(date.year, 1, 1)) + 1
	return date
}

// julianJDN is the day number of a Julian calendar date; month may be out of 1..12 (lenient).
func julianJDN(year, month, day int) int64 {
	year += int(floorDiv(int64(month-1), 12))
	month = int((int64(month-1)%12+12)%12) + 1
	a := int64(14-month) / 12
	y := int64(year) + 4800 - a
	m := int64(month) + 12*a - 3
	return int64(day) + floorDiv(153*m+2, 5) + 365*y + floorDiv(y, 4) - 32083
}

// javaCalendarInstant is the UTC midnight starting the given day (lenient: fields may overflow), in the
// Gregorian calendar from the cutover on and in the Julian one before it.
func javaCalendarInstant(year, month, day int) time.Time {
	t := time.Date(year, time.Month(month), day, 0, 0, 0, 0, time.UTC)
	if floorDiv(t.Unix(), 86400)+epochJDN >= gregorianCutoverJDN {
		return t
	}
	return time.Unix((julianJDN(year, month, day)-epochJDN)*86400, 0).UTC()
}

// twoDigitYear puts a two-digit year in the century that starts 80 years before now, as SimpleDateFormat's
// default century does.
func (f *javaDateFormat) twoDigitYear(yy int) int {
	start := f.now().UTC().AddDate(-80, 0, 0)
	y := start.Year()/100*100 + yy
	if time.Date(y, start.Month(), start.Day(), 0, 0, 0, 0, time.UTC).Before(start.Truncate(24 * time.Hour)) {
		y += 100
	}
	return y
}

// leadingNumber reads the decimal digits at the start of s (after a '-' sign where allowed).
func leadingNumber(s string, signed bool) (int, int) {
	i := 0
	if signed && strings.HasPrefix(s, "-") {
		i = 1
	}
	start := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == start {
		return 0, 0
	}
	v, err := strconv.Atoi(s[:i])
	if err != nil {
		return 0, 0
	}
	return v, i
}

// matchName finds the longest of names, or of their three-letter forms, that starts s, ignoring case.
func matchName(s string, names []string) (index, length int) {
	index = -1
	for i, n := range names {
		for _, form := range []string{n, n[:min(3, len(n))]} {
			if len(form) > length && len(s) >= len(form) && strings.EqualFold(s[:len(form)], form) {
				index, length = i, len(form)
			}
		}
	}
	return index, length
}

// parseZone reads a zone as SimpleDateFormat's z, Z and X do: Z, UTC or GMT, optionally followed by an
// offset, or an offset alone (+hh, +hhmm, +hh:mm). It returns the offset in seconds east of UTC.
func parseZone(s string) (int, int) {
	used := 0
	for _, name := range []string{"UTC", "GMT"} {
		if strings.HasPrefix(s, name) {
			used = len(name)
			break
		}
	}
	if used == 0 && strings.HasPrefix(s, "Z") {
		return 0, 1
	}
	if used == len(s) || (s[used] != '+' && s[used] != '-') {
		return 0, used
	}
	sign := 1
	if s[used] == '-' {
		sign = -1
	}
	rest := s[used+1:]
	hh, n := leadingNumber(rest[:min(2, len(rest))], false)
	if n == 0 {
		return 0, used
	}
	consumed, mm := n, 0
	if r := rest[n:]; strings.HasPrefix(r, ":") {
		if m, k := leadingNumber(r[1:min(3, len(r))], false); k == 2 {
			mm, consumed = m, consumed+3
		}
	} else if m, k := leadingNumber(r[:min(2, len(r))], false); k == 2 {
		mm, consumed = m, consumed+2
	}
	return sign * (hh*3600 + mm*60), used + 1 + consumed
}
