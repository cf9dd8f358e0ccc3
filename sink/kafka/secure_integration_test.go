package kafka

// Tests against the SASL_SSL listener of e2e/services.sh's broker; skipped unless CDCD_E2E is set and the
// secured test bed runs (e2e/testenv/secure.go).

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cdcd/cdcd/e2e/testenv"
	"github.com/cdcd/cdcd/sink"
	"github.com/cdcd/cdcd/source"
)

// secureSettings are the client settings of each way the test bed takes a client: SCRAM-SHA-512 with a
// JKS truststore, PLAIN with a PEM truststore, SCRAM-SHA-256 with PKCS12 stores and a client certificate.
func secureSettings(k testenv.SASLSSLKafka) map[string]map[string]string {
	jaasOf := func(module string) string {
		return fmt.Sprintf(`%s required username="%s" password="%s";`, module, k.User, k.Password)
	}
	return map[string]map[string]string{
		"SCRAM-SHA-512, JKS truststore": {
			"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512", "sasl.jaas.config": jaasOf(scramLoginModule),
			"ssl.truststore.location": k.TLS.TruststoreJKS, "ssl.truststore.password": k.TLS.StorePassword,
		},
		"PLAIN, PEM truststore": {
			"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN", "sasl.jaas.config": jaasOf(plainLoginModule),
			"ssl.truststore.type": "PEM", "ssl.truststore.location": k.TLS.CA,
		},
		"SCRAM-SHA-256, PKCS12 stores and a client certificate": {
			"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-256", "sasl.jaas.config": jaasOf(scramLoginModule),
			"ssl.truststore.type": "PKCS12", "ssl.truststore.location": k.TLS.TruststoreP12, "ssl.truststore.password": k.TLS.StorePassword,
			"ssl.keystore.type": "PKCS12", "ssl.keystore.location": k.TLS.ClientKeystoreP12, "ssl.keystore.password": k.TLS.StorePassword,
		},
	}
}

// A Writer (its producer, and its admin client creating the topic) and a LogOpener's log work against the
// real SASL_SSL listener with each way of logging in.
func TestRealSASLSSLListener(t *testing.T) {
	k := testenv.KafkaSASLSSL(t)
	for name, settings := range secureSettings(k) {
		t.Run(name, func(t *testing.T) {
			topic := testenv.NewTopicPrefix(t) + ".secured"
			w := newTestWriter(t, Config{
				Brokers: k.Brokers, ClientID: "connector-producer-secured-0", Producer: settings,
				Admin: settings, AdminClientID: "connector-adminclient-secured-0",
				TopicCreation: topicCreationFor(t, 1, nil),
			})
			res := newResult()
			send(t, w, keyedRecords(topic, "k", "v", 20), res.done(t, 0))
			if err := res.wait(t)[0]; err != nil {
				t.Fatal(err)
			}

			// A durable log on its own transport of the same settings reads the Writer's topic (one
			// partition) and appends to a history topic it creates.
			transport, err := NewTransportFrom(settings, "history")
			if err != nil {
				t.Fatal(err)
			}
			defer transport.CloseIdleConnections()
			o := NewLogOpener(LogOpenerConfig{Brokers: k.Brokers, Transport: transport, Log: testLogger(t)})
			if got := logReadAll(t, logOpen(t, o, source.LogSpec{Name: topic})); len(got) != 20 || string(got[19]) != "v-19" {
				t.Fatalf("read %d records back, want the 20 produced", len(got))
			}
			history := logOpen(t, o, source.LogSpec{Name: topic + ".history", Settings: logHistorySettings})
			ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
			defer cancel()
			if err := history.Append(ctx, []byte("ddl")); err != nil {
				t.Fatal(err)
			}
			if got := logReadAll(t, history); len(got) != 1 || string(got[0]) != "ddl" {
				t.Fatalf("history holds %q", got)
			}

			// The same settings as the history's own client settings, without an opener transport.
			plain := NewLogOpener(LogOpenerConfig{Brokers: k.Brokers, Log: testLogger(t)})
			spec := source.LogSpec{Name: topic + ".history", ProducerSettings: settings, ConsumerSettings: settings}
			if got := logReadAll(t, logOpen(t, plain, spec)); len(got) != 1 {
				t.Fatalf("history read with its own client settings holds %q", got)
			}
		})
	}
}

// The real broker's refusals: a wrong password names the mechanism and the user, never the password; a
// truststore without the broker's CA, and a broker address its certificate lacks, fail the handshake; none
// is retried.
func TestRealSASLSSLRefusals(t *testing.T) {
	k := testenv.KafkaSASLSSL(t)
	settings := secureSettings(k)["SCRAM-SHA-512, JKS truststore"]
	try := func(settings map[string]string) error {
		transport, err := NewTransportFrom(settings, "refused")
		if err != nil {
			t.Fatal(err)
		}
		defer transport.CloseIdleConnections()
		o := NewLogOpener(LogOpenerConfig{Brokers: k.Brokers, Transport: transport, Log: testLogger(t)})
		ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
		defer cancel()
		start := time.Now()
		_, err = o.OpenLog(ctx, source.LogSpec{Name: testenv.NewTopicPrefix(t) + ".refused"})
		if time.Since(start) > 10*time.Second {
			t.Errorf("the refusal took %s: it was retried", time.Since(start))
		}
		return err
	}

	const wrong = "not-the-cdcd-secret"
	wrongPassword := with(settings, "sasl.jaas.config", fmt.Sprintf(`%s required username="%s" password="%s";`, scramLoginModule, k.User, wrong))
	err := try(wrongPassword)
	if err == nil || !errors.Is(err, ErrSecurity) || !strings.Contains(err.Error(), `SASL/SCRAM-SHA-512 as user "cdcd": authentication failed`) ||
		strings.Contains(err.Error(), wrong) {
		t.Errorf("a wrong password: got %v, want a SASL failure naming the mechanism and the user, without the password", err)
	}
	untrusted := with(settings, "ssl.truststore.location", k.TLS.OtherTruststoreJKS)
	if err := try(untrusted); err == nil || !strings.Contains(err.Error(), "not signed by a CA the client trusts") {
		t.Errorf("an untrusted CA: got %v", err)
	}
	// The broker's certificate names 127.0.0.1 and localhost: reached by another address, the handshake
	// fails unless ssl.endpoint.identification.algorithm is empty.
	elsewhere := testenv.ForwardFromOtherHost(t, k.Brokers[0])
	tryAt := func(settings map[string]string) error {
		transport, err := NewTransportFrom(settings, "elsewhere")
		if err != nil {
			t.Fatal(err)
		}
		defer transport.CloseIdleConnections()
		o := NewLogOpener(LogOpenerConfig{Brokers: []string{elsewhere}, Transport: transport, Log: testLogger(t)})
		ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
		defer cancel()
		_, err = o.OpenLog(ctx, source.LogSpec{Name: testenv.NewTopicPrefix(t) + ".elsewhere"})
		return err
	}
	if err := tryAt(settings); err == nil || !strings.Contains(err.Error(), testenv.OtherHostAddr) {
		t.Errorf("a broker reached by an address its certificate lacks: got %v, want a host name failure", err)
	}
	if err := tryAt(with(settings, "ssl.endpoint.identification.algorithm", "")); err != nil {
		t.Errorf("the same without host name verification: %v", err)
	}

	// The SASL_SSL port does not take a client that does not speak TLS.
	w, err := NewWriter(Config{Brokers: k.Brokers, Producer: with(settings, "security.protocol", "SASL_PLAINTEXT")}, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close(context.Background())
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
	defer cancel()
	if err := w.Send(ctx, []sink.Record{{Topic: "secured-plaintext", Value: []byte("v")}}, func(error) {}); err == nil {
		t.Error("a SASL_PLAINTEXT client was taken by the SASL_SSL listener")
	}
}

// with returns a copy of settings with key set to value.
func with(settings map[string]string, key, value string) map[string]string {
	out := make(map[string]string, len(settings)+1)
	for k, v := range settings {
		out[k] = v
	}
	out[key] = value
	return out
}
