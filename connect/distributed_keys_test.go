package connect

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/cdcd/cdcd/connect/config"
	"github.com/cdcd/cdcd/connect/interworker"
)

// fakeKeys is a config topic's session key: what was written is read back at once.
type fakeKeys struct {
	mu      sync.Mutex
	key     *interworker.SessionKey
	changed chan struct{}
	writes  int
}

func newFakeKeys() *fakeKeys { return &fakeKeys{changed: make(chan struct{})} }

func (f *fakeKeys) SessionKey() (interworker.SessionKey, bool, <-chan struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.key == nil {
		return interworker.SessionKey{}, false, f.changed
	}
	return *f.key, true, f.changed
}

func (f *fakeKeys) PutSessionKey(_ context.Context, key interworker.SessionKey) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.key, f.writes = &key, f.writes+1
	close(f.changed)
	f.changed = make(chan struct{})
	return nil
}

func (f *fakeKeys) written() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.writes
}

func keysWorker(keys sessionKeys, iw config.InterWorker) *Distributed {
	return &Distributed{w: &Worker{cfg: &config.Worker{InterWorker: iw}}, keys: keys, log: slog.New(slog.DiscardHandler), assignedC: make(chan struct{}, 1)}
}

var defaultInterWorker = config.InterWorker{KeyAlgorithm: "HmacSHA256", KeySize: 32, KeyTTL: time.Hour,
	SignatureAlgorithm: "HmacSHA256", VerificationAlgorithms: []string{"HmacSHA256"}}

// TestLeaderRotatesTheSessionKey: the leader writes a key when there is none, keeps it until its TTL ends,
// then writes another; a key of another algorithm or size is replaced at once; followers and a group on
// the compatible protocol write none (DistributedHerder.checkForKeyRotation).
func TestLeaderRotatesTheSessionKey(t *testing.T) {
	ctx := context.Background()
	start := time.UnixMilli(1_700_000_000_000)
	keys := newFakeKeys()
	d := keysWorker(keys, defaultInterWorker)

	if wait := d.distributeKeyIfDue(ctx, start); wait != 0 || keys.written() != 0 {
		t.Fatalf("a follower wrote a key (%d) or waits %v", keys.written(), wait)
	}
	d.leader = true
	if wait := d.distributeKeyIfDue(ctx, start); wait != time.Hour || keys.written() != 1 {
		t.Fatalf("leader without a key: %d writes, next check in %v; want 1 and 1h", keys.written(), wait)
	}
	first, _, _ := keys.SessionKey()
	if len(first.Key) != 32 || first.Algorithm != "HmacSHA256" || !first.Created.Equal(start) {
		t.Fatalf("key %+v", first)
	}
	if wait := d.distributeKeyIfDue(ctx, start.Add(59*time.Minute)); wait != time.Minute || keys.written() != 1 {
		t.Fatalf("before the TTL: %d writes, next check in %v", keys.written(), wait)
	}
	d.distributeKeyIfDue(ctx, start.Add(time.Hour))
	second, _, _ := keys.SessionKey()
	if keys.written() != 2 || string(second.Key) == string(first.Key) || !second.Created.Equal(start.Add(time.Hour)) {
		t.Fatalf("at the TTL: %d writes, key %+v", keys.written(), second)
	}

	// A leader configured for another algorithm or size replaces a fresh key.
	d.w.cfg.InterWorker.KeyAlgorithm, d.w.cfg.InterWorker.KeySize = "HmacSHA512", 64
	d.distributeKeyIfDue(ctx, start.Add(time.Hour))
	if k, _, _ := keys.SessionKey(); keys.written() != 3 || k.Algorithm != "HmacSHA512" || len(k.Key) != 64 {
		t.Fatalf("another algorithm: %d writes, key %s of %d bytes", keys.written(), k.Algorithm, len(k.Key))
	}
	d.w.cfg.InterWorker.KeySize = 40
	d.distributeKeyIfDue(ctx, start.Add(time.Hour))
	if k, _, _ := keys.SessionKey(); keys.written() != 4 || len(k.Key) != 40 {
		t.Fatalf("another size: %d writes, key of %d bytes", keys.written(), len(k.Key))
	}

	// A TTL of 0 never expires a key.
	d.w.cfg.InterWorker.KeyTTL = 0
	if wait := d.distributeKeyIfDue(ctx, start.Add(1000*time.Hour)); wait != 0 || keys.written() != 4 {
		t.Fatalf("ttl 0: %d writes, next check in %v", keys.written(), wait)
	}
	d.compatible = true
	if keys.key = nil; d.distributeKeyIfDue(ctx, start) != 0 || keys.written() != 4 {
		t.Fatalf("compatible protocol: %d writes", keys.written())
	}
}

// TestVerifyInternalRequest answers as DistributedHerder.requestNotSignedProperly: 400 for an algorithm
// this worker does not verify with, 503 before a key was read, 403 for a wrong signature.
func TestVerifyInternalRequest(t *testing.T) {
	keys := newFakeKeys()
	d := keysWorker(keys, defaultInterWorker)
	body := []byte(`[{"a":"b"}]`)
	signed := func(key []byte, algorithm string, body []byte) interworker.Signature {
		t.Helper()
		h := http.Header{}
		if err := interworker.Sign(h, key, algorithm, body); err != nil {
			t.Fatal(err)
		}
		sig, err := interworker.FromHeaders(h)
		if err != nil {
			t.Fatal(err)
		}
		return sig
	}
	kind := func(err error) ErrorKind {
		var re *RequestError
		if !errors.As(err, &re) {
			t.Fatalf("%v is not a RequestError", err)
		}
		return re.Kind
	}
	if err := d.VerifyInternalRequest(signed([]byte("k"), "HmacSHA256", body), body); kind(err) != Unavailable ||
		err.Error() != "This worker is still starting up and has not been able to read a session key from the config topic yet" {
		t.Errorf("no key yet: %v", err)
	}
	_ = keys.PutSessionKey(context.Background(), interworker.SessionKey{Key: []byte("0123456789abcdef0123456789abcdef"), Algorithm: "HmacSHA256"})
	key, _, _ := keys.SessionKey()
	if err := d.VerifyInternalRequest(signed(key.Key, "HmacSHA256", body), body); err != nil {
		t.Errorf("valid signature refused: %v", err)
	}
	if err := d.VerifyInternalRequest(signed([]byte("another key"), "HmacSHA256", body), body); kind(err) != Forbidden || err.Error() != "Internal request contained invalid signature." {
		t.Errorf("wrong key: %v", err)
	}
	if err := d.VerifyInternalRequest(signed(key.Key, "HmacSHA256", body), []byte(`[{"a":"c"}]`)); kind(err) != Forbidden {
		t.Errorf("altered body: %v", err)
	}
	err := d.VerifyInternalRequest(signed(key.Key, "HmacSHA512", body), body)
	if kind(err) != BadRequest || err.Error() != "This worker does not support the 'HmacSHA512' key signing algorithm used by other workers. "+
		"This worker is currently configured to use: [HmacSHA256]. Check that all workers' configuration files permit the same set of signature algorithms, "+
		"and correct any misconfigured worker and restart it." {
		t.Errorf("algorithm not verified with: %v", err)
	}
}

// TestFollowerSignsOnceAKeyArrives: a follower's internal request waits for the leader's first key, then
// carries a signature a worker holding that key accepts.
func TestFollowerSignsOnceAKeyArrives(t *testing.T) {
	keys := newFakeKeys()
	d := keysWorker(keys, defaultInterWorker)
	body := []byte(`[]`)
	h := http.Header{}
	signed := make(chan error, 1)
	go func() { signed <- d.signInternal(context.Background(), h, body) }()
	_ = keys.PutSessionKey(context.Background(), interworker.SessionKey{Key: []byte("0123456789abcdef"), Algorithm: "HmacSHA256"})
	if err := <-signed; err != nil {
		t.Fatal(err)
	}
	sig, err := interworker.FromHeaders(h)
	if err != nil || d.VerifyInternalRequest(sig, body) != nil {
		t.Fatalf("signature %v: %v", h, err)
	}

	// Without a key and with a context that ends, the request is not sent.
	d = keysWorker(newFakeKeys(), defaultInterWorker)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := d.signInternal(ctx, http.Header{}, body); err == nil {
		t.Error("signed without a key")
	}
	// Under the compatible protocol a request without a key goes unsigned, as Connect sends it.
	d.compatible = true
	h = http.Header{}
	if err := d.signInternal(ctx, h, body); err != nil || h.Get(interworker.SignatureHeader) != "" {
		t.Errorf("compatible protocol: %v, headers %v", err, h)
	}
}
