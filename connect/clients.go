package connect

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/cdcd/cdcd/connect/config"
	"github.com/cdcd/cdcd/source"
	sourceprops "github.com/cdcd/cdcd/source/props"
	"github.com/cdcd/cdcd/source/signal"
)

// This file is what Connect decides about the Kafka clients of a connector's task: which settings each
// sees (Worker.baseProducerConfigs, Worker.adminConfigs), what connector.client.config.override.policy
// lets a connector override (AbstractHerder.validateClientOverrides), and the checks validation runs on
// those settings, so a setting cdcd cannot honour is refused when the connector is created, naming the
// key, and not when its task starts.

const (
	producerOverridePrefix = "producer.override."
	adminOverridePrefix    = "admin.override."
	// The schema history's clients (Debezium's KafkaSchemaHistory).
	historyProducerPrefix = "schema.history.internal.producer."
	historyConsumerPrefix = "schema.history.internal.consumer."
	historyTopicKey       = "schema.history.internal.kafka.topic"
)

// principalOverrides are the settings Connect's Principal policy lets a connector override.
var principalOverrides = []string{"sasl.jaas.config", "sasl.mechanism", "security.protocol"}

// keyError is a refusal of one connector key.
type keyError struct{ key, msg string }

// String is the refusal with its key, for an error outside a validation result.
func (e keyError) String() string {
	if strings.HasPrefix(e.msg, e.key+":") {
		return e.msg
	}
	return e.key + ": " + e.msg
}

// withPrefix returns the keys of props under prefix, prefix removed; nil when there are none.
func withPrefix(props map[string]string, prefix string) map[string]string {
	var out map[string]string
	for k, v := range props {
		if rest, ok := strings.CutPrefix(k, prefix); ok {
			if out == nil {
				out = map[string]string{}
			}
			out[rest] = v
		}
	}
	return out
}

// usesTopicCreation is SourceConnectorConfig.usesTopicCreation, loosely: the connector has topic.creation.*
// keys, so its task has an admin client.
func usesTopicCreation(props map[string]string) bool {
	for k := range props {
		if strings.HasPrefix(k, "topic.creation.") {
			return true
		}
	}
	return false
}

// overrideErrors are the connector's client overrides the worker's policy forbids, in Connect's words:
// producer.override.* always (a source task has a producer), admin.override.* when the task creates
// topics. consumer.override.* is not checked, as Connect does not for a source connector: it has no
// consumer.
func (w *Worker) overrideErrors(props map[string]string) []keyError {
	policy := w.cfg.ClientConfigOverridePolicy
	if policy == "" || policy == "All" {
		return nil
	}
	prefixes := []string{producerOverridePrefix}
	if usesTopicCreation(props) {
		prefixes = append(prefixes, adminOverridePrefix)
	}
	var out []keyError
	for _, prefix := range prefixes {
		for _, k := range slices.Sorted(maps.Keys(withPrefix(props, prefix))) {
			if policy == "Principal" && slices.Contains(principalOverrides, k) {
				continue
			}
			out = append(out, keyError{prefix + k, fmt.Sprintf("The '%s' policy does not allow '%s' to be overridden in the connector configuration.", policy, k)})
		}
	}
	return out
}

// checkOverrides is what a task checks before it opens its clients, as Connect's Worker does "in case"
// validation was skipped (a config stored before the policy changed).
func (w *Worker) checkOverrides(props map[string]string) error {
	errs := w.overrideErrors(props)
	if len(errs) == 0 {
		return nil
	}
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.key + ": " + e.msg
	}
	return source.Fatal(errors.New("Client Config Overrides not allowed: " + strings.Join(msgs, "; ")))
}

// logSpecChecker is a log opener that can check a log's client settings without contacting anything.
type logSpecChecker interface {
	CheckLogSpec(spec source.LogSpec) error
}

// clientErrors checks the settings of the Kafka clients a task of the connector would open, without
// contacting Kafka: the override policy, the sink as the task opens it (its producer and admin settings),
// the clients of the connector's own offsets topic (offsetsTopicErrors), and the schema history's client
// settings when the connector has any. resolved has its placeholders
// resolved. The messages name the connector's keys; a caller scrubs them of the config's secrets.
func (w *Worker) clientErrors(name string, resolved map[string]string) []keyError {
	if errs := w.overrideErrors(resolved); len(errs) > 0 {
		return errs // the settings a task would not see are not worth checking further
	}
	var out []keyError
	s, err := w.sinks.OpenSink(w.sinkConfig(name, resolved), slog.New(slog.DiscardHandler))
	if err == nil {
		// OpenSink contacted nothing, so there is nothing to wait for; bounded all the same.
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_ = s.Close(ctx)
		cancel()
	} else {
		out = append(out, keyErrorsOf(err, map[string]string{"producer.": producerOverridePrefix, "admin.": adminOverridePrefix}, "connector.class")...)
	}
	for _, k := range slices.Sorted(maps.Keys(withPrefix(resolved, adminOverridePrefix))) {
		if !sourceprops.IsKafkaSecurityKey(k) {
			out = append(out, keyError{adminOverridePrefix + k, config.AdminSettingRefusal(adminOverridePrefix + k)})
		}
	}
	if checker, ok := w.logs.(logSpecChecker); ok {
		current := w.currentNames(resolved)
		spec := historySpec(current, source.LogSpec{Name: current[historyTopicKey]})
		if spec.ProducerSettings != nil || spec.ConsumerSettings != nil {
			if err := checker.CheckLogSpec(spec); err != nil {
				out = append(out, keyErrorsOf(err, map[string]string{"producer.": historyProducerPrefix, "consumer.": historyConsumerPrefix}, historyTopicKey)...)
			}
		}
	}
	out = append(out, w.offsetsTopicErrors(name, resolved)...)
	return append(out, w.signalErrors(resolved)...)
}

// clientRefusals is clientErrors of connector name as a check of a config (see secrets.refusals).
func (w *Worker) clientRefusals(name string) func(resolved map[string]string) []keyError {
	return func(resolved map[string]string) []keyError { return w.clientErrors(name, resolved) }
}

// signalSpecChecker is a Kafka signal opener that can check a consumer's settings without contacting
// anything.
type signalSpecChecker interface {
	CheckSignals(spec signal.KafkaSpec) error
}

// signalErrors checks the security settings of the connector's Kafka signal consumer (signal.consumer.*)
// when it enables the kafka signal channel. The opener's refusals name the connector's keys.
func (w *Worker) signalErrors(resolved map[string]string) []keyError {
	checker, ok := w.signals.(signalSpecChecker)
	if !ok {
		return nil
	}
	spec, on := signal.KafkaSpecOf(resolved)
	if !on {
		return nil
	}
	if err := checker.CheckSignals(spec); err != nil {
		return keyErrorsOf(err, nil, "signal.enabled.channels")
	}
	return nil
}

// keyErrorsOf splits err into the refusals of single keys (source.KeyError, as sink/kafka's
// SettingError is), each put on the connector key its client prefix maps to (producer.acks →
// producer.override.acks); the rest goes on fallback.
func keyErrorsOf(err error, prefixes map[string]string, fallback string) []keyError {
	var out []keyError
	var walk func(error)
	walk = func(e error) {
		var ke source.KeyError
		if k, ok := e.(source.KeyError); ok {
			ke = k
		}
		switch {
		case ke != nil:
			key, msg := ke.ConfigKey(), e.Error()
			for from, to := range prefixes {
				if rest, ok := strings.CutPrefix(key, from); ok {
					// The message names the client's key; the connector's is the one to change.
					msg = to + rest + strings.TrimPrefix(msg, key)
					key = to + rest
					break
				}
			}
			out = append(out, keyError{key, msg})
		case unwrapMany(e) != nil:
			for _, inner := range unwrapMany(e) {
				walk(inner)
			}
		case errors.Unwrap(e) != nil:
			before := len(out)
			walk(errors.Unwrap(e))
			if len(out) == before {
				out = append(out, keyError{fallback, e.Error()})
			}
		default:
			out = append(out, keyError{fallback, e.Error()})
		}
	}
	walk(err)
	return out
}

func unwrapMany(err error) []error {
	if u, ok := err.(interface{ Unwrap() []error }); ok {
		return u.Unwrap()
	}
	return nil
}

// historySpec adds the connector's schema.history.internal.producer.* and .consumer.* settings to a log
// spec that carries none of its own.
func historySpec(props map[string]string, spec source.LogSpec) source.LogSpec {
	if spec.ProducerSettings == nil && spec.ConsumerSettings == nil {
		spec.ProducerSettings = withPrefix(props, historyProducerPrefix)
		spec.ConsumerSettings = withPrefix(props, historyConsumerPrefix)
	}
	return spec
}

// connectorLogs is the log opener a task's reader gets: the runtime's, with the connector's history
// client settings added to every spec the reader left without client settings, so that the opener
// honours or refuses them (the readers do not pass them on yet).
type connectorLogs struct {
	source.LogOpener
	props map[string]string
}

func (l connectorLogs) OpenLog(ctx context.Context, spec source.LogSpec) (source.DurableLog, error) {
	return l.LogOpener.OpenLog(ctx, historySpec(l.props, spec))
}

// adminSettings are the security settings of a task's admin client, as Worker.adminConfigs merges
// them: the worker's top-level ones, then its admin.*, then the connector's admin.override.*.
func (w *Worker) adminSettings(props map[string]string) map[string]string {
	out := maps.Clone(w.cfg.Client)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, sourceprops.KafkaSecuritySettings(w.cfg.Admin))
	maps.Copy(out, sourceprops.KafkaSecuritySettings(withPrefix(props, adminOverridePrefix)))
	return out
}
