package catalog

// Modes are the connector options that change how column values are represented. The zero value of each
// field is not valid; use the constants (the connector option values), e.g. DefaultModes.
type Modes struct {
	Decimal       DecimalMode       // decimal.handling.mode
	TimePrecision TimePrecisionMode // time.precision.mode
	Binary        BinaryMode        // binary.handling.mode
	HStore        HStoreMode        // hstore.handling.mode
	Interval      IntervalMode      // interval.handling.mode
	// MoneyFractionDigits is money.fraction.digits: the scale of money values in precise mode.
	MoneyFractionDigits int
	// UnavailablePlaceholder is unavailable.value.placeholder, the stand-in for unchanged TOASTed values.
	// A "hex:" prefix makes the rest hex-encoded bytes, as in Debezium.
	UnavailablePlaceholder string
}

// DefaultModes are Debezium's defaults for the PostgreSQL connector.
var DefaultModes = Modes{
	Decimal:                DecimalPrecise,
	TimePrecision:          TimeAdaptive,
	Binary:                 BinaryBytes,
	HStore:                 HStoreJSON,
	Interval:               IntervalNumeric,
	MoneyFractionDigits:    2,
	UnavailablePlaceholder: "__debezium_unavailable_value",
}

// DecimalMode is decimal.handling.mode.
type DecimalMode string

// The decimal.handling.mode values.
const (
	DecimalPrecise DecimalMode = "precise"
	DecimalDouble  DecimalMode = "double"
	DecimalString  DecimalMode = "string"
)

// TimePrecisionMode is time.precision.mode.
type TimePrecisionMode string

// The time.precision.mode values.
const (
	TimeAdaptive                 TimePrecisionMode = "adaptive"
	TimeAdaptiveTimeMicroseconds TimePrecisionMode = "adaptive_time_microseconds"
	TimeConnect                  TimePrecisionMode = "connect"
	TimeMicroseconds             TimePrecisionMode = "microseconds"
	TimeNanoseconds              TimePrecisionMode = "nanoseconds"
	TimeIsoString                TimePrecisionMode = "isostring"
)

// BinaryMode is binary.handling.mode.
type BinaryMode string

// The binary.handling.mode values.
const (
	BinaryBytes         BinaryMode = "bytes"
	BinaryBase64        BinaryMode = "base64"
	BinaryBase64URLSafe BinaryMode = "base64-url-safe"
	BinaryHex           BinaryMode = "hex"
)

// HStoreMode is hstore.handling.mode.
type HStoreMode string

// The hstore.handling.mode values.
const (
	HStoreJSON HStoreMode = "json"
	HStoreMap  HStoreMode = "map"
)

// IntervalMode is interval.handling.mode.
type IntervalMode string

// The interval.handling.mode values.
const (
	IntervalNumeric IntervalMode = "numeric"
	IntervalString  IntervalMode = "string"
)
