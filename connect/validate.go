package connect

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cdcd/cdcd/connect/config"
	"github.com/cdcd/cdcd/connect/transforms"
	"github.com/cdcd/cdcd/schema/configdef"
	"github.com/cdcd/cdcd/source"
)

// ConnectorPlugins lists the connector plugins; with connectorsOnly false, the converters too.
func (w *Worker) ConnectorPlugins(connectorsOnly bool) []PluginInfo {
	var out []PluginInfo
	for _, p := range w.plugins {
		out = append(out, PluginInfo{Class: p.Class(), Type: ConnectorType, Version: pluginVersion()})
	}
	if connectorsOnly {
		return out
	}
	for _, c := range config.SupportedConverters {
		if c != config.SimpleHeaderConverter {
			out = append(out, PluginInfo{Class: c, Type: "converter", Version: pluginVersion()})
		}
	}
	for _, c := range []string{config.JSONConverter, config.SimpleHeaderConverter, config.StringConverter, config.ByteArrayConverter} {
		out = append(out, PluginInfo{Class: c, Type: "header_converter", Version: pluginVersion()})
	}
	return out
}

// PluginConfig returns the connector plugin's setting definitions: Debezium's, then Connect's own.
func (w *Worker) PluginConfig(plugin string) ([]configdef.ConfigKeyInfo, error) {
	p := w.plugins.find(plugin)
	if p == nil {
		return nil, notFound("Unknown plugin %s.", plugin)
	}
	// Without a config to validate, Connect knows no converter defaults: only validate fills in the worker's.
	connectKeys := w.connectorKeys()
	for i := range connectKeys {
		if strings.Contains(connectKeys[i].Name, "converter") {
			connectKeys[i].Default = nil
		}
	}
	infos := configdef.NewConfigInfos(p.Class(), append(p.ConfigKeys(), connectKeys...), configdef.Result{})
	out := make([]configdef.ConfigKeyInfo, 0, len(infos.Configs))
	for _, c := range infos.Configs {
		out = append(out, *c.Definition)
	}
	return out, nil
}

// ValidateConnectorConfig is PUT /connector-plugins/{plugin}/config/validate: always a ConfigInfos when
// the plugin and class are known, errors included.
func (w *Worker) ValidateConnectorConfig(plugin string, cfg map[string]string) (configdef.ConfigInfos, error) {
	if class, ok := cfg["connector.class"]; ok && !strings.HasSuffix(trimConnector(class), trimConnector(plugin)) {
		return configdef.ConfigInfos{}, &RequestError{Kind: BadRequest, Message: "Included connector type " + class + " does not match request type " + plugin}
	}
	infos, err := w.validate(cfg, true)
	var reqErr *RequestError
	if errors.As(err, &reqErr) {
		// Connect wraps the herder's refusal in an ExecutionException here, which maps to a 500.
		return infos, &RequestError{Kind: ServerError, Message: "org.apache.kafka.connect.runtime.rest.errors.BadRequestException: " + reqErr.Message}
	}
	return infos, err
}

func trimConnector(s string) string { return strings.TrimSuffix(s, "Connector") }

// validate is AbstractHerder.validateConnectorConfig: Connect's own keys checked as Connect checks them,
// the connector's as Debezium does, and then what cdcd itself refuses (the plugin's parse) added to the
// key it concerns. With checkConnection, a config without other errors is also checked against its
// database, as Debezium's validate() connects (addConnectionErrors).
func (w *Worker) validate(cfg map[string]string, checkConnection bool) (configdef.ConfigInfos, error) {
	class, ok := cfg["connector.class"]
	if !ok {
		return configdef.ConfigInfos{}, &RequestError{Kind: BadRequest, Message: "Connector config contains no connector type"}
	}
	p := w.plugins.find(class)
	if p == nil {
		descs := make([]string, len(w.plugins))
		for i, p := range w.plugins {
			descs[i] = fmt.Sprintf("PluginDesc{klass=class %s, name='%s', version='%s', encodedVersion=%s, type=source, typeName='source', location='classpath'}",
				p.Class(), p.Class(), pluginVersion(), pluginVersion())
		}
		return configdef.ConfigInfos{}, &RequestError{Kind: BadRequest, Message: fmt.Sprintf(
			"Failed to find any class that implements Connector and which name matches %s, available connectors are: %s",
			class, strings.Join(descs, ", "))}
	}
	connectKeys := w.connectorKeys()
	res := configdef.Validate(connectKeys, cfg)
	res.Values = append(res.Values, p.Validate(cfg).Values...)
	for _, e := range append(connectKeyRefusals(cfg), w.exactlyOnceErrors(cfg)...) {
		addError(&res, e.key, e.msg)
	}
	if res.ErrorCount() == 0 {
		addParseErrors(&res, w, p, cfg)
	}
	if res.ErrorCount() == 0 {
		addClientErrors(&res, w, cfg)
	}
	if checkConnection && res.ErrorCount() == 0 {
		addConnectionErrors(&res, w, p, cfg)
	}
	addTransformErrors(&res, cfg)
	if res.ErrorCount() == 0 {
		w.addSchemaRegistryErrors(&res, cfg)
	}
	return configdef.NewConfigInfos(p.Class(), append(connectKeys, p.ConfigKeys()...), res), nil
}

// addSchemaRegistryErrors is validation's schema pre-flight: when the worker writes Avro through a schema
// registry, each captured table's current key and value schemas are checked against the registry's
// compatibility rules, and a table the registry would refuse is reported on the converter concerned.
func (w *Worker) addSchemaRegistryErrors(res *configdef.Result, cfg map[string]string) {
	_, keyChecks := w.encoder.Key.(schemaChecker)
	_, valueChecks := w.encoder.Value.(schemaChecker)
	if !keyChecks && !valueChecks {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	check, err := w.checkSchemas(ctx, cfg["name"], cfg)
	if err != nil {
		addError(res, "value.converter", "The captured tables' schemas could not be checked against the schema registry: "+err.Error())
		return
	}
	for _, t := range check.Tables {
		if t.Compatible {
			continue
		}
		key := "value.converter"
		if t.key {
			key = "key.converter"
		}
		addError(res, key, fmt.Sprintf("Table %s: the schema registry would refuse its current schema under subject %s: %s",
			t.Table, t.Subject, strings.Join(t.Messages, "; ")))
	}
}

// addParseErrors adds cdcd's own refusals (a value Debezium accepts but cdcd cannot honour, such as
// plugin.name=decoderbufs) to the values they concern.
func addParseErrors(res *configdef.Result, w *Worker, p source.Connector, cfg map[string]string) {
	resolved, err := w.ResolveConnectorConfig(cfg)
	if err != nil {
		addError(res, "connector.class", err.Error())
		return
	}
	hidden := secretsOf(cfg, resolved, w.keysOf(resolved))
	for _, e := range hidden.refusals(resolved, taskRefusals(p, cfg["name"])) {
		addError(res, e.key, e.msg)
	}
}

// defaultConnectionValidationTimeout is Debezium's default connection.validation.timeout.ms.
const defaultConnectionValidationTimeout = 60 * time.Second

// addConnectionErrors is Debezium's validateConnection, run as its connectors' validate() runs it, on a
// config without other errors: the task connects to its database and checks what reading needs, within
// connection.validation.timeout.ms. A failure is reported on database.hostname, as Debezium reports it,
// so that POST /connectors and PUT …/config answer 400 naming the server and the reason.
func addConnectionErrors(res *configdef.Result, w *Worker, p source.Connector, cfg map[string]string) {
	resolved, err := w.ResolveConnectorConfig(cfg)
	if err != nil {
		return // addParseErrors reported it
	}
	timeout := defaultConnectionValidationTimeout
	if v := strings.TrimSpace(resolved["connection.validation.timeout.ms"]); v != "" {
		ms, err := strconv.ParseInt(v, 10, 64)
		if err != nil || ms <= 0 {
			addError(res, "connection.validation.timeout.ms", fmt.Sprintf("Invalid value %s for configuration connection.validation.timeout.ms: a positive number of milliseconds", v))
			return
		}
		timeout = time.Duration(ms) * time.Millisecond
	}
	t, err := p.NewTask(cfg["name"], resolved, slog.New(slog.DiscardHandler))
	if err != nil {
		return // addParseErrors reported it
	}
	checker, ok := t.(source.ConnectionChecker)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	err = checker.CheckConnection(ctx)
	if err == nil {
		return
	}
	if ctx.Err() != nil {
		err = fmt.Errorf("no answer within connection.validation.timeout.ms=%d: %w", timeout.Milliseconds(), err)
	}
	// The database server words this error: it cannot be built from the unresolved config, so the
	// scrubber hides what it quotes of the secrets (a user name a provider resolved, say).
	hidden := secretsOf(cfg, resolved, w.keysOf(resolved))
	addError(res, "database.hostname", hidden.scrub("Error while validating connector config: "+err.Error()))
}

// addClientErrors adds what the task's Kafka clients would refuse (see Worker.clientErrors) to the keys
// concerned.
func addClientErrors(res *configdef.Result, w *Worker, cfg map[string]string) {
	resolved, err := w.ResolveConnectorConfig(cfg)
	if err != nil {
		return // addParseErrors reported it
	}
	hidden := secretsOf(cfg, resolved, w.keysOf(resolved))
	for _, e := range hidden.refusals(resolved, w.clientRefusals(cfg["name"])) {
		addError(res, e.key, e.msg)
	}
}

// addTransformErrors adds what the transforms chain refuses (an unknown type, a bad setting) to the key
// concerned.
func addTransformErrors(res *configdef.Result, cfg map[string]string) {
	err := transforms.Validate(cfg)
	if err == nil {
		return
	}
	errs := []error{err}
	var joined interface{ Unwrap() []error }
	if errors.As(err, &joined) {
		errs = joined.Unwrap()
	}
	for _, e := range errs {
		var ce *transforms.ConfigError
		if errors.As(e, &ce) {
			addError(res, ce.Key, e.Error())
		} else {
			addError(res, "transforms", e.Error())
		}
	}
}

func addError(res *configdef.Result, key, msg string) {
	for i := range res.Values {
		if res.Values[i].Name == key {
			res.Values[i].Errors = append(res.Values[i].Errors, msg)
			return
		}
	}
	res.Values = append(res.Values, configdef.Value{Name: key, Errors: []string{msg}})
}

// connectorKeyPrefixes are the families of connector keys that Connect reads under a prefix (its clients'
// overrides, the transforms and predicates, topic creation groups, the converters' settings), which are
// therefore never unknown. A connector adds the families whose every key its own parse honours or refuses
// by name (keyFamilies); any other key that neither Connect nor the connector declares is unknown.
var connectorKeyPrefixes = []string{"producer.override.", "consumer.override.", "admin.override.", "transforms.",
	"predicates.", "topic.creation.", "key.converter.", "value.converter.", "header.converter."}

// keyFamilies is what a connector says of the key prefixes its parse accounts for, key by key.
type keyFamilies interface{ KeyFamilies() []string }

// warnUnknownKeys logs each connector key neither Connect nor the connector defines, with the closest known
// key, as Connect's validation reports them; the key is otherwise ignored, as Connect ignores it. Connect's
// keys that change nothing in cdcd get one INFO line each saying why (connectKeyNotes).
func (w *Worker) warnUnknownKeys(name string, cfg map[string]string) {
	prefixes := connectorKeyPrefixes
	if f, ok := w.plugins.find(cfg["connector.class"]).(keyFamilies); ok {
		prefixes = append(slices.Clip(prefixes), f.KeyFamilies()...)
	}
	current := w.currentNames(cfg)
	res := configdef.Validate(w.keysOf(current), current, prefixes...)
	for _, u := range res.Unknown {
		w.log.Warn("unknown connector property ignored", "connector", name, "key", u.Name, "did_you_mean", u.Suggestion)
	}
	for _, note := range connectKeyNotes(cfg) {
		w.log.Info(note, "connector", name)
	}
}

// legacyNames is a connector that reads old Debezium names (database.server.name, *.whitelist,
// database.history.*…) as today's; the mapping is its parse's, which also warns of each.
type legacyNames interface {
	MapLegacyKeys(given map[string]string) (mapped map[string]string, warnings []string, err error)
}

// currentNames is cfg with its connector's old Debezium names mapped to today's, as the connector's parse
// reads it, for what the runtime reads of a connector config besides the parse (unknown keys, the schema
// history's clients). A refused old name is left out: validation reports it on the key.
func (w *Worker) currentNames(cfg map[string]string) map[string]string {
	l, ok := w.plugins.find(cfg["connector.class"]).(legacyNames)
	if !ok {
		return cfg
	}
	mapped, _, _ := l.MapLegacyKeys(cfg)
	return mapped
}

// accountedKeys is what a connector says of the keys its parse reads beyond its ConfigKeys: Debezium's
// connectors read some keys outside their ConfigDef (read.only, topic.delimiter…), which a validate response
// does not show but which are no more unknown than the declared ones.
type accountedKeys interface{ AccountedKeys() []configdef.Key }

// keysOf is every key a connector config may set: Connect's own, then its connector class's (those it
// reads outside its ConfigDef included).
func (w *Worker) keysOf(cfg map[string]string) []configdef.Key {
	keys := w.connectorKeys()
	switch p := w.plugins.find(cfg["connector.class"]).(type) {
	case accountedKeys:
		keys = append(keys, p.AccountedKeys()...)
	case source.Connector:
		keys = append(keys, p.ConfigKeys()...)
	}
	return keys
}
