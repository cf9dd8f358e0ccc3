package connect

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"

	"github.com/cdcd/cdcd/connect/config"
	"github.com/cdcd/cdcd/connect/offsets"
	"github.com/cdcd/cdcd/source"
	sourceprops "github.com/cdcd/cdcd/source/props"
)

// offsetsTopicKey is the connector key naming a connector's own offsets topic (KIP-618).
const offsetsTopicKey = "offsets.storage.topic"

// connectorOffsets is the offset store of one connector with its own offsets topic: Connect's
// ConnectorOffsetBackingStore built withConnectorAndWorkerStores. The connector's topic is the primary
// store, the worker's offset.storage.topic the secondary one.
//
// Reads are Connect's, literally: ConnectorOffsetBackingStore.get lays the connector store's answer over
// the worker store's, and KafkaOffsetBackingStore.get answers every key asked for, with null for a key
// it does not hold. So a key missing from the connector's topic reads as missing, whatever the worker's
// topic holds: Connect 4.4 does not fall back to the worker's offsets (its Javadoc says it does; its
// code does not), and neither does cdcd. A connector given its own topic after it ran starts without an
// offset; attempt logs that when the worker's topic has one.
//
// Writes are ConnectorOffsetBackingStore.set's (KAFKA-15018): tombstones go to the worker's topic first
// (a failure fails the write, the connector's topic is not written), then every entry to the
// connector's topic (a failure fails the write), then the entries that are not tombstones to the
// worker's topic, whose failure is only logged.
//
// Durability contract: Put returns once the primary write is acknowledged (acks=all), and the
// secondary write after it has been tried. Safe for concurrent use as its stores are.
type connectorOffsets struct {
	primary   offsetStore // the connector's offsets topic
	secondary offsetStore // the worker's offsets topic
	log       *slog.Logger
}

var _ offsetStore = (*connectorOffsets)(nil)

// Get is the primary store's value: see the reads above.
func (c *connectorOffsets) Get(key []byte) ([]byte, bool) { return c.primary.Get(key) }

// Entries lists the keys of both stores, sorted, with the primary store's values: a key only the worker's
// topic holds has a nil Value, as Connect lists such a partition with a null offset (connectorPartitions
// is the union of both stores' partitions, their offsets come from get).
func (c *connectorOffsets) Entries() []offsets.Entry {
	out := c.primary.Entries()
	for _, e := range c.secondary.Entries() {
		if _, ok := c.primary.Get(e.Key); !ok {
			out = append(out, offsets.Entry{Key: e.Key})
		}
	}
	slices.SortFunc(out, func(a, b offsets.Entry) int { return slices.Compare(a.Key, b.Key) })
	return out
}

// Put writes entries in Connect's order: see the writes above.
func (c *connectorOffsets) Put(ctx context.Context, entries []offsets.Entry) error {
	var tombstones []offsets.Entry
	for _, e := range entries {
		if e.Value == nil {
			tombstones = append(tombstones, e)
		}
	}
	if len(tombstones) > 0 {
		// Else a partition erased from the connector's topic alone would keep the worker's offset.
		if err := c.secondary.Put(ctx, tombstones); err != nil {
			return fmt.Errorf("erasing offsets in the worker's offsets topic before the connector's: %w", err)
		}
	}
	if err := c.primary.Put(ctx, entries); err != nil {
		return err
	}
	c.putSecondary(ctx, entries)
	return nil
}

// putSecondary writes the entries that are not tombstones to the worker's topic once the primary store
// holds them durably (after the transaction committed, under exactly-once). A failure is logged, not
// returned: the connector's topic is the one its tasks read.
func (c *connectorOffsets) putSecondary(ctx context.Context, entries []offsets.Entry) {
	regular := slices.DeleteFunc(slices.Clone(entries), func(e offsets.Entry) bool { return e.Value == nil })
	if len(regular) == 0 {
		return
	}
	if err := c.secondary.Put(ctx, regular); err != nil {
		c.log.Warn("failed to write offsets to the worker's offsets topic (the secondary store); the connector's own topic holds them", "error", err)
	}
}

// ReadToEnd reads both topics to their ends.
func (c *connectorOffsets) ReadToEnd(ctx context.Context) error {
	if err := c.secondary.ReadToEnd(ctx); err != nil {
		return err
	}
	return c.primary.ReadToEnd(ctx)
}

// offsetsFor is the offset store of a connector and the topic its offsets go to first, as Connect's
// Worker.offsetStoreForRegularSourceTask and offsetStoreForExactlyOnceSourceTask build it:
//   - without offsets.storage.topic, the worker's store and topic (under exactly-once too: then the
//     worker's topic is the connector's, written in the task's transactions);
//   - with the worker's own topic (sameOffsetTopicAsWorker: the producer's bootstrap servers are the
//     worker's, which validation requires), the worker's store alone;
//   - with another topic, that topic (created when missing) as primary over the worker's store.
//
// props are resolved. An error is fatal: the settings cannot be honoured, a restart does not fix them.
func (w *Worker) offsetsFor(ctx context.Context, name string, props map[string]string) (offsetStore, string, error) {
	topic, set := props[offsetsTopicKey]
	if !set {
		return w.offsets, w.cfg.OffsetStorageTopic, nil
	}
	if errs := w.offsetsTopicErrors(name, props); len(errs) > 0 {
		msgs := make([]string, len(errs))
		for i, e := range errs {
			msgs[i] = e.String()
		}
		return nil, "", source.Fatal(errors.New(strings.Join(msgs, "; ")))
	}
	if topic == w.cfg.OffsetStorageTopic {
		return w.offsets, topic, nil
	}
	own, err := w.ownOffsets(ctx, topic)
	if err != nil {
		return nil, "", fmt.Errorf("the offsets topic %s of connector %s: %w", topic, name, err)
	}
	return &connectorOffsets{primary: own, secondary: w.offsets, log: w.log.With("connector", name, "offsets_topic", topic)}, topic, nil
}

// offsetsTopicErrors refuses an offsets.storage.topic that cdcd cannot honour as Connect does, on that
// key: in standalone mode, where Connect ignores it, and in distributed mode when the connector's Kafka
// clients would reach the topic with other settings than the worker's own clients, which cdcd reads,
// creates and writes it with (Connect uses the connector's producer, consumer and admin client). props
// are resolved; the messages name keys, never values.
func (w *Worker) offsetsTopicErrors(name string, props map[string]string) []keyError {
	topic, set := props[offsetsTopicKey]
	if !set {
		return nil
	}
	refuse := func(format string, args ...any) []keyError {
		return []keyError{{key: offsetsTopicKey, msg: fmt.Sprintf(format, args...)}}
	}
	if w.cfg.Mode == config.Standalone {
		return refuse("a standalone worker keeps every connector's offsets in its offset.storage.file.filename, so a connector's " +
			"own offsets topic cannot apply (Kafka Connect ignores the setting in standalone mode); remove offsets.storage.topic, " +
			"or run the connector on a distributed worker")
	}
	if topic == "" {
		return nil // the key's validator refuses it
	}
	var out []keyError
	for _, k := range slices.Sorted(maps.Keys(withPrefix(props, "consumer.override."))) {
		out = append(out, keyError{key: "consumer.override." + k, msg: fmt.Sprintf("with offsets.storage.topic, Connect reads the "+
			"connector's offsets topic with a consumer that takes consumer.override.%s; cdcd reads it with the worker's own Kafka "+
			"client settings and cannot honour it: remove consumer.override.%s, or offsets.storage.topic", k, k)})
	}
	producer := w.sinkConfig(name, props).Settings
	if servers, ok := producer["bootstrap.servers"]; ok && !sameServers(splitServers(servers), w.cfg.BootstrapServers) {
		key := "producer.bootstrap.servers (worker)"
		if _, ok := props[producerOverridePrefix+"bootstrap.servers"]; ok {
			key = producerOverridePrefix + "bootstrap.servers"
		}
		out = append(out, refuse("the connector's producer reaches other brokers (%s) than the worker's bootstrap.servers, "+
			"and Connect would keep the offsets topic on that cluster; cdcd keeps a connector's offsets topic on the worker's "+
			"cluster only: remove offsets.storage.topic, or the %s override", key, key)...)
	}
	if v, ok := props[adminOverridePrefix+"bootstrap.servers"]; ok && !sameServers(splitServers(v), w.cfg.BootstrapServers) {
		out = append(out, refuse("admin.override.bootstrap.servers names other brokers than the worker's bootstrap.servers, and "+
			"Connect would create the offsets topic there; cdcd keeps a connector's offsets topic on the worker's cluster only: "+
			"remove offsets.storage.topic, or admin.override.bootstrap.servers")...)
	}
	worker := sourceprops.KafkaSecuritySettings(w.cfg.Client)
	for client, settings := range map[string]map[string]string{"producer": sourceprops.KafkaSecuritySettings(producer), "admin client": w.adminSettings(props)} {
		if differ := differentKeys(settings, worker); len(differ) > 0 {
			out = append(out, refuse("the connector's %s has other Kafka security settings (%s) than the worker's own clients, "+
				"which cdcd reads, creates and writes the offsets topic with (Connect would use the connector's clients): give "+
				"them the worker's settings, or remove offsets.storage.topic", client, strings.Join(differ, ", "))...)
		}
	}
	slices.SortFunc(out, func(a, b keyError) int { return strings.Compare(a.String(), b.String()) })
	return out
}

// differentKeys are the keys whose values differ between a and b (one of them lacking it included), sorted.
func differentKeys(a, b map[string]string) []string {
	var out []string
	for k, v := range a {
		if bv, ok := b[k]; !ok || bv != v {
			out = append(out, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// splitServers is a bootstrap.servers list value.
func splitServers(v string) []string {
	var out []string
	for s := range strings.SplitSeq(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// sameServers is sameOffsetTopicAsWorker's comparison of bootstrap servers: as sets.
func sameServers(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}
