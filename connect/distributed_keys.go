package connect

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/cdcd/cdcd/connect/interworker"
)

// This file is KIP-507 as Connect's DistributedHerder does it: the leader keeps a session key in the
// config topic (a new one when there is none, when it is older than inter.worker.key.ttl.ms, or when its
// algorithm or size is not what the leader's inter.worker.key.* ask for); followers sign the internal
// requests they send the leader with it (leaderRequest), and the internal endpoints accept a request only
// with a valid signature (VerifyInternalRequest). Java workers read and write the same record, so a
// group mixing Connect and cdcd workers shares one key.

// sessionKeys is the config topic as KIP-507 uses it (*cluster.ConfigStore once Open opened it).
type sessionKeys interface {
	// SessionKey returns the last key read (ok false before any) and a channel closed when a newer one
	// is read; it does not block.
	SessionKey() (key interworker.SessionKey, ok bool, changed <-chan struct{})
	// PutSessionKey writes a new key and returns once it was read back; it blocks on Kafka until ctx ends.
	PutSessionKey(ctx context.Context, key interworker.SessionKey) error
}

// keyRetry is how soon a leader tries again after failing to write a session key.
const keyRetry = time.Second

// keepSessionKey runs on every worker until ctx ends: while this worker leads a sessioned group it
// distributes a session key whenever one is due, and sleeps until the current one expires or the
// assignment changes.
func (d *Distributed) keepSessionKey(ctx context.Context) {
	for {
		var expiry <-chan time.Time
		var timer *time.Timer
		if wait := d.distributeKeyIfDue(ctx, time.Now()); wait > 0 {
			timer = time.NewTimer(wait)
			expiry = timer.C
		}
		select {
		case <-ctx.Done():
		case <-d.assignedC:
		case <-expiry:
		}
		if timer != nil {
			timer.Stop()
		}
		if ctx.Err() != nil {
			return
		}
	}
}

// distributeKeyIfDue writes a new session key when this worker leads a sessioned group and the current
// key is due (checkForKeyRotation), and returns how long the key in the topic serves from now (0: until
// something else changes).
func (d *Distributed) distributeKeyIfDue(ctx context.Context, now time.Time) time.Duration {
	d.stateMu.Lock()
	leader, compatible := d.leader, d.compatible
	d.stateMu.Unlock()
	if !leader || compatible {
		return 0
	}
	cfg := d.w.cfg.InterWorker
	key, ok, _ := d.keys.SessionKey()
	if ok && !keyDue(key, cfg.KeyAlgorithm, cfg.KeySize, cfg.KeyTTL, now) {
		return keyLifetime(key, cfg.KeyTTL, now)
	}
	key, err := interworker.NewSessionKey(cfg.KeyAlgorithm, cfg.KeySize, now)
	if err == nil {
		err = d.keys.PutSessionKey(ctx, key)
	}
	if err != nil {
		if ctx.Err() == nil {
			d.log.Warn("distributing a new session key failed; retrying", "error", err)
		}
		return keyRetry
	}
	d.log.Info("distributed a new session key for signing internal requests", "algorithm", key.Algorithm)
	return keyLifetime(key, cfg.KeyTTL, now)
}

// keyDue says whether a leader replaces key: it expired (a ttl of 0 never expires it), or it was made with
// another algorithm or size than this worker's.
func keyDue(key interworker.SessionKey, algorithm string, size int, ttl time.Duration, now time.Time) bool {
	return key.Algorithm != algorithm || len(key.Key) != size || ttl > 0 && !now.Before(key.Created.Add(ttl))
}

// keyLifetime is how long key serves from now; 0 when it does not expire.
func keyLifetime(key interworker.SessionKey, ttl time.Duration, now time.Time) time.Duration {
	if ttl == 0 {
		return 0
	}
	return max(key.Created.Add(ttl).Sub(now), time.Millisecond)
}

// SignaturesRequired says whether the internal endpoints refuse unsigned requests: they do unless the
// group runs Connect's "compatible" protocol, under which Connect checks no signature.
func (d *Distributed) SignaturesRequired() bool {
	d.stateMu.Lock()
	defer d.stateMu.Unlock()
	return !d.compatible
}

// VerifyInternalRequest checks a signed internal request as DistributedHerder.requestNotSignedProperly
// does, with its statuses and words: a signature algorithm this worker's
// inter.worker.verification.algorithms does not list is a BadRequest, no session key read yet is
// Unavailable, and a signature that is not body's under the key is Forbidden.
func (d *Distributed) VerifyInternalRequest(sig interworker.Signature, body []byte) error {
	verification := d.w.cfg.InterWorker.VerificationAlgorithms
	if !slices.Contains(verification, sig.Algorithm) {
		return &RequestError{Kind: BadRequest, Message: fmt.Sprintf("This worker does not support the '%s' key signing algorithm used by other workers. "+
			"This worker is currently configured to use: [%s]. "+
			"Check that all workers' configuration files permit the same set of signature algorithms, "+
			"and correct any misconfigured worker and restart it.", sig.Algorithm, strings.Join(verification, ", "))}
	}
	key, ok, _ := d.keys.SessionKey()
	if !ok {
		return &RequestError{Kind: Unavailable, Message: "This worker is still starting up and has not been able to read a session key from the config topic yet"}
	}
	if !sig.Valid(key.Key, body) {
		return &RequestError{Kind: Forbidden, Message: "Internal request contained invalid signature."}
	}
	return nil
}

// signInternal signs an internal request to the leader with the group's session key and this worker's
// inter.worker.signature.algorithm. Before any key was read it waits for the leader's first one, unless
// the group runs the compatible protocol, where the request goes unsigned, as Connect sends it.
func (d *Distributed) signInternal(ctx context.Context, h http.Header, body []byte) error {
	for {
		key, ok, changed := d.keys.SessionKey()
		if ok {
			return interworker.Sign(h, key.Key, d.w.cfg.InterWorker.SignatureAlgorithm, body)
		}
		if !d.SignaturesRequired() {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return errors.New("no session key was read from the config topic yet to sign the request to the leader with")
		}
	}
}
