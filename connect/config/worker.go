package config

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/cdcd/cdcd/connect/interworker"
	"github.com/cdcd/cdcd/schema/configdef"
	"github.com/cdcd/cdcd/source/props"
)

// Mode is how the worker runs: connect-standalone or connect-distributed.
type Mode int

const (
	Standalone Mode = iota
	Distributed
)

// Converter and header converter classes cdcd implements.
const (
	JSONConverter         = "org.apache.kafka.connect.json.JsonConverter"
	StringConverter       = "org.apache.kafka.connect.storage.StringConverter"
	ByteArrayConverter    = "org.apache.kafka.connect.converters.ByteArrayConverter"
	AvroConverter         = "io.confluent.connect.avro.AvroConverter"
	SimpleHeaderConverter = "org.apache.kafka.connect.storage.SimpleHeaderConverter"
)

// SupportedConverters lists the classes accepted for key.converter,
// value.converter and header.converter.
var SupportedConverters = []string{JSONConverter, StringConverter, ByteArrayConverter, AvroConverter, SimpleHeaderConverter}

// CheckConverter refuses a converter class cdcd does not implement; key is
// the setting that named it (a worker's or a connector's override).
func CheckConverter(key, class string) error {
	if slices.Contains(SupportedConverters, class) {
		return nil
	}
	return fmt.Errorf("%s=%s is not supported by cdcd; supported converters: %s",
		key, class, strings.Join(SupportedConverters, ", "))
}

// Worker is a parsed worker.properties, with Connect 4.4's keys and defaults.
type Worker struct {
	Mode             Mode
	BootstrapServers []string
	ClientID         string

	KeyConverter, ValueConverter, HeaderConverter string
	// The key.converter.*, value.converter.* and header.converter.* settings,
	// prefix removed (e.g. "schemas.enable").
	KeyConverterConfig, ValueConverterConfig, HeaderConverterConfig map[string]string
	// Producer holds producer.* settings, prefix removed.
	Producer map[string]string
	// Client holds the top-level Kafka client security settings (security.*, ssl.*, sasl.*): those of
	// the worker's own clients (the distributed group, the internal topics, the cluster id lookup) and the
	// base of the tasks' admin clients, as Connect passes its top-level settings to them. ssl.client.auth
	// is left out: at the top of a worker file it is the REST listener's.
	Client map[string]string
	// Admin holds admin.* settings, prefix removed: the tasks' admin clients (topic creation) take them
	// over Client.
	Admin map[string]string
	// ClientConfigOverridePolicy is connector.client.config.override.policy by its alias: All (Connect
	// 4.x's default), None or Principal.
	ClientConfigOverridePolicy string

	OffsetFlushInterval         time.Duration
	OffsetFlushTimeout          time.Duration
	TaskShutdownGracefulTimeout time.Duration
	TopicCreationEnable         bool

	Listeners              []string
	RestAdvertisedHostName string // "" when unset
	RestAdvertisedPort     int    // 0 when unset
	RestAdvertisedListener string // "" when unset

	// Providers resolve placeholders in connector configs; the worker's own
	// values are already resolved.
	Providers Providers

	// Standalone only.
	OffsetStorageFile string

	// Distributed only.
	GroupID string
	// ExactlyOnceSource is exactly.once.source.support=enabled: each source task writes its records and
	// offsets in Kafka transactions, and the offsets are read read_committed.
	ExactlyOnceSource              bool
	ConfigStorageTopic             string
	OffsetStorageTopic             string
	StatusStorageTopic             string
	ConfigStorageReplicationFactor int16
	OffsetStorageReplicationFactor int16
	StatusStorageReplicationFactor int16
	OffsetStoragePartitions        int32
	StatusStoragePartitions        int32
	HeartbeatInterval              time.Duration
	SessionTimeout                 time.Duration
	RebalanceTimeout               time.Duration
	ScheduledRebalanceMaxDelay     time.Duration
	InterWorker                    InterWorker
}

// InterWorker is how a distributed worker signs and checks the requests workers send each other
// (KIP-507): the inter.worker.* keys, validated as DistributedConfig validates them.
type InterWorker struct {
	// KeyAlgorithm and KeySize (in bytes) make the session keys this worker distributes when it leads.
	KeyAlgorithm string
	KeySize      int
	// KeyTTL is how long a session key serves before the leader replaces it; 0: until the leader changes
	// its key algorithm or size.
	KeyTTL time.Duration
	// SignatureAlgorithm signs this worker's requests; VerificationAlgorithms are the signature algorithms
	// it accepts, by their exact names (as Connect compares them).
	SignatureAlgorithm     string
	VerificationAlgorithms []string
}

// workerPrefixes are sub-setting families Connect accepts in a worker file.
var workerPrefixes = []string{
	"key.converter.", "value.converter.", "header.converter.", "producer.", "consumer.", "admin.",
	"config.providers.", "listeners.https.", "admin.listeners.https.",
	// Kafka client security settings: the worker's own clients honour or refuse each (see Worker.Client).
	"ssl.", "sasl.", "security.",
}

// WorkerKeys returns the definitions cdcd validates a worker config with,
// taken from Connect 4.4's WorkerConfig, StandaloneConfig and DistributedConfig.
func WorkerKeys(mode Mode) []configdef.Key {
	keys := []configdef.Key{
		{Name: "bootstrap.servers", Type: configdef.List, Required: true, Importance: configdef.High, Doc: "Kafka brokers to connect to, host1:port1,host2:port2,..."},
		{Name: "key.converter", Type: configdef.Class, Required: true, Importance: configdef.High, Doc: "Converter class for record keys."},
		{Name: "value.converter", Type: configdef.Class, Required: true, Importance: configdef.High, Doc: "Converter class for record values."},
		{Name: "header.converter", Type: configdef.Class, Default: configdef.Ptr(SimpleHeaderConverter), Importance: configdef.Low, Doc: "HeaderConverter class for record headers."},
		{Name: "task.shutdown.graceful.timeout.ms", Type: configdef.Long, Default: configdef.Ptr("5000"), Importance: configdef.Low, Doc: "Time to wait for tasks to stop."},
		{Name: "offset.flush.interval.ms", Type: configdef.Long, Default: configdef.Ptr("60000"), Importance: configdef.Low, Doc: "Interval at which to commit offsets."},
		{Name: "offset.flush.timeout.ms", Type: configdef.Long, Default: configdef.Ptr("5000"), Importance: configdef.Low, Doc: "Time to wait for an offset flush before cancelling it."},
		{Name: "plugin.path", Type: configdef.List, Importance: configdef.Low, Doc: "Accepted for compatibility; cdcd has no plugins."},
		{Name: "config.providers", Type: configdef.List, Default: configdef.Ptr(""), Importance: configdef.Low, Doc: "Names of config providers."},
		{Name: "topic.creation.enable", Type: configdef.Boolean, Default: configdef.Ptr("true"), Importance: configdef.Low, Doc: "Whether source connectors may create topics from topic.creation.* settings."},
		{Name: "listeners", Type: configdef.List, Default: configdef.Ptr("http://:8083"), Importance: configdef.Low, Doc: "REST API listener URLs.", Validator: listenersValidator},
		{Name: "rest.advertised.host.name", Type: configdef.String, Importance: configdef.Low, Doc: "Host name given to other workers."},
		{Name: "rest.advertised.port", Type: configdef.Int, Importance: configdef.Low, Doc: "Port given to other workers."},
		{Name: "rest.advertised.listener", Type: configdef.String, Importance: configdef.Low, Doc: "Protocol given to other workers."},
		{Name: "access.control.allow.origin", Type: configdef.String, Default: configdef.Ptr(""), Importance: configdef.Low, Validator: allowedOriginsValidator,
			Doc: "Origins (comma-separated regular expressions matched against the whole Origin header, case-insensitively, or *) whose web pages may call the REST API across origins; empty: none."},
		{Name: "access.control.allow.methods", Type: configdef.String, Default: configdef.Ptr(""), Importance: configdef.Low,
			Doc: "Methods (comma-separated) a CORS preflight answer allows; empty: GET, POST and HEAD."},
		{Name: "client.id", Type: configdef.String, Default: configdef.Ptr(""), Importance: configdef.Low, Doc: "Client id sent with Kafka requests."},
		{Name: "connector.client.config.override.policy", Type: configdef.String, Default: configdef.Ptr("All"), Importance: configdef.Medium,
			Doc: "What connectors may override of their Kafka clients' settings: All, None, or Principal (security.protocol, sasl.mechanism, sasl.jaas.config).", Validator: overridePolicyValidator},
	}
	if mode == Standalone {
		return append(keys, configdef.Key{Name: "offset.storage.file.filename", Type: configdef.String, Required: true, Importance: configdef.High, Doc: "File to store source connector offsets in."})
	}
	return append(keys,
		configdef.Key{Name: "group.id", Type: configdef.String, Required: true, Importance: configdef.High, Doc: "Connect cluster group this worker belongs to."},
		configdef.Key{Name: "session.timeout.ms", Type: configdef.Int, Default: configdef.Ptr("10000"), Importance: configdef.High, Doc: "Group session timeout."},
		configdef.Key{Name: "rebalance.timeout.ms", Type: configdef.Int, Default: configdef.Ptr("60000"), Importance: configdef.High, Doc: "Maximum time for a rebalance."},
		configdef.Key{Name: "heartbeat.interval.ms", Type: configdef.Int, Default: configdef.Ptr("3000"), Importance: configdef.High, Doc: "Group heartbeat interval."},
		configdef.Key{Name: "offset.storage.topic", Type: configdef.String, Required: true, Importance: configdef.High, Doc: "Topic for source connector offsets."},
		configdef.Key{Name: "offset.storage.partitions", Type: configdef.Int, Default: configdef.Ptr("25"), Importance: configdef.Low, Doc: "Partitions of the offsets topic.", Validator: partitionsValidator},
		configdef.Key{Name: "offset.storage.replication.factor", Type: configdef.Short, Default: configdef.Ptr("3"), Importance: configdef.Low, Doc: "Replication factor of the offsets topic.", Validator: replicationFactorValidator},
		configdef.Key{Name: "config.storage.topic", Type: configdef.String, Required: true, Importance: configdef.High, Doc: "Topic for connector configurations."},
		configdef.Key{Name: "config.storage.replication.factor", Type: configdef.Short, Default: configdef.Ptr("3"), Importance: configdef.Low, Doc: "Replication factor of the config topic.", Validator: replicationFactorValidator},
		configdef.Key{Name: "status.storage.topic", Type: configdef.String, Required: true, Importance: configdef.High, Doc: "Topic for connector and task status."},
		configdef.Key{Name: "status.storage.partitions", Type: configdef.Int, Default: configdef.Ptr("5"), Importance: configdef.Low, Doc: "Partitions of the status topic.", Validator: partitionsValidator},
		configdef.Key{Name: "status.storage.replication.factor", Type: configdef.Short, Default: configdef.Ptr("3"), Importance: configdef.Low, Doc: "Replication factor of the status topic.", Validator: replicationFactorValidator},
		configdef.Key{Name: exactlyOnceSourceSupport, Type: configdef.String, Default: configdef.Ptr("disabled"), Importance: configdef.High,
			Doc: "Whether to enable exactly-once support for source connectors in the cluster by using transactions to write source records and their source offsets. Permitted values: disabled, enabled.", Validator: exactlyOnceValidator},
		configdef.Key{Name: "scheduled.rebalance.max.delay.ms", Type: configdef.Int, Default: configdef.Ptr("300000"), Importance: configdef.Low, Doc: "Delay before reassigning a departed worker's work.", Validator: configdef.Between(0, math.MaxInt32)},
		configdef.Key{Name: interWorkerKeyTTL, Type: configdef.Int, Default: configdef.Ptr("3600000"), Importance: configdef.Low,
			Doc: "The TTL of generated session keys used for internal request validation (in milliseconds)", Validator: configdef.Between(0, math.MaxInt32)},
		configdef.Key{Name: interWorkerKeyAlgorithm, Type: configdef.String, Default: configdef.Ptr(interworker.DefaultAlgorithm), Importance: configdef.Low,
			Doc: "The algorithm to use for generating internal request keys.", Validator: algorithmValidator},
		configdef.Key{Name: interWorkerKeySize, Type: configdef.Int, Importance: configdef.Low,
			Doc: "The size of the key to use for signing internal requests, in bits. If null, the default key size for the key generation algorithm will be used."},
		configdef.Key{Name: interWorkerSignatureAlgorithm, Type: configdef.String, Default: configdef.Ptr(interworker.DefaultAlgorithm), Importance: configdef.Low,
			Doc: "The algorithm used to sign internal requests.", Validator: algorithmValidator},
		configdef.Key{Name: interWorkerVerificationAlgorithms, Type: configdef.List, Default: configdef.Ptr(interworker.DefaultAlgorithm), Importance: configdef.Low,
			Doc: "A list of permitted algorithms for verifying internal requests, which must include the algorithm used for the inter.worker.signature.algorithm property.", Validator: verificationAlgorithmsValidator},
	)
}

// The inter.worker.* keys (DistributedConfig).
const (
	interWorkerKeyTTL                 = "inter.worker.key.ttl.ms"
	interWorkerKeyAlgorithm           = "inter.worker.key.generation.algorithm"
	interWorkerKeySize                = "inter.worker.key.size"
	interWorkerSignatureAlgorithm     = "inter.worker.signature.algorithm"
	interWorkerVerificationAlgorithms = "inter.worker.verification.algorithms"
)

// algorithmValidator refuses an algorithm cdcd cannot sign or make keys with, listing those it can (as
// Connect lists the JVM's).
func algorithmValidator(name string, value any) error {
	if s, ok := value.(string); ok && !interworker.Known(s) {
		return unsupportedAlgorithm(name, s)
	}
	return nil
}

func unsupportedAlgorithm(name, algorithm string) error {
	return &configdef.ConfigError{Name: name, Value: algorithm,
		Message: "the algorithm is not supported by cdcd; the supported algorithms are: " + strings.Join(interworker.Algorithms(), ", ")}
}

func verificationAlgorithmsValidator(name string, value any) error {
	algorithms, _ := value.([]string)
	if len(algorithms) == 0 {
		return &configdef.ConfigError{Name: name, Value: value, Message: "At least one signature verification algorithm must be provided"}
	}
	for _, a := range algorithms {
		if !interworker.Known(a) {
			return unsupportedAlgorithm(name, a)
		}
	}
	return nil
}

// interWorkerConfig reads the inter.worker.* keys once each is valid on its own, and checks them together
// as DistributedConfig.validateInterWorkerKeyConfigs does: the key size must suit the generation algorithm,
// and the signature algorithm must be one of the verification algorithms.
func interWorkerConfig(get func(string) any) (InterWorker, error) {
	c := InterWorker{}
	c.KeyAlgorithm, _ = get(interWorkerKeyAlgorithm).(string)
	c.SignatureAlgorithm, _ = get(interWorkerSignatureAlgorithm).(string)
	c.VerificationAlgorithms, _ = get(interWorkerVerificationAlgorithms).([]string)
	if ttl, ok := get(interWorkerKeyTTL).(int32); ok {
		c.KeyTTL = time.Duration(ttl) * time.Millisecond
	}
	var err error
	if bits, set := get(interWorkerKeySize).(int32); set {
		c.KeySize, err = interworker.KeySize(c.KeyAlgorithm, int(bits))
		if err != nil {
			//lint:ignore ST1005 DistributedConfig's words
			return c, fmt.Errorf("Unable to create key generator with algorithm %s and key size %d: %w", c.KeyAlgorithm, bits, err)
		}
	} else if c.KeySize, err = interworker.DefaultKeySize(c.KeyAlgorithm); err != nil {
		return c, err
	}
	if !slices.Contains(c.VerificationAlgorithms, c.SignatureAlgorithm) {
		return c, &configdef.ConfigError{Name: interWorkerSignatureAlgorithm, Value: c.SignatureAlgorithm,
			Message: "Signature algorithm must be present in " + interWorkerVerificationAlgorithms + " list"}
	}
	return c, nil
}

const exactlyOnceSourceSupport = "exactly.once.source.support"

// exactlyOnceValidator is DistributedConfig's (values are case-sensitive there too), without
// "preparing": that step of Connect's rolling upgrade switches the leader's config-topic writes to a
// transactional producer, which cdcd's leader does not have.
func exactlyOnceValidator(name string, value any) error {
	switch value {
	case "disabled", "enabled":
		return nil
	case "preparing":
		return &configdef.ConfigError{Name: name, Value: value, Message: "cdcd's leader writes the config topic without a transaction, so there is nothing to prepare: set enabled on every worker (or disabled)"}
	}
	return &configdef.ConfigError{Name: name, Value: value, Message: "String must be one of: disabled, preparing, enabled"}
}

// Override policies (Connect's ConnectorClientConfigOverridePolicy implementations) by alias and class.
var overridePolicies = map[string]string{
	"All": "All", "None": "None", "Principal": "Principal",
	"org.apache.kafka.connect.connector.policy.AllConnectorClientConfigOverridePolicy":       "All",
	"org.apache.kafka.connect.connector.policy.NoneConnectorClientConfigOverridePolicy":      "None",
	"org.apache.kafka.connect.connector.policy.PrincipalConnectorClientConfigOverridePolicy": "Principal",
	"AllConnectorClientConfigOverridePolicy":                                                 "All",
	"NoneConnectorClientConfigOverridePolicy":                                                "None",
	"PrincipalConnectorClientConfigOverridePolicy":                                           "Principal",
}

func overridePolicyValidator(name string, value any) error {
	if s, ok := value.(string); ok {
		if _, known := overridePolicies[s]; !known {
			return &configdef.ConfigError{Name: name, Value: value, Message: "cdcd implements the policies All, None and Principal; a policy class of its own cannot run in cdcd"}
		}
	}
	return nil
}

func listenersValidator(_ string, value any) error {
	items, _ := value.([]string)
	if len(items) == 0 {
		//lint:ignore ST1005 Kafka's ListenersValidator text, to the letter
		return errors.New("Invalid value for listeners, at least one URL is expected, ex: http://localhost:8080,https://localhost:8443.")
	}
	for _, it := range items {
		if strings.TrimSpace(it) == "" {
			//lint:ignore ST1005 Kafka's ListenersValidator text, to the letter
			return errors.New("Empty URL found when parsing listeners list.")
		}
	}
	return nil
}

// partitionsValidator is TopicCreationConfig.PARTITIONS_VALIDATOR; a value
// that failed to parse was already reported (Kafka would throw an NPE here).
func partitionsValidator(name string, value any) error {
	if n, ok := value.(int32); ok && n != -1 && n < 1 {
		return &configdef.ConfigError{Name: name, Value: value, Message: "Number of partitions must be positive, or -1 to use the broker's default"}
	}
	return nil
}

func replicationFactorValidator(name string, value any) error {
	if n, ok := value.(int16); ok && n != -1 && n < 1 {
		return &configdef.ConfigError{Name: name, Value: value, Message: "Replication factor must be positive and not larger than the number of brokers in the Kafka cluster, or -1 to use the broker's default"}
	}
	return nil
}

// ParseWorker validates worker properties as Connect does at startup: the
// worker's own ${provider:...} placeholders are resolved first with the
// providers it declares (the process environment feeds the env provider),
// then every key is checked against WorkerKeys(mode). The Result carries
// per-key messages and unknown keys with suggestions, which the caller
// should log as warnings. The error lists every problem, including
// converter classes cdcd does not implement.
func ParseWorker(props map[string]string, mode Mode) (*Worker, configdef.Result, error) {
	providers, err := NewProviders(props, os.Environ())
	if err != nil {
		return nil, configdef.Result{}, fmt.Errorf("%w: %w", ErrWorkerConfig, err)
	}
	resolved, err := providers.Resolve(props)
	if err != nil {
		return nil, configdef.Result{}, fmt.Errorf("%w: %w", ErrWorkerConfig, err)
	}
	cfg := resolved.Values
	defs := WorkerKeys(mode)
	// Every other key of Connect's is refused unless at its default, or accepted for a stated reason
	// (workerkeys.go): none is accepted without being used.
	known := append(append([]string{}, workerPrefixes...), workerAccountedNames()...)
	res := configdef.Validate(defs, cfg, known...)
	problems := append(res.Errors(), workerRefusals(cfg, mode)...)
	for _, key := range []string{"key.converter", "value.converter", "header.converter"} {
		if v, _ := res.Value(key); v.Parsed != nil {
			class, _ := v.Parsed.(string)
			if err := CheckConverter(key, class); err != nil {
				problems = append(problems, err.Error())
			}
		}
	}
	if len(problems) > 0 {
		return nil, res, fmt.Errorf("%w:\n%s", ErrWorkerConfig, strings.Join(problems, "\n"))
	}
	if _, ok := cfg["plugin.path"]; ok {
		slog.Info("plugin.path is accepted for compatibility and ignored: cdcd has its connectors built in")
	}
	w := &Worker{
		Mode:                  mode,
		Providers:             providers,
		KeyConverterConfig:    paramsWithPrefix(cfg, "key.converter."),
		ValueConverterConfig:  paramsWithPrefix(cfg, "value.converter."),
		HeaderConverterConfig: paramsWithPrefix(cfg, "header.converter."),
		Producer:              paramsWithPrefix(cfg, "producer."),
		Client:                clientSecuritySettings(cfg),
		Admin:                 paramsWithPrefix(cfg, "admin."),
	}
	get := func(name string) any { v, _ := res.Value(name); return v.Parsed }
	str := func(name string) string { s, _ := get(name).(string); return s }
	ms := func(name string) time.Duration {
		switch n := get(name).(type) {
		case int64:
			return time.Duration(n) * time.Millisecond
		case int32:
			return time.Duration(n) * time.Millisecond
		}
		return 0
	}
	w.BootstrapServers, _ = get("bootstrap.servers").([]string)
	w.ClientID = str("client.id")
	w.KeyConverter, w.ValueConverter, w.HeaderConverter = str("key.converter"), str("value.converter"), str("header.converter")
	w.OffsetFlushInterval = ms("offset.flush.interval.ms")
	w.OffsetFlushTimeout = ms("offset.flush.timeout.ms")
	w.TaskShutdownGracefulTimeout = ms("task.shutdown.graceful.timeout.ms")
	w.TopicCreationEnable, _ = get("topic.creation.enable").(bool)
	w.Listeners, _ = get("listeners").([]string)
	w.RestAdvertisedHostName = str("rest.advertised.host.name")
	if p, ok := get("rest.advertised.port").(int32); ok {
		w.RestAdvertisedPort = int(p)
	}
	w.RestAdvertisedListener = str("rest.advertised.listener")
	w.ClientConfigOverridePolicy = overridePolicies[str("connector.client.config.override.policy")]
	if mode == Standalone {
		w.OffsetStorageFile = str("offset.storage.file.filename")
		return w, res, nil
	}
	w.GroupID = str("group.id")
	w.ConfigStorageTopic = str("config.storage.topic")
	w.OffsetStorageTopic = str("offset.storage.topic")
	w.StatusStorageTopic = str("status.storage.topic")
	w.ConfigStorageReplicationFactor, _ = get("config.storage.replication.factor").(int16)
	w.OffsetStorageReplicationFactor, _ = get("offset.storage.replication.factor").(int16)
	w.StatusStorageReplicationFactor, _ = get("status.storage.replication.factor").(int16)
	w.OffsetStoragePartitions, _ = get("offset.storage.partitions").(int32)
	w.StatusStoragePartitions, _ = get("status.storage.partitions").(int32)
	w.HeartbeatInterval = ms("heartbeat.interval.ms")
	w.SessionTimeout = ms("session.timeout.ms")
	w.RebalanceTimeout = ms("rebalance.timeout.ms")
	w.ScheduledRebalanceMaxDelay = ms("scheduled.rebalance.max.delay.ms")
	w.ExactlyOnceSource = str(exactlyOnceSourceSupport) == "enabled"
	if w.InterWorker, err = interWorkerConfig(get); err != nil {
		return nil, res, fmt.Errorf("%w:\n%w", ErrWorkerConfig, err)
	}
	return w, res, nil
}

// clientSecuritySettings are the top-level keys of Kafka's client security family (security.*, ssl.*,
// sasl.*), without the REST listener's ssl.client.auth.
func clientSecuritySettings(cfg map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range cfg {
		if props.IsKafkaSecurityKey(k) && k != "ssl.client.auth" {
			out[k] = v
		}
	}
	return out
}

// AdminSettingRefusal is the refusal of a setting of the tasks' admin clients (the worker's admin.*, a
// connector's admin.override.*) outside the security family: cdcd's admin client creates the tasks' topics
// on the worker's bootstrap.servers with the producer's timeouts, and takes nothing else.
func AdminSettingRefusal(key string) string {
	return fmt.Sprintf("%s: cdcd's admin client (the tasks' topic creation) takes only Kafka's security settings (security.protocol, ssl.*, sasl.*); "+
		"it reaches the worker's bootstrap.servers with the producer's timeouts, so this setting could not apply: remove it", key)
}
