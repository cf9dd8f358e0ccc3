package kafka

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/cdcd/cdcd/sink"
	kafkago "github.com/segmentio/kafka-go"
)

// TopicCreation is Kafka Connect's topic creation for source connectors (KIP-158): with it enabled,
// a topic is created before its first record with the settings of the first group that matches
// it; without it, topics are left to the broker's auto.create.topics.enable. Build it with
// ParseTopicCreation; the zero value means disabled.
type TopicCreation struct {
	// Groups are the groups of topic.creation.groups in their listed order, then the default
	// group (which matches every topic). Empty when topic creation is disabled.
	Groups []TopicCreationGroup
}

// TopicCreationGroup is one topic.creation.<name>.* group.
type TopicCreationGroup struct {
	Name string
	// Include and Exclude match whole topic names (Java Matcher.matches). Exclude wins. Nil for the
	// default group, which matches every topic.
	Include, Exclude *regexp.Regexp
	// Partitions and ReplicationFactor of a new topic; -1 leaves them to the broker's defaults.
	Partitions        int
	ReplicationFactor int
	// Configs are the group's other settings (cleanup.policy, compression.type, …), passed to
	// CreateTopics as topic configs.
	Configs map[string]string
}

// Enabled reports whether topics are created before their first record.
func (tc TopicCreation) Enabled() bool { return len(tc.Groups) > 0 }

func (g TopicCreationGroup) matches(topic string) bool {
	if g.Include == nil {
		return true
	}
	return g.Include.MatchString(topic) && (g.Exclude == nil || !g.Exclude.MatchString(topic))
}

// groupFor returns the first group matching topic (Connect's TopicCreation.findFirstGroup).
func (tc TopicCreation) groupFor(topic string) TopicCreationGroup {
	for _, g := range tc.Groups {
		if g.matches(topic) {
			return g
		}
	}
	return tc.Groups[len(tc.Groups)-1] // the default group; Groups is never empty here
}

const topicCreationPrefix = "topic.creation."

// ParseTopicCreation reads Connect's topic creation settings the way Kafka 4.x does
// (SourceConnectorConfig, TopicCreationConfig, TopicCreationGroup): worker holds the worker's
// settings (only topic.creation.enable, default true, is read) and connector the connector's.
// Topic creation is on when the worker allows it and the connector has any topic.creation.* key;
// the default group then needs replication.factor and partitions (each -1 or positive), which
// other groups inherit. The default group's include/exclude are ignored, as in Connect.
func ParseTopicCreation(worker, connector map[string]string) (TopicCreation, error) {
	if v, ok := worker["topic.creation.enable"]; ok && !strings.EqualFold(strings.TrimSpace(v), "true") {
		if !strings.EqualFold(strings.TrimSpace(v), "false") {
			return TopicCreation{}, fmt.Errorf("topic.creation.enable=%q: must be true or false", v)
		}
		return TopicCreation{}, nil
	}
	uses := false
	for k := range connector {
		if strings.HasPrefix(k, topicCreationPrefix) {
			uses = true
			break
		}
	}
	if !uses {
		return TopicCreation{}, nil
	}

	def, err := parseTopicCreationGroup(connector, "default", nil)
	if err != nil {
		return TopicCreation{}, err
	}
	var tc TopicCreation
	seen := map[string]bool{"default": true} // Connect drops "default" from the list (with a warning)
	for _, name := range splitList(connector[topicCreationPrefix+"groups"]) {
		if seen[name] {
			continue
		}
		seen[name] = true
		g, err := parseTopicCreationGroup(connector, name, &def)
		if err != nil {
			return TopicCreation{}, err
		}
		tc.Groups = append(tc.Groups, g)
	}
	tc.Groups = append(tc.Groups, def)
	return tc, nil
}

// parseTopicCreationGroup reads topic.creation.<name>.*; inherit is the default group for other
// groups (their partitions and replication factor default to its values) and nil for the default.
func parseTopicCreationGroup(props map[string]string, name string, inherit *TopicCreationGroup) (TopicCreationGroup, error) {
	prefix := topicCreationPrefix + name + "."
	g := TopicCreationGroup{Name: name, Configs: map[string]string{}}
	number := func(key string, fallback *int) (int, error) {
		v, ok := props[prefix+key]
		if !ok {
			if fallback == nil {
				return 0, fmt.Errorf("topic creation: %s%s is required when topic creation is used", prefix, key)
			}
			return *fallback, nil
		}
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || (n != -1 && n < 1) {
			return 0, fmt.Errorf("topic creation: %s%s=%q: must be -1 or at least 1", prefix, key, v)
		}
		return n, nil
	}
	var err error
	var inheritPartitions, inheritReplication *int
	if inherit != nil {
		inheritPartitions, inheritReplication = &inherit.Partitions, &inherit.ReplicationFactor
		if g.Include, err = anchoredPattern(props, prefix+"include"); err != nil {
			return g, err
		}
		if g.Exclude, err = anchoredPattern(props, prefix+"exclude"); err != nil {
			return g, err
		}
	}
	if g.Partitions, err = number("partitions", inheritPartitions); err != nil {
		return g, err
	}
	if g.ReplicationFactor, err = number("replication.factor", inheritReplication); err != nil {
		return g, err
	}
	for k, v := range props {
		setting, ok := strings.CutPrefix(k, prefix)
		if !ok {
			continue
		}
		switch setting {
		case "include", "exclude", "partitions", "replication.factor":
		default:
			g.Configs[setting] = v
		}
	}
	return g, nil
}

// anchoredPattern compiles a LIST of regexes the way Connect does (joined with "|") and anchors it,
// since Java's Matcher.matches() must match the whole topic name. An absent or empty list yields a
// pattern matching only the empty name, i.e. nothing: like Connect, a group without include
// matches no topic. Go's RE2 lacks a few Java constructs (look-around, back-references): such a
// pattern is an error rather than a silently different match.
func anchoredPattern(props map[string]string, key string) (*regexp.Regexp, error) {
	re, err := regexp.Compile("^(?:" + strings.Join(splitList(props[key]), "|") + ")$")
	if err != nil {
		return nil, fmt.Errorf("topic creation: %s=%q: %w", key, props[key], err)
	}
	return re, nil
}

// topicCreator creates topics before their first record, once per topic per writer, like
// WorkerSourceTask.maybeCreateTopic with its TopicCreation topic cache.
type topicCreator struct {
	creation TopicCreation
	client   *kafkago.Client
	brokers  []string
	log      *slog.Logger

	mu    sync.Mutex
	known map[string]bool // topics found or created; only ever grows
}

// ensure makes sure every topic of recs exists, creating missing ones. It blocks on the cluster
// and returns early with ctx's error. Safe for concurrent use: two Sends racing for a new topic
// both end up seeing it exist.
func (c *topicCreator) ensure(ctx context.Context, recs []sink.Record) error {
	var missing []string
	c.mu.Lock()
	for _, r := range recs {
		if !c.known[r.Topic] && !slices.Contains(missing, r.Topic) {
			missing = append(missing, r.Topic)
		}
	}
	c.mu.Unlock()
	for _, topic := range missing {
		if err := c.create(ctx, topic); err != nil {
			return err
		}
		c.mu.Lock()
		c.known[topic] = true
		c.mu.Unlock()
	}
	return nil
}

func (c *topicCreator) create(ctx context.Context, topic string) error {
	// Like Connect, look first: creating an existing topic may need rights we lack.
	meta, err := c.client.Metadata(ctx, &kafkago.MetadataRequest{Topics: []string{topic}})
	if err != nil {
		return unreachableError(c.brokers, err)
	}
	for _, t := range meta.Topics {
		if t.Name == topic && t.Error == nil {
			return nil
		}
	}

	group := c.creation.groupFor(topic)
	configs := make([]kafkago.ConfigEntry, 0, len(group.Configs))
	for k, v := range group.Configs {
		configs = append(configs, kafkago.ConfigEntry{ConfigName: k, ConfigValue: v})
	}
	sort.Slice(configs, func(i, j int) bool { return configs[i].ConfigName < configs[j].ConfigName })
	resp, err := c.client.CreateTopics(ctx, &kafkago.CreateTopicsRequest{Topics: []kafkago.TopicConfig{{
		Topic:             topic,
		NumPartitions:     group.Partitions,
		ReplicationFactor: group.ReplicationFactor,
		ConfigEntries:     configs,
	}}})
	if err != nil {
		return unreachableError(c.brokers, err)
	}
	switch err := resp.Errors[topic]; {
	case err == nil:
		c.log.Info("created topic", "topic", topic, "group", group.Name,
			"partitions", group.Partitions, "replication_factor", group.ReplicationFactor)
		return nil
	case errors.Is(err, kafkago.TopicAlreadyExists):
		return nil
	default:
		return fmt.Errorf("creating topic %q with topic creation group %q (partitions %d, replication factor %d): %w; "+
			"check that this client may create topics, or create the topic yourself",
			topic, group.Name, group.Partitions, group.ReplicationFactor, err)
	}
}
