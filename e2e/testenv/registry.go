package testenv

import (
	"context"
	"fmt"
	"net/http"
	"testing"
)

// TLSRegistry is e2e/registry.sh's HTTPS-only Apicurio Registry: Confluent's REST API (ccompat) behind
// the test bed's server certificate (IP:127.0.0.1, DNS:localhost, signed by TLS.CA). It asks for no
// client certificate.
type TLSRegistry struct {
	URL  string // the schema.registry.url: https://127.0.0.1:<port>/apis/ccompat/v7
	Host string // host:port of URL
	TLS  TLSFiles
}

func registryTLSAddr() string { return serviceAddr("CDCD_REGISTRY_TLS_PORT", "58443") }

// RegistryTLS returns the HTTPS registry after it answered a request that trusts only the test bed's CA.
// It skips t unless CDCD_E2E is set, the certificates are made and the registry listens (started by
// `e2e/registry.sh start`).
func RegistryTLS(t testing.TB) TLSRegistry {
	t.Helper()
	addr := registryTLSAddr()
	r := TLSRegistry{URL: "https://" + addr + "/apis/ccompat/v7", Host: addr}
	r.TLS = requireSecureService(t, "the TLS schema registry (e2e/registry.sh start tls)", addr, func(ctx context.Context, files TLSFiles) error {
		cfg, err := files.tlsConfig("")
		if err != nil {
			return err
		}
		client := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.URL+"/subjects", nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET /subjects: %s", resp.Status)
		}
		return nil
	})
	return r
}
