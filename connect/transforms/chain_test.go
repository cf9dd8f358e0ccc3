package transforms

import (
	"errors"
	"strings"
	"testing"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/source"
)

const (
	filterClass   = "org.apache.kafka.connect.transforms.Filter"
	routerClass   = "org.apache.kafka.connect.transforms.RegexRouter"
	topicMatches  = "org.apache.kafka.connect.transforms.predicates.TopicNameMatches"
	hasHeader     = "org.apache.kafka.connect.transforms.predicates.HasHeaderKey"
	isTombstone   = "org.apache.kafka.connect.transforms.predicates.RecordIsTombstone"
	unwrapClass   = "io.debezium.transforms.ExtractNewRecordState"
	customersName = "srv.public.customers"
)

func TestEmptyChainKeepsEverything(t *testing.T) {
	ev := change(schema.OpCreate, nil, row(1, "a", nil))
	out, keep := run(t, mustChain(t, map[string]string{"transforms": " "}), ev)
	if !keep || out.ValueSchema != envelopeSchema {
		t.Errorf("an empty chain changed the record")
	}
}

func TestFilterWithPredicates(t *testing.T) {
	withHeader := heartbeat()
	withHeader.Headers = []source.Header{{Key: "skip", Value: "1"}}
	cases := []struct {
		name      string
		predicate map[string]string
		negate    string
		in        source.Event
		kept      bool
	}{
		{"topic matches the whole name", map[string]string{"type": topicMatches, "pattern": `__debezium-heartbeat\..*`}, "", heartbeat(), false},
		{"topic pattern must match the whole name", map[string]string{"type": topicMatches, "pattern": "debezium"}, "", heartbeat(), true},
		{"negated topic match", map[string]string{"type": topicMatches, "pattern": `__debezium-heartbeat\..*`}, "true", heartbeat(), true},
		{"negated topic miss", map[string]string{"type": topicMatches, "pattern": `srv\..*`}, "TRUE", heartbeat(), false},
		{"negate=false", map[string]string{"type": topicMatches, "pattern": `srv\..*`}, "false", heartbeat(), true},
		{"header present", map[string]string{"type": hasHeader, "name": "skip"}, "", withHeader, false},
		{"header absent", map[string]string{"type": hasHeader, "name": "skip"}, "", heartbeat(), true},
		{"tombstone", map[string]string{"type": isTombstone}, "", tombstone(), false},
		{"not a tombstone", map[string]string{"type": isTombstone}, "", heartbeat(), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			props := map[string]string{"transforms": "f", "transforms.f.type": filterClass,
				"transforms.f.predicate": "p", "predicates": "p"}
			if tc.negate != "" {
				props["transforms.f.negate"] = tc.negate
			}
			for k, v := range tc.predicate {
				props["predicates.p."+k] = v
			}
			if _, keep := run(t, mustChain(t, props), tc.in); keep != tc.kept {
				t.Errorf("kept = %v, want %v", keep, tc.kept)
			}
		})
	}
}

func TestFilterWithoutPredicateDropsEverything(t *testing.T) {
	c := mustChain(t, map[string]string{"transforms": "f", "transforms.f.type": filterClass})
	if _, keep := run(t, c, heartbeat()); keep {
		t.Error("kept a record")
	}
}

func TestRegexRouter(t *testing.T) {
	cases := []struct{ regex, replacement, topic, want string }{
		{`srv\.public\.(.*)`, "cdc.$1", customersName, "cdc.customers"},
		{`srv\.(?<schema>[^.]+)\.(.*)`, "${schema}_$2", customersName, "public_customers"},
		{`(s)rv.*`, `$10\$`, customersName, `s0$`}, // $10 is $1 then "0": there is no group 10
		{`srv\.public`, "x", customersName, customersName},
		{`.*customers`, "all", customersName, "all"},
		{`(x)?srv.*`, "[$1]", customersName, "[]"},
		// Matcher.replaceFirst after matches(): the first match found, shorter than the topic, is replaced.
		{`srv\.public\.c|srv\.public\.customers`, "x", customersName, "xustomers"},
	}
	for _, tc := range cases {
		c := mustChain(t, map[string]string{"transforms": "r", "transforms.r.type": routerClass,
			"transforms.r.regex": tc.regex, "transforms.r.replacement": tc.replacement})
		out, keep := run(t, c, change(schema.OpCreate, nil, row(1, "a", nil)))
		if !keep || out.Topic != tc.want {
			t.Errorf("%s → %s on %s = %q, want %q", tc.regex, tc.replacement, tc.topic, out.Topic, tc.want)
		}
	}
}

// Transforms run in list order, each seeing the previous one's output, and a predicate sees it too.
func TestChainOrderAndPredicateOnTransformedRecord(t *testing.T) {
	props := map[string]string{
		"transforms":                      "unwrap,route,dropRouted",
		"transforms.unwrap.type":          unwrapClass,
		"transforms.unwrap.add.fields":    "op",
		"transforms.route.type":           routerClass,
		"transforms.route.regex":          `srv\.public\.(.*)`,
		"transforms.route.replacement":    "flat.$1",
		"transforms.dropRouted.type":      filterClass,
		"transforms.dropRouted.predicate": "isFlat",
		"transforms.dropRouted.negate":    "true",
		"predicates":                      "isFlat",
		"predicates.isFlat.type":          topicMatches,
		"predicates.isFlat.pattern":       `flat\..*`,
	}
	c := mustChain(t, props)
	out, keep := run(t, c, change(schema.OpCreate, nil, row(1, "a", nil)))
	if !keep || out.Topic != "flat.customers" || out.ValueSchema.Name != rowSchema.Name {
		t.Errorf("got kept=%v topic %q schema %q", keep, out.Topic, out.ValueSchema.Name)
	}
	if _, keep := run(t, c, heartbeat()); keep {
		t.Errorf("the heartbeat, not routed, should have been filtered")
	}
}

func TestConfigErrors(t *testing.T) {
	base := func(kv ...string) map[string]string {
		p := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			p[kv[i]] = kv[i+1]
		}
		return p
	}
	cases := []struct {
		name  string
		props map[string]string
		key   string
		want  string
	}{
		{"missing type", base("transforms", "a"), "transforms.a.type", "missing required"},
		{"unknown type", base("transforms", "a", "transforms.a.type", "com.example.Nope"), "transforms.a.type",
			"not a class cdcd implements; supported: io.debezium.transforms.ByLogicalTableRouter, io.debezium.transforms.ExtractNewRecordState, io.debezium.transforms.outbox.EventRouter, org.apache.kafka.connect.transforms.Cast$Key"},
		{"duplicate alias", base("transforms", "a, a", "transforms.a.type", filterClass), "transforms", `duplicate alias "a"`},
		{"unknown predicate type", base("predicates", "p", "predicates.p.type", "x.Y"), "predicates.p.type", "TopicNameMatches"},
		{"undefined predicate", base("transforms", "a", "transforms.a.type", filterClass, "transforms.a.predicate", "q",
			"predicates", "p", "predicates.p.type", isTombstone), "transforms.a.predicate", "predicates defines p"},
		{"negate without predicate", base("transforms", "a", "transforms.a.type", filterClass, "transforms.a.negate", "true"),
			"transforms.a.negate", "no transforms.a.predicate"},
		{"bad negate", base("transforms", "a", "transforms.a.type", filterClass, "transforms.a.negate", "yes",
			"transforms.a.predicate", "p", "predicates", "p", "predicates.p.type", isTombstone), "transforms.a.negate", "true or false"},
		{"pattern missing", base("predicates", "p", "predicates.p.type", topicMatches), "predicates.p.pattern", "missing required"},
		{"pattern invalid", base("predicates", "p", "predicates.p.type", topicMatches, "predicates.p.pattern", "a(?=b)"),
			"predicates.p.pattern", "regular expression"},
		// Issue 17: "a)|(b" is valid once anchored ("^(?:a)|(b)$"), and MustCompile of it as written panicked.
		{"pattern unbalanced", base("predicates", "p", "predicates.p.type", topicMatches, "predicates.p.pattern", "a)|(b"),
			"predicates.p.pattern", "unexpected )"},
		{"router regex unbalanced", base("transforms", "r", "transforms.r.type", routerClass, "transforms.r.regex", "a)|(b",
			"transforms.r.replacement", "x"), "transforms.r.regex", "unexpected )"},
		{"header name empty", base("predicates", "p", "predicates.p.type", hasHeader, "predicates.p.name", " "),
			"predicates.p.name", "must not be empty"},
		{"router replacement missing", base("transforms", "r", "transforms.r.type", routerClass, "transforms.r.regex", "x"),
			"transforms.r.replacement", "missing required"},
		{"router bad group", base("transforms", "r", "transforms.r.type", routerClass, "transforms.r.regex", "(x)",
			"transforms.r.replacement", "$2"), "transforms.r.replacement", "no group 2"},
		{"logical router regex missing", routerProps("topic.regex", " "), "transforms.route.topic.regex", "must not be empty"},
		{"logical router replacement missing", map[string]string{"transforms": "route", "transforms.route.type": logicalRouterClass,
			"transforms.route.topic.regex": "x"}, "transforms.route.topic.replacement", "missing required"},
		{"logical router key regex without replacement", routerProps("key.field.regex", "(.*)", "key.field.replacement", " "),
			"transforms.route.key.field.replacement", "must be non-empty if key.field.regex is set"},
		{"logical router bad key group", routerProps("key.field.regex", "(.*)", "key.field.replacement", "$3"),
			"transforms.route.key.field.replacement", "no group 3"},
		{"logical router bad adjustment mode", routerProps("schema.name.adjustment.mode", "strict"),
			"transforms.route.schema.name.adjustment.mode", "supported values are none, avro, avro_unicode"},
		{"logical router bad cache size", routerProps("logical.table.cache.size", "many"),
			"transforms.route.logical.table.cache.size", "integer"},
		{"logical router bad uniqueness", routerProps("key.enforce.uniqueness", "no"),
			"transforms.route.key.enforce.uniqueness", "true or false"},
		{"unwrap bad mode", unwrapProps("delete.tombstone.handling.mode", "none"),
			"transforms.unwrap.delete.tombstone.handling.mode", "supported values are drop, tombstone, rewrite"},
		{"unwrap bad boolean", unwrapProps("replace.null.with.default", "1"),
			"transforms.unwrap.replace.null.with.default", "true or false"},
		{"unwrap bad field reference", unwrapProps("add.fields", "a:b:c"), "transforms.unwrap.add.fields", "unexpected field name"},
		{"unwrap unsupported setting", unwrapProps("drop.fields.header.name", "h"),
			"transforms.unwrap.drop.fields.header.name", "not supported by cdcd"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := Validate(tc.props)
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("Validate = %v, want a *ConfigError", err)
			}
			if ce.Key != tc.key || !strings.Contains(err.Error(), tc.want) || !ce.Fatal() {
				t.Errorf("error = %q (key %q), want key %q and %q", err, ce.Key, tc.key, tc.want)
			}
		})
	}
}

func TestValidateAcceptsAGoodConfig(t *testing.T) {
	props := unwrapProps("delete.tombstone.handling.mode", "rewrite", "add.fields", "op,table",
		"drop.tombstones", "false") // removed in Debezium 3 and ignored there: a warning, not an error
	props["predicates"] = ""
	if err := Validate(props); err != nil {
		t.Errorf("Validate = %v", err)
	}
}
