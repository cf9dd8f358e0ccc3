package config

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func standaloneProps() map[string]string {
	return map[string]string{
		"bootstrap.servers":              "localhost:9092",
		"key.converter":                  JSONConverter,
		"value.converter":                JSONConverter,
		"value.converter.schemas.enable": "false",
		"offset.storage.file.filename":   "/tmp/offsets",
		"producer.linger.ms":             "5",
		"plugin.path":                    "/opt/connectors",
	}
}

func TestParseWorkerStandaloneDefaults(t *testing.T) {
	w, res, err := ParseWorker(standaloneProps(), Standalone)
	if err != nil {
		t.Fatal(err)
	}
	if w.HeaderConverter != SimpleHeaderConverter || w.OffsetFlushInterval != time.Minute ||
		w.OffsetFlushTimeout != 5*time.Second || !w.TopicCreationEnable || w.Listeners[0] != "http://:8083" ||
		w.OffsetStorageFile != "/tmp/offsets" || w.RestAdvertisedPort != 0 {
		t.Errorf("defaults wrong: %+v", w)
	}
	if w.ValueConverterConfig["schemas.enable"] != "false" || w.Producer["linger.ms"] != "5" {
		t.Errorf("sub-settings: %v %v", w.ValueConverterConfig, w.Producer)
	}
	if len(res.Unknown) != 0 {
		t.Errorf("unexpected unknown keys %+v", res.Unknown)
	}
}

func TestParseWorkerErrors(t *testing.T) {
	tests := []struct {
		name   string
		mode   Mode
		change map[string]string
		drop   []string
		want   []string
	}{
		{"required keys", Standalone, nil, []string{"bootstrap.servers", "key.converter", "offset.storage.file.filename"},
			[]string{`Missing required configuration "bootstrap.servers"`, `Missing required configuration "key.converter"`, `Missing required configuration "offset.storage.file.filename"`}},
		{"unsupported converter", Standalone, map[string]string{"value.converter": "com.example.ProtobufConverter"}, nil,
			[]string{"value.converter=com.example.ProtobufConverter is not supported by cdcd; supported converters: " + JSONConverter}},
		{"bad number", Standalone, map[string]string{"offset.flush.interval.ms": "1m"}, nil,
			[]string{"Invalid value 1m for configuration offset.flush.interval.ms: Not a number of type LONG"}},
		{"empty listeners", Standalone, map[string]string{"listeners": ""}, nil,
			[]string{"Invalid value for listeners, at least one URL is expected"}},
		{"CORS origin Go cannot match", Standalone, map[string]string{"access.control.allow.origin": `https://a\.example,(?<!x)b`}, nil,
			[]string{`Invalid value https://a\.example,(?<!x)b for configuration access.control.allow.origin: origin pattern "(?<!x)b" is not a regular expression cdcd can match`}},
		{"distributed requirements", Distributed, map[string]string{"offset.storage.partitions": "0", "config.storage.replication.factor": "-2"}, nil,
			[]string{`Missing required configuration "group.id"`, `Missing required configuration "config.storage.topic"`,
				"Invalid value 0 for configuration offset.storage.partitions: Number of partitions must be positive, or -1 to use the broker's default",
				"Invalid value -2 for configuration config.storage.replication.factor: Replication factor must be positive"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			props := standaloneProps()
			for k, v := range tt.change {
				props[k] = v
			}
			for _, k := range tt.drop {
				delete(props, k)
			}
			_, _, err := ParseWorker(props, tt.mode)
			if !errors.Is(err, ErrWorkerConfig) {
				t.Fatalf("got %v, want ErrWorkerConfig", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestParseWorkerDistributedAndProviders(t *testing.T) {
	t.Setenv("CDCD_TEST_GROUP", "cluster-a")
	props := standaloneProps()
	delete(props, "offset.storage.file.filename")
	for k, v := range map[string]string{
		"group.id": "${env:CDCD_TEST_GROUP}", "config.storage.topic": "c", "offset.storage.topic": "o", "status.storage.topic": "s",
		"config.providers": "env", "config.providers.env.class": EnvVarProviderClass, "offset.storage.replication.factor": "-1",
		"offset.flush.interval.mss": "1",
	} {
		props[k] = v
	}
	w, res, err := ParseWorker(props, Distributed)
	if err != nil {
		t.Fatal(err)
	}
	if w.GroupID != "cluster-a" || w.OffsetStoragePartitions != 25 ||
		w.StatusStoragePartitions != 5 || w.OffsetStorageReplicationFactor != -1 || w.ConfigStorageReplicationFactor != 3 ||
		w.HeartbeatInterval != 3*time.Second || w.SessionTimeout != 10*time.Second ||
		w.RebalanceTimeout != time.Minute || w.ScheduledRebalanceMaxDelay != 5*time.Minute {
		t.Errorf("distributed values wrong: %+v", w)
	}
	if len(res.Unknown) != 1 || res.Unknown[0].Suggestion != "offset.flush.interval.ms" {
		t.Errorf("unknown keys %+v", res.Unknown)
	}
}
