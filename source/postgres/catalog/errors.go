package catalog

import "errors"

// ErrUnsupportedType marks a column whose type Debezium does not capture (money[], interval[], point[],
// composite types, ...). The caller leaves such a column out of the events, as Debezium does.
var ErrUnsupportedType = errors.New("unsupported column type")

// ErrSpecialDecimal is returned by Decode for NaN or ±Infinity in a numeric column under
// decimal.handling.mode=precise, where Debezium fails the same way: only double and string can carry them.
var ErrSpecialDecimal = errors.New("numeric NaN or Infinity needs decimal.handling.mode double or string")
