package e2e

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/cdcd/cdcd/e2e/testenv"
)

// TestAvroAgainstRealRegistry runs cdcd with Confluent's AvroConverter settings against a real
// Confluent-compatible registry (Apicurio Registry's ccompat API, run by e2e/registry.sh) and reads the
// topic back as a Confluent consumer would: wire-format header, schema fetched by id, Avro body decoded
// with that schema. It also proves the registry stored each schema exactly as cdcd sent it, and that a
// restarted cdcd reuses the registered versions instead of adding new ones.
func TestAvroAgainstRealRegistry(t *testing.T) {
	registryURL := realRegistry(t)
	dsn := testenv.NewPostgresDB(t)
	brokers := testenv.Kafka(t)
	prefix := testenv.NewTopicPrefix(t)
	topic := prefix + ".public.items"
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	db := connectPostgres(t, ctx, dsn)
	run := func(sql string) {
		t.Helper()
		if _, err := db.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	run(`CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy')`)
	run(`CREATE TABLE items (
		id int PRIMARY KEY, name text NOT NULL, price numeric(10,2), at timestamptz, ok boolean,
		data bytea, mood mood, note text DEFAULT 'none')`)

	// cdcd talks to the registry through a recording proxy, so the test knows the exact schema text
	// cdcd sent and can compare it with what the registry stored.
	reg := newRecordingProxy(t, registryURL)
	dir := t.TempDir()
	worker := workerProps(brokers, filepath.Join(dir, "offsets.dat"))
	for _, side := range []string{"key", "value"} {
		worker[side+".converter"] = "io.confluent.connect.avro.AvroConverter"
		worker[side+".converter.schema.registry.url"] = reg.url
	}
	workerPath, connPath := filepath.Join(dir, "worker.properties"), filepath.Join(dir, "pg.properties")
	writeProperties(t, workerPath, worker)
	conn := pgConnector(t, dsn, "avro", prefix, "public.items")
	writeProperties(t, connPath, conn)

	p := startCdcd(t, workerPath, connPath)
	waitSlotActive(t, ctx, db, conn["slot.name"], p)
	run(`INSERT INTO items VALUES (1, 'alpha', 1234.5, '2024-05-06 07:08:09.123456+00', true, '\x0001ff', 'happy', 'hi')`)
	run(`INSERT INTO items (id, name) VALUES (2, 'beta')`)
	run(`UPDATE items SET price = 0.01, ok = false, mood = 'sad' WHERE id = 1`)
	run(`DELETE FROM items WHERE id = 2`)

	consumer := newTopicReader(t, brokers, topic)
	recs := consumer.read(ctx, 5) // c 1, c 2, u 1, d 2 and the tombstone of 2
	keyID, valueID := assertWireFormat(t, recs[0])
	for _, r := range recs[1:4] {
		if k, v := assertWireFormat(t, r); k != keyID || v != valueID {
			t.Errorf("record at offset %d uses schema ids %d/%d, the first record %d/%d", r.Offset, k, v, keyID, valueID)
		}
	}
	if recs[4].Value != nil {
		t.Errorf("the record after the delete is not a tombstone: % x", recs[4].Value)
	}

	keySchema := reg.schemaByID(t, keyID)
	valueSchema := reg.schemaByID(t, valueID)
	events := make([]changeEvent, 4)
	for i, r := range recs[:4] {
		events[i] = changeEvent{key: decodeAvro(t, keySchema, r.Key), value: decodeAvro(t, valueSchema, r.Value)}
		if key, row := events[i].key["id"], events[i].id(t); key != row {
			t.Errorf("record %d: key id %v, row id %v", i, key, row)
		}
	}

	wantOps := []string{"c", "c", "u", "d"}
	for i, ev := range events {
		if op := ev.value["op"]; op != wantOps[i] {
			t.Errorf("event %d: op %v, want %s", i, op, wantOps[i])
		}
	}
	row1 := events[0].row(t, "after")
	assertField(t, row1, "id", 1)
	assertField(t, row1, "name", "alpha")
	assertDecimal(t, row1, "price", "1234.50")
	assertField(t, row1, "at", "2024-05-06T07:08:09.123456Z")
	assertField(t, row1, "ok", true)
	assertField(t, row1, "data", []byte{0x00, 0x01, 0xff})
	assertField(t, row1, "mood", "happy")
	assertField(t, row1, "note", "hi")

	row2 := events[1].row(t, "after")
	assertField(t, row2, "name", "beta")
	for _, col := range []string{"price", "at", "ok", "data", "mood"} {
		assertField(t, row2, col, nil)
	}
	assertField(t, row2, "note", "none") // the column default, filled in by PostgreSQL

	updated := events[2].row(t, "after")
	assertDecimal(t, updated, "price", "0.01")
	assertField(t, updated, "ok", false)
	assertField(t, updated, "mood", "sad")
	assertField(t, events[3].row(t, "before"), "id", 2)
	if events[3].value["after"] != nil {
		t.Errorf("delete event has an after image: %v", events[3].value["after"])
	}
	if src, ok := events[0].value["source"].(map[string]any); !ok || src["table"] != "items" || src["connector"] != "postgresql" {
		t.Errorf("source block: %v", events[0].value["source"])
	}

	// The registry keeps what cdcd sent, byte for byte: under the subject and behind the id.
	subjects := map[string]int{topic + "-key": keyID, topic + "-value": valueID}
	for subject, id := range subjects {
		sent := reg.registered(t, subject)
		latest := reg.latest(t, subject)
		if latest.ID != id {
			t.Errorf("%s: latest version has id %d, records use %d", subject, latest.ID, id)
		}
		if latest.Schema != sent {
			t.Errorf("%s: registry stored\n%s\ncdcd sent\n%s", subject, latest.Schema, sent)
		}
		byID := keySchema
		if id == valueID {
			byID = valueSchema
		}
		if byID != sent {
			t.Errorf("schema id %d reads back as\n%s\ncdcd sent\n%s", id, byID, sent)
		}
	}

	// A restarted cdcd registers the same texts again and gets the same ids: no new version.
	p.stop()
	p = startCdcd(t, workerPath, connPath)
	waitSlotActive(t, ctx, db, conn["slot.name"], p)
	run(`INSERT INTO items (id, name) VALUES (3, 'gamma')`)
	after := consumer.read(ctx, 1)
	if k, v := assertWireFormat(t, after[0]); k != keyID || v != valueID {
		t.Errorf("after the restart the record uses schema ids %d/%d, before it %d/%d", k, v, keyID, valueID)
	}
	assertField(t, changeEvent{value: decodeAvro(t, valueSchema, after[0].Value)}.row(t, "after"), "name", "gamma")
	if n := reg.registrations(topic + "-value"); n < 2 {
		t.Errorf("the restarted cdcd did not register its value schema again (%d registrations): the no-new-version check proves nothing", n)
	}
	for subject := range subjects {
		if versions := reg.versions(t, subject); len(versions) != 1 {
			t.Errorf("%s has versions %v after the restart, want exactly one", subject, versions)
		}
	}
}

// realRegistry returns the schema.registry.url of the registry e2e/registry.sh runs, starting it when it
// is installed and skipping the test when it is not.
func realRegistry(t *testing.T) string {
	t.Helper()
	testenv.Kafka(t) // skips without CDCD_E2E
	if err := exec.Command("./registry.sh", "installed").Run(); err != nil {
		t.Skip("no schema registry installed: run e2e/registry.sh install (Apicurio Registry, resolved with Maven)")
	}
	start := exec.Command("./registry.sh", "start")
	if out, err := start.CombinedOutput(); err != nil {
		t.Fatalf("e2e/registry.sh start: %v\n%s", err, out)
	}
	out, err := exec.Command("./registry.sh", "url").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// recordingProxy forwards every request to the real registry and keeps the schema text of each
// registration, by subject.
type recordingProxy struct {
	url      string
	upstream string
	mu       sync.Mutex
	sent     map[string][]string
}

func newRecordingProxy(t *testing.T, upstream string) *recordingProxy {
	t.Helper()
	target, err := url.Parse(upstream)
	if err != nil {
		t.Fatal(err)
	}
	rp := &recordingProxy{upstream: upstream, sent: map[string][]string{}}
	// cdcd's URL keeps the registry's base path, so requests are forwarded to the host as they are.
	forward := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: target.Scheme, Host: target.Host})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if subject, ok := registrationSubject(r.URL.Path); ok && r.Method == http.MethodPost {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			var req struct{ Schema string }
			if err := json.Unmarshal(body, &req); err == nil {
				rp.mu.Lock()
				rp.sent[subject] = append(rp.sent[subject], req.Schema)
				rp.mu.Unlock()
			}
		}
		forward.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	rp.url = srv.URL + target.Path
	return rp
}

// registrationSubject parses .../subjects/{subject}/versions, Confluent's register request.
func registrationSubject(path string) (string, bool) {
	rest, ok := strings.CutSuffix(path, "/versions")
	if !ok {
		return "", false
	}
	_, subject, ok := strings.Cut(rest, "/subjects/")
	if !ok {
		return "", false
	}
	subject, err := url.PathUnescape(subject)
	return subject, err == nil
}

func (rp *recordingProxy) registrations(subject string) int {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	return len(rp.sent[subject])
}

// registered is the text cdcd registered under subject; every registration must have sent the same.
func (rp *recordingProxy) registered(t *testing.T, subject string) string {
	t.Helper()
	rp.mu.Lock()
	defer rp.mu.Unlock()
	texts := rp.sent[subject]
	if len(texts) == 0 {
		t.Fatalf("cdcd registered nothing under %s (subjects: %v)", subject, rp.sent)
	}
	for _, text := range texts[1:] {
		if text != texts[0] {
			t.Errorf("%s: cdcd registered two texts:\n%s\n%s", subject, texts[0], text)
		}
	}
	return texts[0]
}

// get reads a JSON document from the real registry, not through the proxy.
func (rp *recordingProxy) get(t *testing.T, path string, into any) {
	t.Helper()
	resp, err := http.Get(rp.upstream + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: HTTP %d: %s", path, resp.StatusCode, body)
	}
	if err := json.Unmarshal(body, into); err != nil {
		t.Fatalf("GET %s: %v: %s", path, err, body)
	}
}

func (rp *recordingProxy) schemaByID(t *testing.T, id int) string {
	t.Helper()
	var doc struct{ Schema string }
	rp.get(t, fmt.Sprintf("/schemas/ids/%d", id), &doc)
	return doc.Schema
}

type subjectVersion struct {
	ID     int
	Schema string
}

func (rp *recordingProxy) latest(t *testing.T, subject string) subjectVersion {
	t.Helper()
	var v subjectVersion
	rp.get(t, "/subjects/"+url.PathEscape(subject)+"/versions/latest", &v)
	return v
}

func (rp *recordingProxy) versions(t *testing.T, subject string) []int {
	t.Helper()
	var vs []int
	rp.get(t, "/subjects/"+url.PathEscape(subject)+"/versions", &vs)
	return vs
}

// topicReader reads one topic from its start, record by record across calls.
type topicReader struct {
	t  *testing.T
	cl *kgo.Client
}

func newTopicReader(t *testing.T, brokers []string, topic string) *topicReader {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return &topicReader{t: t, cl: cl}
}

// read returns the next n records, failing the test when they do not arrive in time.
func (r *topicReader) read(ctx context.Context, n int) []*kgo.Record {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var recs []*kgo.Record
	for len(recs) < n {
		fetches := r.cl.PollRecords(ctx, n-len(recs))
		if ctx.Err() != nil {
			r.t.Fatalf("read %d of %d records within a minute", len(recs), n)
		}
		fetches.EachError(func(topic string, _ int32, err error) { r.t.Logf("fetching %s: %v", topic, err) })
		recs = append(recs, fetches.Records()...)
	}
	return recs
}

// assertWireFormat checks Confluent's framing of a record's key and value (magic byte 0, then a
// big-endian schema id) and returns the two ids.
func assertWireFormat(t *testing.T, r *kgo.Record) (keyID, valueID int) {
	t.Helper()
	id := func(what string, b []byte) int {
		if len(b) < 5 || b[0] != 0 {
			t.Fatalf("record at offset %d: %s is not in Confluent's wire format: % x", r.Offset, what, b)
		}
		return int(binary.BigEndian.Uint32(b[1:5]))
	}
	return id("key", r.Key), id("value", r.Value)
}

// decodeAvro decodes a framed Avro body with the writer schema text the registry returned.
func decodeAvro(t *testing.T, schemaText string, framed []byte) map[string]any {
	t.Helper()
	s, err := avro.Parse(schemaText)
	if err != nil {
		t.Fatalf("the registry's schema does not parse: %v\n%s", err, schemaText)
	}
	var v map[string]any
	if err := avro.Unmarshal(s, framed[5:], &v); err != nil {
		t.Fatalf("decoding with the registry's schema: %v", err)
	}
	return v
}

type changeEvent struct {
	key, value map[string]any
}

// row is the before or after image of the event.
func (e changeEvent) row(t *testing.T, image string) map[string]any {
	t.Helper()
	row, ok := unionValue(e.value[image]).(map[string]any)
	if !ok {
		t.Fatalf("%s image is %T %v", image, e.value[image], e.value[image])
	}
	return row
}

// id is the row's primary key; hamba decodes an Avro int as a Go int.
func (e changeEvent) id(t *testing.T) int {
	t.Helper()
	image := "after"
	if e.value["op"] == "d" {
		image = "before"
	}
	id, _ := e.row(t, image)["id"].(int)
	return id
}

// unionValue unwraps the branch map hamba decodes a non-null union value into ({"type name": value}).
func unionValue(v any) any {
	if m, ok := v.(map[string]any); ok && len(m) == 1 {
		for name, inner := range m {
			if strings.Contains(name, ".") || isAvroPrimitive(name) {
				return inner
			}
		}
	}
	return v
}

func isAvroPrimitive(name string) bool {
	switch name {
	case "null", "boolean", "int", "long", "float", "double", "bytes", "string":
		return true
	}
	return false
}

func assertField(t *testing.T, row map[string]any, field string, want any) {
	t.Helper()
	got := unionValue(row[field])
	if gb, ok := got.([]byte); ok {
		if wb, ok := want.([]byte); !ok || !bytes.Equal(gb, wb) {
			t.Errorf("%s = % x, want %v", field, gb, want)
		}
		return
	}
	if got != want {
		t.Errorf("%s = %#v, want %#v", field, got, want)
	}
}

// assertDecimal checks an Avro decimal (hamba decodes it as *big.Rat) against its plain form.
func assertDecimal(t *testing.T, row map[string]any, field, want string) {
	t.Helper()
	got, ok := unionValue(row[field]).(*big.Rat)
	if !ok {
		t.Errorf("%s = %#v, want decimal %s", field, row[field], want)
		return
	}
	if s := got.FloatString(2); s != want {
		t.Errorf("%s = %s, want %s", field, s, want)
	}
}
