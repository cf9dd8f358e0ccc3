// Package interworker authenticates the requests Connect's workers send each other (KIP-507): the group's
// leader distributes a session key through the config topic, followers sign the bodies of their internal
// requests (POST /connectors/{name}/tasks, PUT /connectors/{name}/fence) with an HMAC under it, and the
// receiving worker checks the signature, so these endpoints need no user's credentials and stay closed to
// everyone without the key. Names, headers and encodings are Connect's (InternalRequestSignature,
// DistributedConfig, SessionKey), so cdcd and Java workers verify each other's requests.
package interworker

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha3"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"net/http"
	"slices"
	"strings"
	"time"
)

// The headers of a signed request (InternalRequestSignature).
const (
	SignatureHeader = "X-Connect-Authorization"
	AlgorithmHeader = "X-Connect-Request-Signature-Algorithm"
)

// DefaultAlgorithm is Connect's default for the key generation, signature and verification algorithms.
const DefaultAlgorithm = "HmacSHA256"

// macAlgorithm is one of the JCA's HMAC algorithms: its digest and the size in bytes of the key its
// KeyGenerator makes by default.
type macAlgorithm struct {
	name       string
	digest     func() hash.Hash
	defaultKey int
	// anySize: the JDK's key generator makes keys of any positive size (HmacMD5, HmacSHA1); the others
	// of at least 40 bits.
	anySize bool
}

// macAlgorithms are the JDK's (SunJCE's) HMAC algorithms, which every Java worker has.
var macAlgorithms = []macAlgorithm{
	{name: "HmacMD5", digest: md5.New, defaultKey: 64, anySize: true},
	{name: "HmacSHA1", digest: sha1.New, defaultKey: 64, anySize: true},
	{name: "HmacSHA224", digest: sha256.New224, defaultKey: 28},
	{name: "HmacSHA256", digest: sha256.New, defaultKey: 32},
	{name: "HmacSHA384", digest: sha512.New384, defaultKey: 48},
	{name: "HmacSHA512", digest: sha512.New, defaultKey: 64},
	{name: "HmacSHA512/224", digest: sha512.New512_224, defaultKey: 28},
	{name: "HmacSHA512/256", digest: sha512.New512_256, defaultKey: 32},
	{name: "HmacSHA3-224", digest: func() hash.Hash { return sha3.New224() }, defaultKey: 28},
	{name: "HmacSHA3-256", digest: func() hash.Hash { return sha3.New256() }, defaultKey: 32},
	{name: "HmacSHA3-384", digest: func() hash.Hash { return sha3.New384() }, defaultKey: 48},
	{name: "HmacSHA3-512", digest: func() hash.Hash { return sha3.New512() }, defaultKey: 64},
}

// lookup finds an algorithm as the JCA does: by name, ignoring case.
func lookup(name string) (macAlgorithm, bool) {
	i := slices.IndexFunc(macAlgorithms, func(a macAlgorithm) bool { return strings.EqualFold(a.name, name) })
	if i < 0 {
		return macAlgorithm{}, false
	}
	return macAlgorithms[i], true
}

// Algorithms lists the algorithms cdcd signs, verifies and makes keys with, as the JDK names them.
func Algorithms() []string {
	out := make([]string, len(macAlgorithms))
	for i, a := range macAlgorithms {
		out[i] = a.name
	}
	return out
}

// Known says whether name is an algorithm of Algorithms (ignoring case, as the JCA).
func Known(name string) bool {
	_, ok := lookup(name)
	return ok
}

// maxKeyBits bounds inter.worker.key.size: the key travels in one config topic record.
const maxKeyBits = 1 << 16

// DefaultKeySize is the size in bytes of the keys the JDK's key generator for algorithm makes by default.
func DefaultKeySize(algorithm string) (int, error) {
	a, ok := lookup(algorithm)
	if !ok {
		return 0, fmt.Errorf("unknown algorithm %s", algorithm)
	}
	return a.defaultKey, nil
}

// KeySize is the size in bytes of the keys the generation algorithm makes with inter.worker.key.size
// set to bits, or why the JDK's key generator would refuse that size.
func KeySize(algorithm string, bits int) (int, error) {
	a, ok := lookup(algorithm)
	switch {
	case !ok:
		return 0, fmt.Errorf("unknown algorithm %s", algorithm)
	case a.anySize && bits <= 0:
		return 0, errors.New("keysize must not be <= 0") // the JDK's words
	case !a.anySize && bits < 40:
		//lint:ignore ST1005 the JDK's words
		return 0, errors.New("Key length must be at least 40 bits")
	case bits > maxKeyBits:
		return 0, fmt.Errorf("cdcd makes keys of at most %d bits (the key travels in one config topic record)", maxKeyBits)
	}
	return (bits + 7) / 8, nil
}

// SessionKey is the group's key for signing internal requests (Connect's SessionKey), as the leader
// writes it to the config topic.
type SessionKey struct {
	Key []byte
	// Algorithm is the key's algorithm: the generation algorithm of the leader that made it.
	Algorithm string
	Created   time.Time
}

// NewSessionKey makes a random key of size bytes for algorithm, created now.
func NewSessionKey(algorithm string, size int, now time.Time) (SessionKey, error) {
	if size <= 0 || !Known(algorithm) {
		return SessionKey{}, fmt.Errorf("making a session key: no key of %d bytes for algorithm %q", size, algorithm)
	}
	key := make([]byte, size)
	if _, err := rand.Read(key); err != nil {
		return SessionKey{}, fmt.Errorf("making a session key: %w", err)
	}
	return SessionKey{Key: key, Algorithm: algorithm, Created: now}, nil
}

// Sign adds the headers of a request signed with key under algorithm (one of Algorithms) to h; body is
// the request's body exactly as sent (nil or empty when it has none, as Connect signs a bodiless fence
// request).
func Sign(h http.Header, key []byte, algorithm string, body []byte) error {
	a, ok := lookup(algorithm)
	if !ok {
		return fmt.Errorf("unknown signature algorithm %s", algorithm)
	}
	h.Set(SignatureHeader, base64.StdEncoding.EncodeToString(mac(a, key, body)))
	h.Set(AlgorithmHeader, algorithm)
	return nil
}

func mac(a macAlgorithm, key, body []byte) []byte {
	m := hmac.New(a.digest, key)
	m.Write(body)
	return m.Sum(nil)
}

// Signature is a request's signature, as read from its headers.
type Signature struct {
	// Algorithm is the algorithm header's value as sent; a worker accepts it only when its
	// inter.worker.verification.algorithms lists exactly this name.
	Algorithm string
	mac       macAlgorithm
	sum       []byte
}

// ErrUnsigned is FromHeaders' answer for a request without the two signature headers.
//
//lint:ignore ST1005 Connect's message, to the letter
var ErrUnsigned = errors.New("Internal request missing required signature")

// FromHeaders reads a request's signature without reading its body. It answers ErrUnsigned when either
// header is missing, and an error with Connect's words (a 400 in Connect) for an unknown algorithm or a
// signature that is not base64.
func FromHeaders(h http.Header) (Signature, error) {
	algorithm, encoded := h.Get(AlgorithmHeader), h.Get(SignatureHeader)
	if _, ok := h[http.CanonicalHeaderKey(AlgorithmHeader)]; !ok {
		return Signature{}, ErrUnsigned
	}
	if _, ok := h[http.CanonicalHeaderKey(SignatureHeader)]; !ok {
		return Signature{}, ErrUnsigned
	}
	a, ok := lookup(algorithm)
	if !ok {
		//lint:ignore ST1005 the JDK's words (NoSuchAlgorithmException), which Connect answers with
		return Signature{}, fmt.Errorf("Algorithm %s not available", algorithm)
	}
	sum, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil {
		return Signature{}, fmt.Errorf("the signature is not base64: %w", err)
	}
	return Signature{Algorithm: algorithm, mac: a, sum: sum}, nil
}

// Valid says whether the signature is body's under key, comparing in constant time.
func (s Signature) Valid(key, body []byte) bool {
	return s.mac.digest != nil && hmac.Equal(mac(s.mac, key, body), s.sum)
}
