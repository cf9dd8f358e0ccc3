package ddl

import (
	"errors"
	"fmt"
)

var (
	// ErrUnparseable is returned for a statement that changes tables and that the parser cannot read
	// (Debezium's "DDL statement couldn't be parsed"). The message quotes the statement.
	ErrUnparseable = errors.New("ddl: statement couldn't be parsed")
	// ErrInvalid is returned for a statement that parses but cannot apply to the tables as known, e.g. a
	// MODIFY of a column the table does not have.
	ErrInvalid = errors.New("ddl: statement does not apply")
	// ErrHistory is returned for a schema history record that cannot be decoded or encoded.
	ErrHistory = errors.New("ddl: bad schema history record")
)

func errUnknownType(toks []token, i int) error {
	near := "end of statement"
	if i < len(toks) {
		near = toks[i].text
	}
	return fmt.Errorf("%w: unknown data type near %q", ErrUnparseable, near)
}
