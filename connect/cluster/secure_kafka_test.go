package cluster

import (
	"context"
	"fmt"
	"testing"

	"github.com/cdcd/cdcd/connect/config"
	"github.com/cdcd/cdcd/e2e/testenv"
	"github.com/cdcd/cdcd/sink/kafka"
)

// The distributed worker's topics and group on the test bed's SASL_SSL listener, through the one worker
// transport cmd/cdcd builds from the worker's security settings (SCRAM-SHA-512, JKS truststore).
func TestTopicLogAndStoresOverSASLSSL(t *testing.T) {
	k := testenv.KafkaSASLSSL(t)
	transport, err := kafka.NewTransportFrom(map[string]string{
		"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512",
		"sasl.jaas.config":        fmt.Sprintf(`org.apache.kafka.common.security.scram.ScramLoginModule required username="%s" password="%s";`, k.User, k.Password),
		"ssl.truststore.location": k.TLS.TruststoreJKS, "ssl.truststore.password": k.TLS.StorePassword,
	}, "cdcd-secured")
	if err != nil {
		t.Fatal(err)
	}
	defer transport.CloseIdleConnections()
	ctx := testContext(t)
	prefix := testenv.NewTopicPrefix(t)

	var seen []string
	cfg := LogConfig{Brokers: k.Brokers, Transport: transport, Topic: StatusTopic(prefix+"-status", 2, 1)}
	l, err := OpenLog(ctx, cfg, func(r Record) { seen = append(seen, string(r.Key)) })
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.Write(ctx, Message{Key: []byte("a"), Value: []byte("1")}, Message{Key: []byte("b"), Value: []byte("2")}); err != nil {
		t.Fatal(err)
	}
	if err := l.ReadToEnd(ctx); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 {
		t.Fatalf("read back %v", seen)
	}

	w := &config.Worker{
		BootstrapServers: k.Brokers, GroupID: prefix + "-group",
		ConfigStorageTopic: prefix + "-configs", OffsetStorageTopic: prefix + "-offsets", StatusStorageTopic: prefix + "-statuses",
		ConfigStorageReplicationFactor: 1, OffsetStorageReplicationFactor: 1, StatusStorageReplicationFactor: 1,
		OffsetStoragePartitions: 1, StatusStoragePartitions: 1,
	}
	stores, err := OpenStores(ctx, w, nil, nil, WithTransport(transport))
	if err != nil {
		t.Fatal(err)
	}
	defer stores.Close()
	if err := stores.Configs.PutConnectorConfig(ctx, "conn", map[string]string{"connector.class": "X"}, nil); err != nil {
		t.Fatal(err)
	}

	// A member joins the group over the same transport and is given the connector.
	assigned := make(chan Assignment, 16)
	mc := MemberConfigFor(w)
	mc.Transport, mc.URL, mc.Configs = transport, "http://worker-1:8083/", stores.Configs
	mc.OnAssignment = func(a Assignment) { assigned <- a }
	m, err := NewMember(mc)
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- m.Run(runCtx) }()
	defer func() { stop(); <-ran }()
	for {
		select {
		case a := <-assigned:
			if len(a.Owned) > 0 {
				return
			}
		case err := <-ran:
			t.Fatalf("the member stopped: %v", err)
		case <-ctx.Done():
			t.Fatal("the member was not assigned the connector over SASL_SSL")
		}
	}
}
