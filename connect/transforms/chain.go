// Package transforms runs a connector's Kafka Connect "transforms" chain on cdcd's events: the single
// message transforms and predicates people configure on Debezium connectors, read from the same properties
// and producing the same records, so a connector config runs unchanged.
//
// The chain applies to every record a connector emits (data changes, tombstones, heartbeats, messages),
// before the worker's converters, in the order of the transforms list. A transform may drop a record.
package transforms

import (
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"

	"github.com/cdcd/cdcd/source"
)

// Connector config keys of the chain (Connect's ConnectorConfig and TransformationStage).
const (
	transformsKey = "transforms"
	predicatesKey = "predicates"
	typeKey       = "type"
	predicateKey  = "predicate"
	negateKey     = "negate"
)

// transformation is one configured transform. It rewrites ev in place and reports whether the record is
// still to be produced.
type transformation interface {
	apply(ev *source.Event) (keep bool, err error)
}

// predicate decides whether a transform applies to a record.
type predicate interface {
	test(ev *source.Event) bool
}

// transformTypes are the transform classes cdcd runs, by the class name a config names them with.
var transformTypes = map[string]func(settings, *slog.Logger) (transformation, error){
	"io.debezium.transforms.ByLogicalTableRouter":                  newByLogicalTableRouter,
	"io.debezium.transforms.ExtractNewRecordState":                 newExtractNewRecordState,
	"io.debezium.transforms.outbox.EventRouter":                    newEventRouter,
	"org.apache.kafka.connect.transforms.Cast$Key":                 onKey(newCast),
	"org.apache.kafka.connect.transforms.Cast$Value":               onValue(newCast),
	"org.apache.kafka.connect.transforms.DropHeaders":              newDropHeaders,
	"org.apache.kafka.connect.transforms.ExtractField$Key":         newExtractFieldKey,
	"org.apache.kafka.connect.transforms.ExtractField$Value":       newExtractFieldValue,
	"org.apache.kafka.connect.transforms.Filter":                   newFilter,
	"org.apache.kafka.connect.transforms.Flatten$Key":              onKey(newFlatten),
	"org.apache.kafka.connect.transforms.Flatten$Value":            onValue(newFlatten),
	"org.apache.kafka.connect.transforms.HeaderFrom$Key":           onKey(newHeaderFrom),
	"org.apache.kafka.connect.transforms.HeaderFrom$Value":         onValue(newHeaderFrom),
	"org.apache.kafka.connect.transforms.HoistField$Key":           onKey(newHoistField),
	"org.apache.kafka.connect.transforms.HoistField$Value":         onValue(newHoistField),
	"org.apache.kafka.connect.transforms.InsertField$Key":          onKey(newInsertField),
	"org.apache.kafka.connect.transforms.InsertField$Value":        onValue(newInsertField),
	"org.apache.kafka.connect.transforms.InsertHeader":             newInsertHeader,
	"org.apache.kafka.connect.transforms.MaskField$Key":            onKey(newMaskField),
	"org.apache.kafka.connect.transforms.MaskField$Value":          onValue(newMaskField),
	"org.apache.kafka.connect.transforms.RegexRouter":              newRegexRouter,
	"org.apache.kafka.connect.transforms.ReplaceField$Key":         onKey(newReplaceField),
	"org.apache.kafka.connect.transforms.ReplaceField$Value":       onValue(newReplaceField),
	"org.apache.kafka.connect.transforms.SetSchemaMetadata$Key":    onKey(newSetSchemaMetadata),
	"org.apache.kafka.connect.transforms.SetSchemaMetadata$Value":  onValue(newSetSchemaMetadata),
	"org.apache.kafka.connect.transforms.TimestampConverter$Key":   onKey(newTimestampConverter),
	"org.apache.kafka.connect.transforms.TimestampConverter$Value": onValue(newTimestampConverter),
	"org.apache.kafka.connect.transforms.TimestampRouter":          newTimestampRouter,
	"org.apache.kafka.connect.transforms.ValueToKey":               newValueToKey,
}

// renamedTransformTypes are transform classes Debezium renamed, by their old name: a config naming one
// gets today's class, with a warning saying what to write.
var renamedTransformTypes = map[string]string{
	"io.debezium.transforms.UnwrapFromEnvelope": "io.debezium.transforms.ExtractNewRecordState", // Debezium 0.x/1.x
}

// predicateTypes are the predicate classes cdcd runs.
var predicateTypes = map[string]func(settings) (predicate, error){
	"org.apache.kafka.connect.transforms.predicates.TopicNameMatches":  newTopicNameMatches,
	"org.apache.kafka.connect.transforms.predicates.HasHeaderKey":      newHasHeaderKey,
	"org.apache.kafka.connect.transforms.predicates.RecordIsTombstone": newRecordIsTombstone,
}

// Chain is a connector's configured transforms, in order. The zero Chain keeps every record unchanged.
type Chain struct {
	stages []stage
}

type stage struct {
	alias     string
	class     string
	transform transformation
	predicate predicate // nil: applies to every record
	negate    bool
}

// Validate checks a connector config's transforms and predicates without building anything a caller keeps:
// the check a connector's config gets before it starts.
func Validate(props map[string]string) error {
	_, err := New(props, slog.New(slog.DiscardHandler))
	return err
}

// New builds the chain a connector config describes. A config without transforms yields an empty chain.
// Errors are *ConfigError.
func New(props map[string]string, log *slog.Logger) (*Chain, error) {
	predicates, err := buildPredicates(props)
	if err != nil {
		return nil, err
	}
	aliases, err := aliasList(props, transformsKey)
	if err != nil {
		return nil, err
	}
	chain := &Chain{}
	for _, alias := range aliases {
		s := settings{prefix: transformsKey + "." + alias + ".", props: props}
		build, err := lookupType(s, transformTypes)
		if err != nil {
			return nil, err
		}
		st := stage{alias: alias, class: s.str(typeKey, "")}
		if current, ok := renamedTransformTypes[st.class]; ok {
			log.Warn(st.class+" is the Debezium 1.x name of "+current+": write "+s.key(typeKey)+"="+current+" instead", "transform", alias)
			st.class = current
		}
		if st.transform, err = build(s, log.With("transform", alias)); err != nil {
			return nil, err
		}
		if st.predicate, st.negate, err = stagePredicate(s, predicates); err != nil {
			return nil, err
		}
		chain.stages = append(chain.stages, st)
	}
	return chain, nil
}

// Transform applies the chain to ev in place. It returns false when a transform dropped the record, which
// is then not produced; later transforms do not see it. A transform's failure is a *TransformError; ev may
// then be partly transformed.
func (c *Chain) Transform(ev *source.Event) (bool, error) {
	for _, st := range c.stages {
		if st.predicate != nil && st.negate == st.predicate.test(ev) {
			continue
		}
		keep, err := st.transform.apply(ev)
		if err != nil {
			return false, &TransformError{Alias: st.alias, Class: st.class, Err: err}
		}
		if !keep {
			return false, nil
		}
	}
	return true, nil
}

// stagePredicate reads a transform's predicate and negate settings. As in Connect, negate without a
// predicate is an error, and so is a predicate alias that "predicates" does not define.
func stagePredicate(s settings, predicates map[string]predicate) (predicate, bool, error) {
	negate, err := s.boolean(negateKey, false)
	if err != nil {
		return nil, false, err
	}
	alias, ok := s.lookup(predicateKey)
	if !ok || alias == "" {
		if _, set := s.lookup(negateKey); set {
			return nil, false, &ConfigError{Key: s.key(negateKey), Value: s.str(negateKey, ""),
				Problem: fmt.Sprintf("there is no %s defining a predicate to be negated", s.key(predicateKey))}
		}
		return nil, false, nil
	}
	p, ok := predicates[alias]
	if !ok {
		return nil, false, &ConfigError{Key: s.key(predicateKey), Value: alias,
			Problem: fmt.Sprintf("no such predicate; %s defines %s", predicatesKey, quoteList(slices.Sorted(maps.Keys(predicates))))}
	}
	return p, negate, nil
}

func buildPredicates(props map[string]string) (map[string]predicate, error) {
	aliases, err := aliasList(props, predicatesKey)
	if err != nil {
		return nil, err
	}
	predicates := make(map[string]predicate, len(aliases))
	for _, alias := range aliases {
		s := settings{prefix: predicatesKey + "." + alias + ".", props: props}
		build, err := lookupType(s, predicateTypes)
		if err != nil {
			return nil, err
		}
		if predicates[alias], err = build(s); err != nil {
			return nil, err
		}
	}
	return predicates, nil
}

// aliasList reads "transforms" or "predicates", rejecting duplicate aliases as Connect does.
func aliasList(props map[string]string, key string) ([]string, error) {
	aliases := splitList(props[key])
	for i, a := range aliases {
		if slices.Contains(aliases[:i], a) {
			return nil, &ConfigError{Key: key, Value: props[key], Problem: fmt.Sprintf("duplicate alias %q", a)}
		}
	}
	return aliases, nil
}

// lookupType returns the constructor for the class named by s's "type" setting.
func lookupType[T any](s settings, types map[string]T) (T, error) {
	var zero T
	class, err := s.required(typeKey)
	if err != nil {
		return zero, err
	}
	if current, ok := renamedTransformTypes[class]; ok {
		class = current
	}
	build, ok := types[class]
	if !ok {
		return zero, &ConfigError{Key: s.key(typeKey), Value: class,
			Problem: "not a class cdcd implements; supported: " + quoteList(slices.Sorted(maps.Keys(types)))}
	}
	return build, nil
}

func quoteList(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
