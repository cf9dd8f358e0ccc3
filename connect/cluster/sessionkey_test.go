package cluster

import (
	"bytes"
	"log/slog"
	"testing"
	"time"

	"github.com/cdcd/cdcd/connect/interworker"
)

// The session key record is KafkaConfigBackingStore's SESSION_KEY_V0 under "session-key": the key in
// base64, its algorithm and its creation time in epoch milliseconds, as the schemaless JsonConverter writes
// the struct. A record in another shape is skipped and the previous key stays, as Connect skips it.
func TestSessionKeyRecord(t *testing.T) {
	s := newConfigStore(slog.Default(), nil)
	if _, ok, _ := s.SessionKey(); ok {
		t.Fatal("a key before any record")
	}
	_, _, changed := s.SessionKey()
	// As a Java leader writes it.
	feed(s, [2]string{"session-key", `{"key":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=","algorithm":"HmacSHA256","creation-timestamp":1700000000123}`})
	select {
	case <-changed:
	default:
		t.Fatal("reading a key did not signal it")
	}
	key, ok, _ := s.SessionKey()
	want := make([]byte, 32)
	for i := range want {
		want[i] = byte(i)
	}
	if !ok || !bytes.Equal(key.Key, want) || key.Algorithm != "HmacSHA256" || key.Created.UnixMilli() != 1700000000123 {
		t.Fatalf("key read: %+v, %v", key, ok)
	}

	for _, bad := range []string{
		"<nil>",
		`{"key":"AAAA","algorithm":"HmacSHA256"}`,
		`{"key":"not base64!","algorithm":"HmacSHA256","creation-timestamp":1}`,
		`{"key":"","algorithm":"HmacSHA256","creation-timestamp":1}`,
		`{"key":"AAAA","algorithm":"HmacSHA256","creation-timestamp":1.5}`,
		`{"key":7,"algorithm":"HmacSHA256","creation-timestamp":1}`,
		`[]`,
	} {
		feed(s, [2]string{"session-key", bad})
		if got, _, _ := s.SessionKey(); !bytes.Equal(got.Key, want) {
			t.Errorf("%s replaced the key: %+v", bad, got)
		}
	}

	// What cdcd writes, Java reads (the same fields and encodings) and cdcd reads back.
	written := interworker.SessionKey{Key: []byte{9, 8, 7, 6, 5}, Algorithm: "HmacSHA512", Created: time.UnixMilli(1234567890123)}
	value := sessionKeyValue(written)
	if string(value) != `{"key":"CQgHBgU=","algorithm":"HmacSHA512","creation-timestamp":1234567890123}` {
		t.Fatalf("record value %s", value)
	}
	feed(s, [2]string{"session-key", string(value)})
	if got, _, _ := s.SessionKey(); !bytes.Equal(got.Key, written.Key) || got.Algorithm != written.Algorithm || !got.Created.Equal(written.Created) {
		t.Fatalf("read back %+v, wrote %+v", got, written)
	}
}
