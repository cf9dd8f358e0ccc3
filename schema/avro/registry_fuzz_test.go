package avro

import (
	"errors"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/sr"

	"github.com/cdcd/cdcd/schema"
)

// emptyUnionWithDefault is a schema a registry returned under use.latest.version=true that made hamba/avro
// panic (it indexes the first branch of the union to check the default).
const emptyUnionWithDefault = `{"type":"record","name":"A","fields":[{"name":"f","type":[],"default":null}]}`

// TestLatestVersionThatPanicsTheParser: with use.latest.version=true, a latest version hamba/avro panics on
// is an error naming the subject and the version, not a crash.
func TestLatestVersionThatPanicsTheParser(t *testing.T) {
	reg, _ := newRegistry(t)
	reg.SeedSchema("t-value", 3, 60, sr.Schema{Schema: emptyUnionWithDefault})
	c := newConverter(t, false, map[string]string{"schema.registry.url": reg.URL(), "auto.register.schemas": "false", "use.latest.version": "true"})
	_, err := c.Encode("t", &schema.Schema{Type: schema.Int32}, int32(1))
	if !errors.Is(err, ErrRegistry) {
		t.Fatalf("got %v, want a registry error", err)
	}
	for _, want := range []string{`latest version 3 of subject "t-value" (id 60)`, "not a valid Avro schema"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%v: want %q in it", err, want)
		}
	}
}

// FuzzRegistrySchema feeds schema text, as a registry may return it, through the parse and comparison
// use.latest.version does: it must never panic, and a text whose canonical form is cdcd's own is taken.
func FuzzRegistrySchema(f *testing.F) {
	own, err := SchemaText(customersEnvelope())
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{
		emptyUnionWithDefault,
		own,
		`"string"`,
		`["null","string"]`,
		`{"type":"record","name":"A","fields":[{"name":"f","type":["null","int"],"default":null}]}`,
		`{"type":"record","name":"A","fields":[{"name":"f","type":{"type":"array","items":[]},"default":[]}]}`,
		`{"type":"enum","name":"E","symbols":[],"default":"x"}`,
		`{"type":"fixed","name":"F","size":-1}`,
		`{"type":"bytes","logicalType":"decimal","precision":0,"scale":5}`,
		`{"type":"record","name":"R","fields":[{"name":"r","type":"R"}]}`,
		`{"type":"map","values":[],"default":{}}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		same, err := sameCanonicalForm(text, own)
		if same && err != nil {
			t.Fatalf("same and %v", err)
		}
		if text == own && !same {
			t.Fatalf("cdcd's own schema differs from itself: %v", err)
		}
	})
}
