// Package types maps MySQL and MariaDB columns to Kafka Connect schemas and their row values to Connect
// values, exactly as Debezium 3.6.1's MySqlConnector and MariaDbConnector do (BinlogValueConverters,
// MySqlValueConverters/MariaDbValueConverters and BinlogDefaultValueConverter).
//
// A column is described by the tables.Column the DDL parser builds (Debezium's own column model). Values
// arrive from two places that Debezium also treats apart: go-mysql's binlog row events (FromBinlog, decoded
// with the options SyncerConfig sets) and the snapshot's text-protocol SELECT (FromSnapshot, on a session
// prepared by SnapshotSession). Where the two sources disagree in Debezium (TIMESTAMP fraction padding,
// zero dates, FLOAT precision) the disagreement is reproduced, because the goldens show it.
package types

import "fmt"

// Flavor is the server family: it decides the MariaDB-only types (UUID).
type Flavor int

const (
	MariaDB Flavor = iota
	MySQL
)

// The connector option values Modes holds.
const (
	DecimalPrecise = "precise"
	DecimalDouble  = "double"
	DecimalString  = "string"

	BigintLong    = "long"
	BigintPrecise = "precise"

	TimeAdaptiveMicroseconds = "adaptive_time_microseconds"
	TimeConnect              = "connect"

	BinaryBytes         = "bytes"
	BinaryBase64        = "base64"
	BinaryBase64URLSafe = "base64-url-safe"
	BinaryHex           = "hex"
)

// Modes are the connector options that change how column values are represented.
type Modes struct {
	Flavor         Flavor
	Decimal        string // decimal.handling.mode: precise|double|string
	BigintUnsigned string // bigint.unsigned.handling.mode: long|precise
	// Time is time.precision.mode. Only adaptive_time_microseconds (the binlog connectors' default) and
	// connect are mapped; isostring, microseconds and nanoseconds are refused by Schema.
	Time   string
	Binary string // binary.handling.mode: bytes|base64|base64-url-safe|hex
	// NoTimeAdjuster is enable.time.adjuster=false. By default Debezium reads two-digit years of DATE and
	// DATETIME values (0-69, 70-99) as 2000-2069 and 1970-1999.
	NoTimeAdjuster bool
}

// DefaultModes are Debezium's defaults for the binlog connectors (MariaDB flavour).
var DefaultModes = Modes{
	Flavor:         MariaDB,
	Decimal:        DecimalPrecise,
	BigintUnsigned: BigintLong,
	Time:           TimeAdaptiveMicroseconds,
	Binary:         BinaryBytes,
}

// validate reports the first mode this package does not map.
func (m Modes) validate() error {
	check := func(key, v string, allowed ...string) error {
		for _, a := range allowed {
			if v == a {
				return nil
			}
		}
		return fmt.Errorf("%w: %s=%q", ErrMode, key, v)
	}
	if err := check("decimal.handling.mode", m.Decimal, DecimalPrecise, DecimalDouble, DecimalString); err != nil {
		return err
	}
	if err := check("bigint.unsigned.handling.mode", m.BigintUnsigned, BigintLong, BigintPrecise); err != nil {
		return err
	}
	if err := check("time.precision.mode", m.Time, TimeAdaptiveMicroseconds, TimeConnect); err != nil {
		return err
	}
	return check("binary.handling.mode", m.Binary, BinaryBytes, BinaryBase64, BinaryBase64URLSafe, BinaryHex)
}
