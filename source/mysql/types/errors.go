package types

import "errors"

// ErrUnsupportedType marks a column Debezium leaves out of its events (it logs "Unexpected JDBC type"):
// the caller drops the field, as Debezium does.
var ErrUnsupportedType = errors.New("unsupported column type")

// ErrMode is returned for an option value this package does not map.
var ErrMode = errors.New("unsupported connector mode")

// ErrValue is returned for a row value of a Go type or form the column's conversion cannot take: the
// reader and the column model disagree, which is a bug or a schema out of step with the binlog.
var ErrValue = errors.New("unexpected column value")
