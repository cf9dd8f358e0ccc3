package avro

import (
	"errors"
	"net/http"
	"testing"

	"github.com/cdcd/cdcd/schema"
)

// fatal is the check the connect runtime makes before restarting a failed task.
func fatal(err error) bool {
	var f interface{ Fatal() bool }
	return errors.As(err, &f) && f.Fatal()
}

func TestIncompatibleSchemaIsFatal(t *testing.T) {
	reg, _ := newRegistry(t)
	reg.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != http.MethodPost {
			return false
		}
		w.WriteHeader(http.StatusConflict)
		w.Write([]byte(`{"error_code":409,"message":"incompatible"}`))
		return true
	})
	c := newConverter(t, false, map[string]string{"schema.registry.url": reg.URL()})
	_, err := c.Encode("t", &schema.Schema{Type: schema.String}, "x")
	if !errors.Is(err, ErrIncompatible) || !fatal(err) {
		t.Errorf("a 409 must be ErrIncompatible and fatal (no restart can fix it): %v", err)
	}
}

func TestUnavailableRegistryIsNotFatal(t *testing.T) {
	reg, _ := newRegistry(t)
	reg.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		http.Error(w, `{"error_code":50003,"message":"down"}`, http.StatusServiceUnavailable)
		return true
	})
	c := newConverter(t, false, map[string]string{"schema.registry.url": reg.URL(), "max.retries": "1"})
	_, err := c.Encode("t", &schema.Schema{Type: schema.String}, "x")
	if !errors.Is(err, ErrRegistry) || fatal(err) {
		t.Errorf("an unavailable registry must be a registry error the task restarts on: %v", err)
	}
}
