package schema

import (
	"bufio"
	"encoding/base64"
	"errors"
	"os"
	"strings"
	"testing"
)

// TestNamesMatchDebezium replays topic sanitising and name adjustment outputs recorded from Debezium
// 3.6.1 itself (jsonconv/testdata/gen/DebeziumGolden.java).
func TestNamesMatchDebezium(t *testing.T) {
	f, err := os.Open("testdata/debezium_names.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	adjust := map[string]*replacement{
		"avro": &avroSchemaNames, "avro_unicode": &avroUnicodeSchemaNames,
		"field_avro": &avroFieldNames, "field_avro_unicode": &avroUnicodeFieldNames,
	}
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.Split(sc.Text(), "\t")
		in, err1 := base64.StdEncoding.DecodeString(parts[1])
		want, err2 := base64.StdEncoding.DecodeString(parts[2])
		if len(parts) != 3 || err1 != nil || err2 != nil {
			t.Fatalf("bad line %q", sc.Text())
		}
		var got string
		if parts[0] == "topic" {
			got = SanitizeTopicName(string(in))
		} else {
			got, _ = adjust[parts[0]].apply(string(in))
		}
		if got != string(want) {
			t.Errorf("%s(%q): got %q, want %q", parts[0], in, got, want)
		}
		n++
	}
	if n < 50 {
		t.Fatalf("only %d vectors", n)
	}
}

func TestTopicNaming(t *testing.T) {
	n := NewTopicNaming("pg1")
	custom := n
	custom.Delimiter, custom.HeartbeatPrefix, custom.Transaction = "_", "hb", "tx"
	named := n
	named.HeartbeatName = "shared-heartbeats"
	for _, tc := range []struct{ got, want string }{
		{n.SchemaTableTopic("public", "customers"), "pg1.public.customers"},
		{n.SchemaTableTopic(" ", "customers"), "pg1.customers"},
		{n.SchemaTableTopic("public", "a b"), "pg1.public.a_b"},
		{n.DatabaseTableTopic("shop", "orders"), "pg1.shop.orders"},
		{n.DatabaseTableTopic("", "orders"), "pg1.orders"},
		{custom.SchemaTableTopic("public", "t"), "pg1_public_t"},
		{n.HeartbeatTopic(), "__debezium-heartbeat.pg1"},
		{custom.HeartbeatTopic(), "hb_pg1"},
		{named.HeartbeatTopic(), "shared-heartbeats"},
		{n.TransactionTopic(), "pg1.transaction"},
		{custom.TransactionTopic(), "pg1_tx"},
		{custom.MessageTopic(), "pg1.message"},
		{n.SchemaChangeTopic(), "pg1"},
		{KeySchemaName("pg1.public.t"), "pg1.public.t.Key"},
		{ValueSchemaName("pg1.public.t"), "pg1.public.t.Value"},
		{EnvelopeSchemaName("pg1.public.t"), "pg1.public.t.Envelope"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

func TestNameAdjusterModes(t *testing.T) {
	for mode, want := range map[string]string{"none": "my-db.public.t", " AVRO ": "my_db.public.t", "avro_unicode": "my_u002ddb.public.t"} {
		a, err := NewSchemaNameAdjuster(mode)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := a.Adjust("my-db.public.t"); err != nil || got != want {
			t.Errorf("%s: got %q, %v; want %q", mode, got, err, want)
		}
	}
	f, err := NewFieldNameAdjuster("avro")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := f.Adjust("a.b"); got != "a_b" {
		t.Errorf("field names may not keep '.': got %q", got)
	}
	if _, err := NewSchemaNameAdjuster("camel"); !errors.Is(err, ErrAdjustmentMode) {
		t.Errorf("got %v", err)
	}
}

func TestNameAdjusterReportsConflicts(t *testing.T) {
	a, _ := NewSchemaNameAdjuster("avro")
	if _, err := a.Adjust("p.a-b"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Adjust("p.a-b"); err != nil {
		t.Fatalf("the same name again is no conflict: %v", err)
	}
	if got, err := a.Adjust("p.a$b"); !errors.Is(err, ErrNameConflict) || got != "p.a_b" {
		t.Fatalf("got %q, %v", got, err)
	}
	// A name that needs no change is never recorded, as in Debezium.
	if _, err := a.Adjust("p.a_b"); err != nil {
		t.Fatal(err)
	}
}
