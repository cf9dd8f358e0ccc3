package connect

import (
	"errors"
	"strconv"
	"strings"

	"github.com/cdcd/cdcd/connect/config"
	"github.com/cdcd/cdcd/schema/configdef"
	"github.com/cdcd/cdcd/source/props"
)

// connectorKeys are the settings Connect itself defines for every source connector (ConnectorConfig,
// SourceConnectorConfig), listed first in a validate response. The converter defaults are the worker's
// converters, as Connect reports them; Validators are Connect's.
func (w *Worker) connectorKeys() []configdef.Key {
	keys := connectKeys()
	for i := range keys {
		k := &keys[i]
		switch k.Name {
		case "name":
			k.Validator = nonEmptyName
		case "connector.plugin.version":
			k.Default = configdef.Ptr(pluginVersion())
		case "key.converter":
			k.Default, k.Recommended = configdef.Ptr(w.cfg.KeyConverter), config.SupportedConverters
		case "value.converter":
			k.Default, k.Recommended = configdef.Ptr(w.cfg.ValueConverter), config.SupportedConverters
		case "header.converter":
			k.Default, k.Recommended = configdef.Ptr(w.cfg.HeaderConverter), config.SupportedConverters
		case "tasks.max":
			k.Validator = configdef.AtLeast(1)
		case offsetsTopicKey:
			k.Validator = nonEmptyString // SourceConnectorConfig's NonEmptyString
		case "errors.tolerance":
			k.Validator = configdef.ValidString("none", "all")
		case "exactly.once.support":
			k.Validator = configdef.CaseInsensitiveValidString("requested", "required")
		case "transaction.boundary":
			k.Validator = configdef.CaseInsensitiveValidString("poll", "interval", "connector")
		case "transaction.boundary.interval.ms":
			atLeast0 := configdef.AtLeast(0)
			k.Validator = func(name string, value any) error { // unset: offset.flush.interval.ms
				if value == nil {
					return nil
				}
				return atLeast0(name, value)
			}
		}
	}
	return keys
}

// unimplementedConnectKeys are Connect's connector keys whose other values ask for what cdcd does not do yet:
// plugin versions other than the one cdcd is. Each passes at its default or unset.
//
// Every other key of connectKeys is honoured: name, connector.class, tasks.max (each connector runs one
// task, as Debezium's do, so tasks.max.enforce holds whatever its value), exactly.once.support and the
// transaction.boundary keys (exactlyOnceErrors, task.exactlyOnce), the converters, transforms and
// predicates, errors.tolerance and errors.log.*, topic.creation.groups (sink/kafka), offsets.storage.topic
// in distributed mode (Worker.offsetsFor; refused where it cannot be honoured, offsetsTopicErrors), and config.action.reload
// (the env, file and directory providers give values without a time to live, so Connect never reloads them
// either), and errors.retry.* (connectKeyNotes).
var unimplementedConnectKeys = []string{"connector.plugin.version", "key.converter.plugin.version", "value.converter.plugin.version", "header.converter.plugin.version"}

// ConnectorKeys is the accounting of Connect's own connector keys (connectKeys; its plugin versions default
// to cdcd's, the only one there is): unimplementedConnectKeys are refused unless at their defaults, the
// others honoured. The README's key table is generated from it.
func ConnectorKeys() props.Keys {
	keys := connectKeys()
	for i := range keys {
		if k := &keys[i]; strings.HasSuffix(k.Name, "plugin.version") {
			k.Default = configdef.Ptr(pluginVersion()) // Connect's converters' default is none
		}
	}
	return props.Keys{Declared: keys, Refused: unimplementedConnectKeys}
}

// exactlyOnceErrors are the preflight checks of DistributedHerder.validateSourceConnectorExactlyOnceSupport
// with Connect's messages. cdcd's connectors support exactly-once whatever their config (Debezium's
// exactlyOnceSupport answers SUPPORTED), and, unlike Debezium's, define transaction boundaries: with
// transaction.boundary=connector each source transaction is one Kafka transaction.
func (w *Worker) exactlyOnceErrors(cfg map[string]string) []keyError {
	if strings.EqualFold(strings.TrimSpace(cfg["exactly.once.support"]), "required") && !w.cfg.ExactlyOnceSource {
		return []keyError{{key: "exactly.once.support", msg: "This worker does not have exactly-once source support enabled."}}
	}
	return nil
}

// retryNote is why errors.retry.timeout and errors.retry.delay.max.ms change nothing in cdcd.
const retryNote = "Connect retries a conversion or transform only on a RetriableException; cdcd's converters and transforms fail on a record's content, which a retry would meet again, and a failure to reach the schema registry fails the task, which errors.max.retries restarts from its offset"

// connectKeyNotes are one line for each Connect key of cfg that is accepted and changes nothing in cdcd.
func connectKeyNotes(cfg map[string]string) []string {
	var notes []string
	for _, key := range []string{"errors.retry.timeout", "errors.retry.delay.max.ms"} {
		if v, set := cfg[key]; set {
			notes = append(notes, key+"="+v+" changes nothing in cdcd: "+retryNote)
		}
	}
	return notes
}

// connectKeyRefusals are the refusals of unimplementedConnectKeys in cfg, each on its key.
func connectKeyRefusals(cfg map[string]string) []keyError {
	var out []keyError
	for _, err := range ConnectorKeys().Refusals(cfg) {
		var refused *props.NotImplementedError
		if errors.As(err, &refused) {
			out = append(out, keyError{key: refused.Key, msg: err.Error()})
		}
	}
	return out
}

// connectKeys is generated from the validate response of Kafka Connect 4.4.0 (the keys before Debezium's
// own), in its order. Regenerate it from a real worker, never by hand.
func connectKeys() []configdef.Key {
	return []configdef.Key{
		{Name: "name", Type: configdef.String, Required: true, Importance: configdef.High, Group: "Common", OrderInGroup: 1, Width: configdef.WidthMedium, DisplayName: "Connector name", Doc: "Globally unique name to use for this connector."},
		{Name: "connector.class", Type: configdef.String, Required: true, Importance: configdef.High, Group: "Common", OrderInGroup: 2, Width: configdef.WidthLong, DisplayName: "Connector class", Doc: "Name or alias of the class for this connector. Must be a subclass of org.apache.kafka.connect.connector.Connector. If the connector is org.apache.kafka.connect.file.FileStreamSinkConnector, you can either specify this full name,  or use \"FileStreamSink\" or \"FileStreamSinkConnector\" to make the configuration a bit shorter"},
		{Name: "connector.plugin.version", Type: configdef.String, Importance: configdef.Medium, Group: "Common", OrderInGroup: 3, Width: configdef.WidthMedium, DisplayName: "Connector version", Doc: "Version of the connector."},
		{Name: "tasks.max", Type: configdef.Int, Default: configdef.Ptr("1"), Importance: configdef.High, Group: "Common", OrderInGroup: 4, Width: configdef.WidthShort, DisplayName: "Tasks max", Doc: "Maximum number of tasks to use for this connector."},
		{Name: "tasks.max.enforce", Type: configdef.Boolean, Default: configdef.Ptr("true"), Importance: configdef.Low, Group: "Common", OrderInGroup: 5, Width: configdef.WidthShort, DisplayName: "Enforce tasks max", Doc: "(Deprecated) Whether to enforce that the tasks.max property is respected by the connector. By default, connectors that generate too many tasks will fail, and existing sets of tasks that exceed the tasks.max property will also be failed. If this property is set to false, then connectors will be allowed to generate more than the maximum number of tasks, and existing sets of tasks that exceed the tasks.max property will be allowed to run. This property is deprecated and will be removed in an upcoming major release."},
		{Name: "key.converter", Type: configdef.Class, Default: configdef.Ptr("org.apache.kafka.connect.json.JsonConverter"), Importance: configdef.Low, Group: "Common", OrderInGroup: 6, Width: configdef.WidthShort, DisplayName: "Key converter class", Doc: "Converter class used to convert between Kafka Connect format and the serialized form that is written to Kafka. This controls the format of the keys in messages written to or read from Kafka, and since this is independent of connectors it allows any connector to work with any serialization format. Examples of common formats include JSON and Avro."},
		{Name: "key.converter.plugin.version", Type: configdef.String, Default: configdef.Ptr("4.4.0"), Importance: configdef.Low, Group: "Common", OrderInGroup: 7, Width: configdef.WidthShort, DisplayName: "Key converter version", Doc: "Version of the key converter."},
		{Name: "value.converter", Type: configdef.Class, Default: configdef.Ptr("org.apache.kafka.connect.json.JsonConverter"), Importance: configdef.Low, Group: "Common", OrderInGroup: 8, Width: configdef.WidthShort, DisplayName: "Value converter class", Doc: "Converter class used to convert between Kafka Connect format and the serialized form that is written to Kafka. This controls the format of the values in messages written to or read from Kafka, and since this is independent of connectors it allows any connector to work with any serialization format. Examples of common formats include JSON and Avro."},
		{Name: "value.converter.plugin.version", Type: configdef.String, Default: configdef.Ptr("4.4.0"), Importance: configdef.Low, Group: "Common", OrderInGroup: 9, Width: configdef.WidthShort, DisplayName: "Value converter version", Doc: "Version of the value converter."},
		{Name: "header.converter", Type: configdef.Class, Default: configdef.Ptr("org.apache.kafka.connect.storage.SimpleHeaderConverter"), Importance: configdef.Low, Group: "Common", OrderInGroup: 10, Width: configdef.WidthShort, DisplayName: "Header converter class", Doc: "HeaderConverter class used to convert between Kafka Connect format and the serialized form that is written to Kafka. This controls the format of the header values in messages written to or read from Kafka, and since this is independent of connectors it allows any connector to work with any serialization format. Examples of common formats include JSON and Avro. By default, the SimpleHeaderConverter is used to serialize header values to strings and deserialize them by inferring the schemas."},
		{Name: "header.converter.plugin.version", Type: configdef.String, Default: configdef.Ptr("4.4.0"), Importance: configdef.Low, Group: "Common", OrderInGroup: 11, Width: configdef.WidthShort, DisplayName: "Header converter version", Doc: "Version of the header converter."},
		{Name: "transforms", Type: configdef.List, Default: configdef.Ptr(""), Importance: configdef.Low, Group: "Transforms", OrderInGroup: 12, Width: configdef.WidthLong, DisplayName: "Transforms", Doc: "Aliases for the transformations to be applied to records."},
		{Name: "predicates", Type: configdef.List, Default: configdef.Ptr(""), Importance: configdef.Low, Group: "Predicates", OrderInGroup: 13, Width: configdef.WidthLong, DisplayName: "Predicates", Doc: "Aliases for the predicates used by transformations."},
		{Name: "config.action.reload", Type: configdef.String, Default: configdef.Ptr("restart"), Importance: configdef.Low, Group: "Common", OrderInGroup: 14, Width: configdef.WidthMedium, DisplayName: "Reload Action", Doc: "The action that Connect should take on the connector when changes in external configuration providers result in a change in the connector's configuration properties. A value of 'none' indicates that Connect will do nothing. A value of 'restart' indicates that Connect should restart/reload the connector with the updated configuration properties.The restart may actually be scheduled in the future if the external configuration provider indicates that a configuration value will expire in the future."},
		{Name: "errors.retry.timeout", Type: configdef.Long, Default: configdef.Ptr("0"), Importance: configdef.Medium, Group: "Error Handling", OrderInGroup: 1, Width: configdef.WidthMedium, DisplayName: "Retry Timeout for Errors", Doc: "The maximum duration in milliseconds that a failed operation will be reattempted. The default is 0, which means no retries will be attempted. Use -1 for infinite retries."},
		{Name: "errors.retry.delay.max.ms", Type: configdef.Long, Default: configdef.Ptr("60000"), Importance: configdef.Medium, Group: "Error Handling", OrderInGroup: 2, Width: configdef.WidthMedium, DisplayName: "Maximum Delay Between Retries for Errors", Doc: "The maximum duration in milliseconds between consecutive retry attempts. Jitter will be added to the delay once this limit is reached to prevent thundering herd issues."},
		{Name: "errors.tolerance", Type: configdef.String, Default: configdef.Ptr("none"), Importance: configdef.Medium, Group: "Error Handling", OrderInGroup: 3, Width: configdef.WidthShort, DisplayName: "Error Tolerance", Doc: "Behavior for tolerating errors during connector operation. 'none' is the default value and signals that any error will result in an immediate connector task failure; 'all' changes the behavior to skip over problematic records."},
		{Name: "errors.log.enable", Type: configdef.Boolean, Default: configdef.Ptr("false"), Importance: configdef.Medium, Group: "Error Handling", OrderInGroup: 4, Width: configdef.WidthShort, DisplayName: "Log Errors", Doc: "If true, write each error and the details of the failed operation and problematic record to the Connect application log. This is 'false' by default, so that only errors that are not tolerated are reported."},
		{Name: "errors.log.include.messages", Type: configdef.Boolean, Default: configdef.Ptr("false"), Importance: configdef.Medium, Group: "Error Handling", OrderInGroup: 5, Width: configdef.WidthShort, DisplayName: "Log Error Details", Doc: "Whether to include in the log the Connect record that resulted in a failure. For sink records, the topic, partition, offset, and timestamp will be logged. For source records, the key and value (and their schemas), all headers, and the timestamp, Kafka topic, Kafka partition, source partition, and source offset will be logged. This is 'false' by default, which will prevent record keys, values, and headers from being written to log files."},
		{Name: "topic.creation.groups", Type: configdef.List, Default: configdef.Ptr(""), Importance: configdef.Low, Group: "Topic Creation", OrderInGroup: 1, Width: configdef.WidthLong, DisplayName: "Topic Creation Groups", Doc: "Groups of configurations for topics created by source connectors"},
		{Name: "exactly.once.support", Type: configdef.String, Default: configdef.Ptr("requested"), Importance: configdef.Medium, Group: "Exactly Once Support", OrderInGroup: 2, Width: configdef.WidthShort, DisplayName: "Exactly once support", Doc: "Permitted values are requested, required. If set to \"required\", forces a preflight check for the connector to ensure that it can provide exactly-once semantics with the given configuration. Some connectors may be capable of providing exactly-once semantics but not signal to Connect that they support this; in that case, documentation for the connector should be consulted carefully before creating it, and the value for this property should be set to \"requested\". Additionally, if the value is set to \"required\" but the worker that performs preflight validation does not have exactly-once support enabled for source connectors, requests to create or validate the connector will fail."},
		{Name: "transaction.boundary", Type: configdef.String, Default: configdef.Ptr("poll"), Importance: configdef.Medium, Group: "Exactly Once Support", OrderInGroup: 3, Width: configdef.WidthShort, DisplayName: "Transaction Boundary", Doc: "Permitted values are: poll, interval, connector. If set to 'poll', a new producer transaction will be started and committed for every batch of records that each task from this connector provides to Connect. If set to 'connector', relies on connector-defined transaction boundaries; note that not all connectors are capable of defining their own transaction boundaries, and in that case, attempts to instantiate a connector with this value will fail. Finally, if set to 'interval', commits transactions only after a user-defined time interval has passed."},
		{Name: "transaction.boundary.interval.ms", Type: configdef.Long, Importance: configdef.Low, Group: "Exactly Once Support", OrderInGroup: 4, Width: configdef.WidthShort, DisplayName: "Transaction boundary interval", Doc: "If 'transaction.boundary' is set to 'interval', determines the interval for producer transaction commits by connector tasks. If unset, defaults to the value of the worker-level 'offset.flush.interval.ms' property. It has no effect if a different transaction.boundary is specified."},
		{Name: "offsets.storage.topic", Type: configdef.String, Importance: configdef.Low, Group: "offsets.topic", OrderInGroup: 1, Width: configdef.WidthLong, DisplayName: "Offsets topic", Doc: "The name of a separate offsets topic to use for this connector. If empty or not specified, the worker’s global offsets topic name will be used. If specified, the offsets topic will be created if it does not already exist on the Kafka cluster targeted by this connector (which may be different from the one used for the worker's global offsets topic if the bootstrap.servers property of the connector's producer has been overridden from the worker's). Only applicable in distributed mode; in standalone mode, setting this property will have no effect."},
	}
}

// nonEmptyString is Connect's ConfigDef.NonEmptyString: unset passes, empty does not.
func nonEmptyString(name string, value any) error {
	if s, ok := value.(string); ok && s == "" {
		return &configdef.ConfigError{Name: name, Value: value, Message: "String must be non-empty"}
	}
	return nil
}

// nonEmptyName is Connect's NonEmptyStringWithoutControlChars on the connector's name: not empty, and no ISO
// control character (U+0000 to U+001F, U+007F to U+009F), each listed by its code point as Connect lists them.
func nonEmptyName(name string, value any) error {
	s, _ := value.(string)
	if s == "" {
		return &configdef.ConfigError{Name: name, Value: value, Message: "String may not be empty"}
	}
	var controls []string
	for _, r := range s {
		if r <= 0x1f || r >= 0x7f && r <= 0x9f {
			controls = append(controls, strconv.Itoa(int(r)))
		}
	}
	if len(controls) > 0 {
		return &configdef.ConfigError{Name: name, Value: value, Message: "String may not contain control sequences but had the following ASCII chars: " + strings.Join(controls, ", ")}
	}
	return nil
}
