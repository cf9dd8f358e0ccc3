package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestAvroSchemaPreflightCheck captures two tables in Avro, stops the connector, changes one column
// incompatibly (int -> text, which BACKWARD refuses) and asks POST /connectors/{name}/schemas/check
// before resuming: the altered table's value subject is reported incompatible with the registry's reasons,
// its key and the untouched table stay compatible, and nothing is registered by the check.
func TestAvroSchemaPreflightCheck(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	b := newAvroBed(t, ctx, "pf_t", `CREATE TABLE pf_t (id int PRIMARY KEY, x int); CREATE TABLE pf_u (id int PRIMARY KEY, y text)`, nil)
	b.conn["table.include.list"] = "public.pf_t,public.pf_u"
	writeProperties(t, b.connPath, b.conn)
	otherTopic := b.topic[:len(b.topic)-len("pf_t")] + "pf_u"

	_, rest := b.start()
	b.exec(`INSERT INTO pf_t VALUES (1, 10)`)
	b.exec(`INSERT INTO pf_u VALUES (1, 'y1')`)
	newTopicReader(t, b.brokers, b.topic).read(ctx, 1) // both tables' schemas are registered now
	newTopicReader(t, b.brokers, otherTopic).read(ctx, 1)

	check := func() map[string]schemaVerdict {
		t.Helper()
		var reply struct {
			Connector string
			Tables    []schemaVerdict
		}
		body := rest.expect("POST", "/connectors/"+b.name+"/schemas/check", "", 200)
		if err := json.Unmarshal([]byte(body), &reply); err != nil || reply.Connector != b.name {
			t.Fatalf("check reply %s: %v", body, err)
		}
		bySubject := map[string]schemaVerdict{}
		for _, v := range reply.Tables {
			bySubject[v.Subject] = v
		}
		return bySubject
	}
	want := func(got map[string]schemaVerdict, subject, table string, compatible bool) {
		t.Helper()
		v, ok := got[subject]
		if !ok || v.Table != table || v.Compatible != compatible {
			t.Errorf("%s: got %+v (present %v), want table %s compatible=%v", subject, v, ok, table, compatible)
		}
	}

	before := check()
	if len(before) != 4 {
		t.Errorf("before the change: %d subjects checked, want 4 (a key and a value per table): %v", len(before), before)
	}
	for _, subject := range []string{b.topic + "-key", b.topic + "-value"} {
		want(before, subject, "public.pf_t", true)
	}

	rest.expect("PUT", "/connectors/"+b.name+"/stop", "", 204)
	rest.waitTaskState(b.name, "STOPPED")
	b.exec(`ALTER TABLE pf_t ALTER COLUMN x TYPE text`)

	after := check()
	want(after, b.topic+"-key", "public.pf_t", true)
	want(after, b.topic+"-value", "public.pf_t", false)
	want(after, otherTopic+"-key", "public.pf_u", true)
	want(after, otherTopic+"-value", "public.pf_u", true)
	t.Logf("registry's reasons for %s-value: %q", b.topic, after[b.topic+"-value"].Messages)
	if vs := b.reg.versions(t, b.topic+"-value"); len(vs) != 1 {
		t.Errorf("%s-value has versions %v after the checks, want the one cdcd registered", b.topic, vs)
	}

	// Validation runs the same check: the refused value subject is an error on value.converter.
	var validated struct {
		ErrorCount int `json:"error_count"`
		Configs    []struct {
			Value struct {
				Name   string   `json:"name"`
				Errors []string `json:"errors"`
			} `json:"value"`
		} `json:"configs"`
	}
	body := rest.expect("PUT", "/connector-plugins/PostgresConnector/config/validate", jsonBody(t, b.conn), 200)
	if err := json.Unmarshal([]byte(body), &validated); err != nil {
		t.Fatal(err)
	}
	var converterErrors []string
	for _, c := range validated.Configs {
		if c.Value.Name == "value.converter" {
			converterErrors = c.Value.Errors
		}
	}
	if validated.ErrorCount != 1 || len(converterErrors) != 1 || !strings.Contains(converterErrors[0], "Table public.pf_t") ||
		!strings.Contains(converterErrors[0], b.topic+"-value") {
		t.Errorf("validate: %d errors, value.converter %q; want the refused subject %s-value of public.pf_t", validated.ErrorCount, converterErrors, b.topic)
	}

	rest.expect("POST", "/connectors/nope/schemas/check", "", 404)
}

type schemaVerdict struct {
	Table, Subject string
	Compatible     bool
	Messages       []string
}
