package avro

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"testing"

	"github.com/cdcd/cdcd/schema"
)

func TestCheckCompatibilityOfASubjectWithoutVersions(t *testing.T) {
	reg, counter := newRegistry(t)
	c := newConverter(t, false, map[string]string{"schema.registry.url": reg.URL()})
	got, err := c.CheckCompatibility(context.Background(), "t", &schema.Schema{Type: schema.String})
	if err != nil {
		t.Fatal(err)
	}
	if got.Subject != "t-value" || !got.Compatible {
		t.Errorf("got %+v, want t-value compatible", got)
	}
	if n := counter.count("POST /compatibility/subjects/t-value/versions/latest"); n != 1 {
		t.Errorf("%d compatibility requests, want 1 (paths %v)", n, counter.paths)
	}
	if n := counter.count("POST /subjects/t-value/versions"); n != 0 {
		t.Error("a check registered the schema")
	}
}

func TestCheckCompatibilityReportsTheRegistryVerdict(t *testing.T) {
	reg, _ := newRegistry(t)
	reg.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path != "/compatibility/subjects/k-key/versions/latest" || r.URL.Query().Get("verbose") != "true" {
			return false
		}
		w.Header().Set("Content-Type", "application/vnd.schemaregistry.v1+json")
		fmt.Fprint(w, `{"is_compatible":false,"messages":["type changed"]}`)
		return true
	})
	c := newConverter(t, true, map[string]string{"schema.registry.url": reg.URL()})
	got, err := c.CheckCompatibility(context.Background(), "k", &schema.Schema{Type: schema.Int32})
	if err != nil {
		t.Fatal(err)
	}
	want := Compatibility{Subject: "k-key", Compatible: false, Messages: []string{"type changed"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}
