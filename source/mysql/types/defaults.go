package types

import (
	"fmt"
	"math/big"
	"regexp"
	"strconv"
	"strings"

	"github.com/cdcd/cdcd/schema/javacompat"
	"github.com/cdcd/cdcd/source/mysql/tables"
)

// Patterns of BinlogDefaultValueConverter: dates and timestamps that stand for the epoch (a zero part
// and, for timestamps, a zero time of day), and the character set introducer (_utf8mb4'x').
var (
	epochEquivalentDate      = regexp.MustCompile(`^(\d{4}-\d{2}-00|\d{4}-00-\d{2}|0000-\d{2}-\d{2})$`)
	epochEquivalentTimestamp = regexp.MustCompile(`^(\d{4}-\d{2}-00|\d{4}-00-\d{2}|0000-\d{2}-\d{2}) (00:00:00(\.\d{1,6})?)$`)
	dateAndTime              = regexp.MustCompile(`^([0-9]*-[0-9]*-[0-9]*) ([0-9]*:[0-9]*:[0-9]*(\.([0-9]*))?)$`)
	charsetIntroducer        = regexp.MustCompile(`^_[A-Za-z0-9]+'(.*)'$`)
)

// defaultValue is BinlogDefaultValueConverter.parseDefaultValue followed by the column's value
// converter: the Connect value of c's default expression, or nil when the default is null (a zero date
// in a nullable column). An error means Debezium's conversion would fail.
func (m Modes) defaultValue(c *tables.Column, k kind) (any, error) {
	v := c.Default
	if trimsDefault(k) {
		v = strings.TrimSpace(v)
	}
	if g := charsetIntroducer.FindStringSubmatch(v); g != nil {
		v = g[1]
	}
	if numericDefault(k) && strings.EqualFold(v, "true") {
		v = "1"
	} else if numericDefault(k) && strings.EqualFold(v, "false") {
		v = "0"
	}
	switch k {
	case kindDate:
		return m.dateDefault(c, v)
	case kindDatetime:
		return m.datetimeDefault(c, v)
	case kindTimestamp:
		return timestampDefault(c, v)
	case kindTime:
		if g := dateAndTime.FindStringSubmatch(v); g != nil {
			v = g[2]
		}
		nanos, err := parseDuration(v)
		if err != nil {
			return nil, err
		}
		return m.timeValue(c, nanos), nil
	case kindBool, kindBit:
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			return n != 0, nil
		}
		return strings.EqualFold(v, "true"), nil
	case kindBits:
		bits, err := strconv.ParseUint(v, 2, 64)
		if err != nil {
			return nil, fmt.Errorf("%w: BIT default %q", ErrValue, v)
		}
		return bitsValue(c, bits), nil
	case kindDecimal:
		return m.decimalValue(c, v)
	case kindFloat32, kindFloat64:
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return nil, fmt.Errorf("%w: floating-point default %q", ErrValue, v)
		}
		if k == kindFloat32 {
			return float32(f), nil
		}
		return f, nil
	case kindUint64:
		if m.BigintUnsigned == BigintPrecise {
			d, err := parseDecimal(v)
			if err != nil {
				return nil, err
			}
			if d.Unscaled.Sign() < 0 {
				d.Unscaled.Add(d.Unscaled, maxUint64PlusOne())
			}
			return d, nil
		}
		fallthrough
	case kindInt8, kindInt16, kindInt32, kindInt64, kindUint8, kindUint16, kindUint24, kindUint32:
		return m.integerDefault(k, v)
	case kindYear:
		y, err := strconv.Atoi(v)
		if err != nil {
			return nil, fmt.Errorf("%w: YEAR default %q", ErrValue, v)
		}
		return int32(m.adjusted(civil{year: y}).year), nil
	case kindString, kindEnum, kindSet, kindJSON:
		return v, nil
	case kindBinary:
		return m.binaryValue(c, []byte(v), false), nil
	}
	// UUID and geometry defaults reach converters that take no strings: Debezium drops them.
	return nil, fmt.Errorf("%w: %s default %q", ErrValue, c.TypeName, v)
}

// trimsDefault and numericDefault are the JDBC type sets BinlogDefaultValueConverter trims and reads
// true/false in.
func trimsDefault(k kind) bool {
	switch k {
	case kindDate, kindDatetime, kindTimestamp, kindTime, kindBool:
		return true
	}
	return numericDefault(k)
}

func numericDefault(k kind) bool {
	switch k {
	case kindBit, kindBits, kindInt8, kindInt16, kindInt32, kindInt64, kindUint8, kindUint16, kindUint24,
		kindUint32, kindUint64, kindFloat32, kindFloat64, kindDecimal:
		return true
	}
	return false
}

// integerDefault reads an integer default as BinlogValueConverters does for strings: rounded from a
// double (Math.round, saturating at the long range), then narrowed to the field's Java type.
func (m Modes) integerDefault(k kind, v string) (any, error) {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return nil, fmt.Errorf("%w: integer default %q", ErrValue, v)
	}
	return m.intValue(k, javacompat.Round(f)), nil
}

func (m Modes) dateDefault(c *tables.Column, v string) (any, error) {
	if epochEquivalentDate.MatchString(v) || epochEquivalentTimestamp.MatchString(v) || v == "0" {
		if c.Optional {
			return nil, nil
		}
		v = "1970-01-01"
	}
	d, err := parseCivil(v)
	if err != nil || d.zeroDate() {
		if c.Optional {
			return nil, nil
		}
		d = civil{year: 1970, month: 1, day: 1}
	}
	return m.dateValue(d), nil
}

func (m Modes) datetimeDefault(c *tables.Column, v string) (any, error) {
	if epochEquivalentTimestamp.MatchString(v) || v == "0" {
		if c.Optional {
			return nil, nil
		}
		v = "1970-01-01 00:00:00"
	}
	d, err := parseCivil(v)
	if err != nil || d.zeroDate() {
		if c.Optional {
			return nil, nil
		}
		d = civil{year: 1970, month: 1, day: 1}
	}
	return m.datetimeValue(c, d), nil
}

// timestampDefault reads a TIMESTAMP default. The epoch and zero values become a java.sql.Timestamp of
// the epoch (written without fraction padding); any other value a ZonedDateTime in the JVM's zone,
// which for cdcd's goldens is UTC, written with the column's fraction width.
func timestampDefault(c *tables.Column, v string) (any, error) {
	if epochEquivalentTimestamp.MatchString(v) || v == "0" || v == "1970-01-01 00:00:00" {
		if c.Optional {
			return nil, nil
		}
		return epochZoned, nil
	}
	d, err := parseCivil(v)
	if err != nil || d.zeroDate() {
		return nil, fmt.Errorf("%w: TIMESTAMP default %q", ErrValue, v)
	}
	return zonedTimestamp(d.utc(), length(c)), nil
}

func maxUint64PlusOne() *big.Int { return new(big.Int).Lsh(big.NewInt(1), 64) }
