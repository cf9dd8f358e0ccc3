package jsonconv

import "errors"

// Errors returned by the converter; JsonConverter raises a DataException in the same situations. They
// come wrapped with the path to the offending value (field "after": field "id": …).
var (
	// ErrConfig is a converter setting that cannot be parsed.
	ErrConfig = errors.New("jsonconv: invalid converter setting")
	// ErrValueType is a value whose Go type does not fit its schema.
	ErrValueType = errors.New("jsonconv: value does not match its schema")
	// ErrNullRequired is a null value for a required schema without a usable default.
	ErrNullRequired = errors.New("jsonconv: null value for a required schema without default")
	// ErrUnknownType is a schema whose type is not one of Connect's.
	ErrUnknownType = errors.New("jsonconv: unknown schema type")
	// ErrNoFieldSchema is a struct field without a schema.
	ErrNoFieldSchema = errors.New("jsonconv: struct field without schema")
)
