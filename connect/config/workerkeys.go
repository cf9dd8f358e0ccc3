package config

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/cdcd/cdcd/schema/configdef"
	"github.com/cdcd/cdcd/source/props"
)

// No worker key is silently ignored either: every key of Kafka Connect 4.4's worker (WorkerConfig,
// StandaloneConfig, DistributedConfig) is read by ParseWorker (WorkerKeys), refused unless at its default
// (workerRefusedKeys), or accepted because it cannot change what cdcd does (workerAcceptedKeys, each with
// its reason). The Kafka clients' security keys (security.protocol, ssl.*, sasl.*) are the client
// security settings' (Worker.Client). TestWorkerKeysAccounted holds this against Connect's own list.

// WorkerRefusedKeys are the worker keys cdcd does not implement, with Connect's defaults: set to another
// value, each is refused at start-up with "cdcd does not implement <key> yet; remove it (…)".
func WorkerRefusedKeys() []configdef.Key { return workerRefusedKeys }

var workerRefusedKeys = []configdef.Key{
	// The Kafka clients' connection tuning: kafka-go's transport has its own, not these knobs.
	refusedKey("client.dns.lookup", configdef.String, "use_all_dns_ips"),
	refusedKey("bootstrap.resolve.timeout.ms", configdef.Long, "0"),
	refusedKey("metadata.max.age.ms", configdef.Long, "300000"),
	refusedKey("metadata.recovery.strategy", configdef.String, "rebootstrap"),
	refusedKey("metadata.recovery.rebootstrap.trigger.ms", configdef.Long, "300000"),
	refusedKey("metadata.cluster.check.enable", configdef.Boolean, "true"),
	refusedKey("send.buffer.bytes", configdef.Int, "131072"),
	refusedKey("receive.buffer.bytes", configdef.Int, "32768"),
	refusedKey("reconnect.backoff.ms", configdef.Long, "50"),
	refusedKey("reconnect.backoff.max.ms", configdef.Long, "1000"),
	refusedKey("socket.connection.setup.timeout.ms", configdef.Long, "10000"),
	refusedKey("socket.connection.setup.timeout.max.ms", configdef.Long, "30000"),
	refusedKey("retry.backoff.ms", configdef.Long, "100"),
	refusedKey("retry.backoff.max.ms", configdef.Long, "1000"),
	refusedKey("request.timeout.ms", configdef.Int, "40000"),
	refusedKey("connections.max.idle.ms", configdef.Long, "540000"),
	// Plugin versions: cdcd has one built-in version of each converter.
	nullDefault("key.converter.plugin.version", configdef.String),
	nullDefault("value.converter.plugin.version", configdef.String),
	nullDefault("header.converter.plugin.version", configdef.String),
	// Kafka's own metrics (JMX): cdcd serves Prometheus metrics at GET /metrics instead.
	refusedKey("metrics.sample.window.ms", configdef.Long, "30000"),
	refusedKey("metrics.num.samples", configdef.Int, "2"),
	refusedKey("metrics.recording.level", configdef.String, "INFO"),
	refusedKey("metric.reporters", configdef.List, "org.apache.kafka.common.metrics.JmxReporter"),
	// The REST API's extra headers.
	refusedKey("response.http.headers.config", configdef.String, ""),
	nullDefault("admin.listeners", configdef.List),
	// Connect's topic tracking (GET /connectors/{name}/topics is always on).
	refusedKey("topic.tracking.enable", configdef.Boolean, "true"),
	refusedKey("topic.tracking.allow.reset", configdef.Boolean, "true"),
	// Distributed mode.
	refusedKey("internal.topics.automatic.creation.enable", configdef.Boolean, "true"),
	refusedKey("worker.sync.timeout.ms", configdef.Int, "3000"),
	refusedKey("worker.unsync.backoff.ms", configdef.Int, "300000"),
	refusedKey("connect.protocol", configdef.String, "sessioned"),
}

// refusedKey is a refused key with Connect's default; nullDefault is one whose default is null.
func refusedKey(name string, t configdef.Type, def string) configdef.Key {
	return configdef.Key{Name: name, Type: t, Default: configdef.Ptr(def)}
}

func nullDefault(name string, t configdef.Type) configdef.Key {
	return configdef.Key{Name: name, Type: t}
}

// WorkerAcceptedKeys are the worker keys that cannot change what cdcd does, whatever their value, each with
// the reason.
func WorkerAcceptedKeys() map[string]string { return workerAcceptedKeys }

var workerAcceptedKeys = map[string]string{
	"plugin.path":      "it lists directories of plugin jars to load; cdcd's connectors, converters and transforms are built in, so loading none changes no record",
	"plugin.discovery": "it chooses how plugin.path is scanned; there is nothing to scan",
}

// workerRefusedFamilies are prefixes of worker keys that are refused by name: the metric reporters'
// context labels (metrics.context.*), which only JMX and custom reporters read.
var workerRefusedFamilies = []string{"metrics.context."}

// workerAccountedNames are the keys and families ParseWorker accounts for outside WorkerKeys, so that
// Validate reports none of them as unknown.
func workerAccountedNames() []string {
	var out []string
	for _, k := range workerRefusedKeys {
		out = append(out, k.Name)
	}
	for k := range workerAcceptedKeys {
		out = append(out, k)
	}
	// rest.extension.classes is honoured for BasicAuthSecurityRestExtension and refused otherwise (workerRefusals).
	// exactly.once.source.support is a distributed worker's key (WorkerKeys); standalone refuses it
	// (workerRefusals).
	return append(append(out, workerRefusedFamilies...), "rest.extension.classes", exactlyOnceSourceSupport)
}

// basicAuthExtension is the one REST extension cdcd honours (connect/rest.CredentialsFile: the JAAS file
// KAFKA_OPTS names, or rest.basic.auth.credentials.file).
const basicAuthExtension = "org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension"

// workerRefusals are the refusals of the keys cdcd accounts for outside WorkerKeys' validators, sorted by key.
func workerRefusals(cfg map[string]string, mode Mode) []string {
	var out []string
	if v, set := cfg[exactlyOnceSourceSupport]; set && mode == Standalone && strings.TrimSpace(v) != "disabled" {
		out = append(out, fmt.Sprintf("%s=%s: a standalone worker has no exactly-once source support, as in Kafka Connect "+
			"(\"Kafka Connect in standalone mode does not support exactly-once source connectors.\"); run a distributed worker or remove it", exactlyOnceSourceSupport, v))
	}
	for _, k := range workerRefusedKeys {
		if v, set := cfg[k.Name]; set && !props.AtDefault(k, v) {
			out = append(out, (&props.NotImplementedError{Key: k.Name, Default: k.Default}).Error())
		}
	}
	for key := range cfg {
		// admin.listeners and admin.listeners.https.* are the REST API's admin listeners.
		if k, ok := strings.CutPrefix(key, "admin."); ok && !props.IsKafkaSecurityKey(k) && !strings.HasPrefix(k, "listeners") {
			out = append(out, AdminSettingRefusal(key))
		}
		for _, f := range workerRefusedFamilies {
			if strings.HasPrefix(key, f) {
				out = append(out, (&props.NotImplementedError{Key: key}).Error())
			}
		}
	}
	for _, class := range strings.Split(cfg["rest.extension.classes"], ",") {
		if class = strings.TrimSpace(class); class != "" && class != basicAuthExtension {
			out = append(out, fmt.Sprintf("rest.extension.classes: cdcd loads no REST extension; %s cannot run in cdcd (remove it; only BasicAuthSecurityRestExtension is honoured, with the JAAS file KAFKA_OPTS names or rest.basic.auth.credentials.file)", class))
		}
	}
	if l := strings.TrimSpace(cfg["rest.advertised.listener"]); l != "" {
		// The advertised URL's scheme is the first listener's: another would send workers to a listener
		// that does not exist.
		listener := strings.TrimSpace(strings.Split(cfg["listeners"], ",")[0])
		if listener == "" {
			listener = "http://:8083"
		}
		if u, err := url.Parse(listener); err == nil && !strings.EqualFold(u.Scheme, l) {
			out = append(out, fmt.Sprintf("rest.advertised.listener=%s: cdcd advertises the scheme of its first listener (%s); set listeners to a %s listener or remove rest.advertised.listener", l, u.Scheme, l))
		}
	}
	slices.Sort(out)
	return out
}
