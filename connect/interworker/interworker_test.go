package interworker

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

// jdkKey is the key bytes 0, 1, …, 31: the vectors below are what the JDK's javax.crypto.Mac (Temurin 25,
// which Connect's workers run on) answers for it, base64-encoded as InternalRequestSignature encodes them.
func jdkKey() []byte {
	key := make([]byte, 32)
	for i := range key {
		key[i] = byte(i)
	}
	return key
}

func TestSignMatchesTheJDK(t *testing.T) {
	body := []byte(`[{"a":"b"}]`)
	for _, tc := range []struct {
		algorithm string
		body      []byte
		want      string
	}{
		{"HmacSHA256", body, "Eroe1tB3QaSe5EJ0n/U/3E2UQZRh4D5G73yb9AU1xkM="},
		{"HmacSHA512", body, "e9iBgPCMpzQiuIVywfrFCrCnHzZhwbDZ91zz9Mq+1waA5KgPsqUd5P1Nl9JRe7xEHg7YpXmpATp6YrVo+z9tog=="},
		{"HmacSHA1", body, "jjpl6CSTd6XoLM8PBWGhNkBJrp8="},
		{"HmacSHA3-256", body, "EYhb+kjjc0BU1mElIB5XDloIR2gKz+6Nu6DwOxGw/gY="},
		// A bodiless request (PUT …/fence): Connect signs no bytes.
		{"HmacSHA256", nil, "04tCCW2A9F+Ca0Sp1WB95ySWpBXT9KGoyI47udqNwcs="},
	} {
		h := http.Header{}
		if err := Sign(h, jdkKey(), tc.algorithm, tc.body); err != nil {
			t.Fatal(err)
		}
		if got := h.Get(SignatureHeader); got != tc.want {
			t.Errorf("%s over %q: %s, want the JDK's %s", tc.algorithm, tc.body, got, tc.want)
		}
		if got := h.Get(AlgorithmHeader); got != tc.algorithm {
			t.Errorf("algorithm header %q, want %q", got, tc.algorithm)
		}
	}
}

func TestFromHeadersAndValid(t *testing.T) {
	body := []byte(`[{"k":"v"}]`)
	signed := http.Header{}
	if err := Sign(signed, jdkKey(), "HmacSHA256", body); err != nil {
		t.Fatal(err)
	}
	sig, err := FromHeaders(signed)
	if err != nil {
		t.Fatal(err)
	}
	if !sig.Valid(jdkKey(), body) {
		t.Error("a signature made with the key does not verify")
	}
	if sig.Valid(jdkKey(), []byte(`[{"k":"w"}]`)) {
		t.Error("a signature verified over another body")
	}
	other := jdkKey()
	other[0] ^= 1
	if sig.Valid(other, body) {
		t.Error("a signature verified under another key")
	}
	if (Signature{}).Valid(jdkKey(), body) {
		t.Error("the zero Signature verified")
	}

	for _, drop := range []string{SignatureHeader, AlgorithmHeader} {
		h := signed.Clone()
		h.Del(drop)
		if _, err := FromHeaders(h); !errors.Is(err, ErrUnsigned) {
			t.Errorf("without %s: %v, want ErrUnsigned", drop, err)
		}
	}
	unknown := signed.Clone()
	unknown.Set(AlgorithmHeader, "HmacWhirlpool")
	if _, err := FromHeaders(unknown); err == nil || err.Error() != "Algorithm HmacWhirlpool not available" {
		t.Errorf("unknown algorithm: %v, want the JDK's message", err)
	}
	garbled := signed.Clone()
	garbled.Set(SignatureHeader, "not base64!")
	if _, err := FromHeaders(garbled); err == nil {
		t.Error("a signature that is not base64 was read")
	}
	// The JCA finds algorithms ignoring case and reports the name as asked for; a worker compares that
	// name with its verification algorithms.
	lower := signed.Clone()
	lower.Set(AlgorithmHeader, "hmacsha256")
	sig, err = FromHeaders(lower)
	if err != nil || sig.Algorithm != "hmacsha256" || !sig.Valid(jdkKey(), body) {
		t.Errorf("lower-case algorithm: %+v, %v", sig, err)
	}
}

// TestKeySizes holds the key sizes against what the JDK's KeyGenerator makes and refuses.
func TestKeySizes(t *testing.T) {
	defaults := map[string]int{"HmacMD5": 64, "HmacSHA1": 64, "HmacSHA224": 28, "HmacSHA256": 32, "HmacSHA384": 48, "HmacSHA512": 64,
		"HmacSHA512/224": 28, "HmacSHA512/256": 32, "HmacSHA3-224": 28, "HmacSHA3-256": 32, "HmacSHA3-384": 48, "HmacSHA3-512": 64}
	for _, a := range Algorithms() {
		got, err := DefaultKeySize(a)
		if err != nil || got != defaults[a] {
			t.Errorf("%s: default key %d bytes (%v), the JDK makes %d", a, got, err, defaults[a])
		}
	}
	for _, tc := range []struct {
		algorithm string
		bits      int
		want      int
		err       string
	}{
		{"HmacSHA256", 39, 0, "Key length must be at least 40 bits"},
		{"HmacSHA256", 0, 0, "Key length must be at least 40 bits"},
		{"HmacSHA256", 40, 5, ""},
		{"HmacSHA256", 41, 6, ""},
		{"HmacSHA256", 512, 64, ""},
		{"HmacMD5", 39, 5, ""},
		{"HmacSHA1", 1, 1, ""},
		{"HmacSHA1", 0, 0, "keysize must not be <= 0"},
		{"HmacSHA256", 1 << 20, 0, "at most"},
		{"AES", 128, 0, "unknown algorithm AES"},
	} {
		got, err := KeySize(tc.algorithm, tc.bits)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s %d bits: %d, %v; want %q", tc.algorithm, tc.bits, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s %d bits: %d, %v; want %d bytes", tc.algorithm, tc.bits, got, err, tc.want)
		}
	}
}

func TestNewSessionKey(t *testing.T) {
	now := time.UnixMilli(1_700_000_000_000)
	a, err := NewSessionKey("HmacSHA256", 32, now)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewSessionKey("HmacSHA256", 32, now)
	if len(a.Key) != 32 || a.Algorithm != "HmacSHA256" || !a.Created.Equal(now) || string(a.Key) == string(b.Key) {
		t.Errorf("keys %+v and %+v: want two different random 32-byte keys", a, b)
	}
	for _, bad := range []struct {
		algorithm string
		size      int
	}{{"HmacSHA256", 0}, {"", 32}} {
		if _, err := NewSessionKey(bad.algorithm, bad.size, now); err == nil {
			t.Errorf("a key of %d bytes for %q was made", bad.size, bad.algorithm)
		}
	}
}
