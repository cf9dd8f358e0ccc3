package tlsconf

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"maps"
	"slices"
	"strings"
)

// This file serves callers whose stores are configured under other key names than Kafka's, and without
// a type key (Debezium's database.ssl.keystore and database.ssl.truststore): they look the type up with
// StoreType, read the stores through a Lookup by Kafka's names, and name their own keys in the errors
// with Renamed.

// StoreType is the type Java opens the store at location as when its code asks for a JKS keystore, as
// Debezium's binlog connectors do: the JDK reads a PKCS12 store through the JKS type too
// (keystore.type.compat), so the type is the content's, JKS by its magic number, PKCS12 for DER. A file
// with PEM armor is PEM, which cdcd reads as well. It is "" when the file cannot be read: KeyPair and
// TrustPool then report why, naming the location's key.
func StoreType(location string) string {
	data, err := readStoreFile(location)
	if err != nil || len(data) == 0 {
		return ""
	}
	switch {
	case len(data) >= 4 && binary.BigEndian.Uint32(data) == jksMagic:
		return "JKS"
	case data[0] == 0x30: // an ASN.1 SEQUENCE: PKCS #12's PFX
		return "PKCS12"
	case bytes.Contains(data, []byte("-----BEGIN ")):
		return "PEM"
	}
	return "PKCS12" // as Java tries it last; the reader says it is not one
}

// Renamed is err of KeyPair or TrustPool with Kafka's key names replaced by the caller's: names maps
// each Kafka name (KeystoreLocation, …) to the key the caller's user set. errors.Is and errors.As see
// err's chain unchanged. A nil err stays nil.
func Renamed(err error, names map[string]string) error {
	if err == nil {
		return nil
	}
	// Longest first, so that no name is replaced inside a longer one.
	kafka := slices.SortedFunc(maps.Keys(names), func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	pairs := make([]string, 0, 2*len(kafka))
	for _, k := range kafka {
		pairs = append(pairs, k, names[k])
	}
	return &renamedError{msg: strings.NewReplacer(pairs...).Replace(err.Error()), err: err}
}

type renamedError struct {
	msg string
	err error
}

func (e *renamedError) Error() string { return e.msg }
func (e *renamedError) Unwrap() error { return e.err }
