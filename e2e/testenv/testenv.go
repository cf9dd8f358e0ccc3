// Package testenv hands integration tests the real services that e2e/services.sh runs:
// PostgreSQL 15, MariaDB 10.11 and Kafka 4.4.
//
// Every accessor skips the calling test unless CDCD_E2E is set, so `go test ./...` on a bare
// machine runs only the unit tier; with CDCD_E2E set (as `make test` does after starting the
// services) an unreachable service fails the test instead, so a broken test bed is never mistaken
// for a green run. Addresses follow the environment variables e2e/services.sh reads
// (CDCD_PG_PORT, CDCD_MARIADB_PORT, CDCD_KAFKA_PORT); the host is always 127.0.0.1.
package testenv

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

// EnableEnv is the environment variable that switches the integration tier on.
const EnableEnv = "CDCD_E2E"

const (
	host = "127.0.0.1"
	// pingTimeout bounds how long a test waits to learn that a service is down.
	pingTimeout = 5 * time.Second
	// adminTimeout bounds creating and dropping a test's database.
	adminTimeout = 30 * time.Second
)

// enabled reports whether the integration tier runs: CDCD_E2E set to anything but "" or "0".
func enabled() bool {
	v := os.Getenv(EnableEnv)
	return v != "" && v != "0"
}

// serviceAddr is host:port of a service whose port may be overridden by envVar.
func serviceAddr(envVar, defaultPort string) string {
	port := os.Getenv(envVar)
	if port == "" {
		port = defaultPort
	}
	return net.JoinHostPort(host, port)
}

// requireService skips t when the integration tier is off, and fails it when the service named
// service does not answer ping within pingTimeout. It returns only when the service is usable.
func requireService(t testing.TB, service string, ping func(context.Context) error) {
	t.Helper()
	if !enabled() {
		t.Skipf("needs %s: set %s=1 after `e2e/services.sh start %s` (or run `make test`)", service, EnableEnv, service)
	}
	ctx, cancel := context.WithTimeout(context.Background(), pingTimeout)
	defer cancel()
	if err := ping(ctx); err != nil {
		t.Fatalf("%s=1 but %s does not answer (start it with `e2e/services.sh start %s`): %v", EnableEnv, service, service, err)
	}
}

// uniqueName derives a name from a test's name that is a valid unquoted identifier in
// PostgreSQL and MariaDB and a valid Kafka topic (prefix): lower-case letters, digits and
// underscores, starting with a letter, at most maxLen bytes. A random suffix keeps names apart
// across reruns against the same long-lived services and between parallel tests.
func uniqueName(testName string, maxLen int) string {
	suffix := fmt.Sprintf("_%08x", rand.Uint32())
	var b strings.Builder
	pendingSep := false
	for _, r := range strings.ToLower(testName) {
		if ('a' <= r && r <= 'z') || ('0' <= r && r <= '9') {
			if pendingSep && b.Len() > 0 {
				b.WriteByte('_')
			}
			pendingSep = false
			b.WriteRune(r)
			continue
		}
		pendingSep = true
	}
	base := b.String()
	switch {
	case base == "":
		base = "t"
	case base[0] < 'a': // a digit
		base = "t_" + base
	}
	if room := maxLen - len(suffix); len(base) > room {
		base = strings.TrimRight(base[:room], "_")
	}
	return base + suffix
}
