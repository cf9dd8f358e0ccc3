package oauth

import (
	"testing"
	"time"
)

// Kafka's refresh time: factor of the lifetime, not within the buffer of expiry, not before the minimum;
// Confluent's registry token cache is the same rule without jitter and minimum.
func TestRefreshTime(t *testing.T) {
	kafka := RefreshPolicy{Factor: 0.8, Jitter: 0.05, MinPeriod: time.Minute, Buffer: 5 * time.Minute}
	confluent := RefreshPolicy{Factor: 0.8, Buffer: 5 * time.Minute}
	now := time.Unix(1_000_000, 0)
	tests := []struct {
		policy RefreshPolicy
		life   time.Duration
		r      float64
		want   time.Duration
	}{
		{kafka, time.Hour, 0, 48 * time.Minute},                                  // 80 %
		{kafka, time.Hour, 1, 51 * time.Minute},                                  // 85 % with all the jitter
		{kafka, 20 * time.Minute, 0, 15 * time.Minute},                           // 16 min would be inside the 5 min buffer
		{kafka, 5 * time.Minute, 0, 4 * time.Minute},                             // the buffers do not fit: just the fraction
		{kafka, 1000 * time.Hour, 0, 800 * time.Hour},                            // long-lived
		{kafka, 7 * time.Minute, 0, 7*time.Minute - 6*time.Minute + time.Minute}, // 5.6 min > 2 min: the buffer's start
		{confluent, time.Hour, 1, 48 * time.Minute},                              // no jitter
		{confluent, 6 * time.Minute, 0, time.Minute},                             // the buffer's start, however early
		{confluent, 4 * time.Minute, 0, 192 * time.Second},                       // shorter than the buffer: 80 %
	}
	for _, tt := range tests {
		if got := tt.policy.RefreshTime(now, now.Add(tt.life), tt.r).Sub(now); got != tt.want {
			t.Errorf("%+v, lifetime %s, jitter draw %g: refresh after %s, want %s", tt.policy, tt.life, tt.r, got, tt.want)
		}
	}
}
