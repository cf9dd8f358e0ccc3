package connect

import (
	"strings"
	"testing"
)

// The kafka signal channel's settings are checked at validation, each refusal on its key: the connector's
// own (brokers required, consumer settings cdcd does not honour) and the consumer's security, which the
// runtime's client security parsing honours or refuses; no refusal shows a secret.
func TestValidationChecksTheKafkaSignalChannel(t *testing.T) {
	w := newPolicyWorker(t, nil)
	kafkaSignals := func(extra map[string]string) map[string]string {
		cfg := pgConfig("pg")
		cfg["signal.enabled.channels"] = "source,kafka"
		cfg["signal.kafka.bootstrap.servers"] = "127.0.0.1:1"
		for k, v := range extra {
			cfg[k] = v
		}
		return cfg
	}
	jaas := `org.apache.kafka.common.security.plain.PlainLoginModule required username="app" password="` + clientTestSecret + `";`
	if got := errorsByKey(t, w, kafkaSignals(map[string]string{"signal.consumer.security.protocol": "SASL_PLAINTEXT",
		"signal.consumer.sasl.mechanism": "PLAIN", "signal.consumer.sasl.jaas.config": jaas, "signal.kafka.topic": "sigs"})); len(got) != 0 {
		t.Fatalf("a valid kafka channel: %v", got)
	}
	for name, tc := range map[string]struct {
		set       map[string]string
		key, want string
	}{
		"security":        {map[string]string{"signal.consumer.security.protocol": "SASL_PLAINTEXT", "signal.consumer.sasl.mechanism": "GSSAPI", "signal.consumer.sasl.jaas.config": jaas}, "signal.consumer.sasl.mechanism", "GSSAPI (Kerberos) is not implemented in cdcd"},
		"bad protocol":    {map[string]string{"signal.consumer.security.protocol": "TLS"}, "signal.consumer.security.protocol", "is not one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL"},
		"consumer":        {map[string]string{"signal.consumer.max.poll.records": "1"}, "signal.consumer.max.poll.records", "cdcd does not implement signal.consumer.max.poll.records yet"},
		"no brokers":      {map[string]string{"signal.kafka.bootstrap.servers": ""}, "signal.kafka.bootstrap.servers", "reads its signals from these brokers"},
		"another channel": {map[string]string{"signal.enabled.channels": "kafka,jmx"}, "signal.enabled.channels", "does not read the jmx signal channel yet"},
	} {
		got := errorsByKey(t, w, kafkaSignals(tc.set))
		if msgs := got[tc.key]; len(msgs) != 1 || !strings.Contains(msgs[0], tc.want) {
			t.Errorf("%s: errors %v, want %s refused with %q", name, got, tc.key, tc.want)
		}
	}
	// Without the channel its consumer's security is not checked, as Debezium builds no consumer.
	cfg := pgConfig("pg")
	cfg["signal.consumer.security.protocol"] = "TLS"
	if got := errorsByKey(t, w, cfg); len(got) != 0 {
		t.Errorf("kafka channel off: %v", got)
	}
}
