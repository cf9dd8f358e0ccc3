package connect

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cdcd/cdcd/source"
)

func newTestWorker(t *testing.T) *Worker {
	t.Helper()
	return newTestStandalone(t, map[string]string{
		"bootstrap.servers":            "127.0.0.1:1",
		"key.converter":                "org.apache.kafka.connect.json.JsonConverter",
		"value.converter":              "org.apache.kafka.connect.json.JsonConverter",
		"offset.storage.file.filename": filepath.Join(t.TempDir(), "offsets.dat"),
	}, slog.New(slog.DiscardHandler))
}

func pgConfig(name string) map[string]string {
	return map[string]string{
		"name": name, "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
		"database.hostname": "127.0.0.1", "database.user": "u", "database.dbname": "d",
		"topic.prefix": "p", "plugin.name": "pgoutput",
	}
}

func wantRequestError(t *testing.T, err error, kind ErrorKind, msg string) {
	t.Helper()
	var re *RequestError
	if !errors.As(err, &re) || re.Kind != kind || re.Message != msg {
		t.Fatalf("error %v, want kind %d %q", err, kind, msg)
	}
}

// A STOPPED connector runs no task, so its whole lifecycle can be driven without a database.
func TestHerderStoppedConnectorLifecycle(t *testing.T) {
	w := newTestWorker(t)
	w.SetWorkerID("host:8083")
	if _, _, err := w.PutConnectorConfig("pg", pgConfig("pg"), false, "stopped"); err != nil {
		t.Fatal(err)
	}
	_, _, err := w.PutConnectorConfig("pg", pgConfig("pg"), false, "")
	wantRequestError(t, err, AlreadyExists, "Connector pg already exists")

	st, err := w.ConnectorStatus("pg")
	if err != nil || st.Connector.State != Stopped || len(st.Tasks) != 0 || st.Connector.WorkerID != "host:8083" {
		t.Fatalf("status %+v, %v", st, err)
	}
	if info, _ := w.ConnectorInfo("pg"); len(info.Tasks) != 0 || info.Config["topic.prefix"] != "p" {
		t.Fatalf("info %+v", info)
	}
	_, err = w.TaskStatus("pg", 0)
	wantRequestError(t, err, NotFound, "No status found for task pg-0")
	wantRequestError(t, w.RestartTask("pg", 0), NotFound, "Task pg-0 not found")

	msg, err := w.AlterConnectorOffsets("pg", []ConnectorOffset{
		{Partition: json.RawMessage(`{"server":"p"}`), Offset: json.RawMessage(`{"lsn":123,"txId":5,"ts_usec":1.5}`)},
		{Partition: json.RawMessage(`{"server":"gone"}`), Offset: json.RawMessage(`null`)},
	})
	if err != nil || msg != OffsetsAlteredMessage {
		t.Fatalf("alter: %q, %v", msg, err)
	}
	got, _ := w.ConnectorOffsets("pg")
	if b, _ := json.Marshal(got); string(b) != `{"offsets":[{"partition":{"server":"p"},"offset":{"lsn":123,"txId":5,"ts_usec":1.5}}]}` {
		t.Fatalf("offsets %s", b)
	}
	_, err = w.AlterConnectorOffsets("pg", []ConnectorOffset{{Partition: json.RawMessage(`{"server":"p"}`), Offset: json.RawMessage(`{"a":[1]}`)}})
	wantRequestError(t, err, ServerError, "Offsets may only contain primitive types as values, but field a contains ARRAY")

	if msg, err := w.ResetConnectorOffsets("pg"); err != nil || msg != OffsetsResetMessage {
		t.Fatalf("reset: %q, %v", msg, err)
	}
	if got, _ := w.ConnectorOffsets("pg"); len(got.Offsets) != 0 {
		t.Fatalf("offsets after reset: %+v", got)
	}

	// Pausing a stopped connector starts nothing, and offsets are then locked.
	if err := w.PauseConnector("pg"); err != nil {
		t.Fatal(err)
	}
	if st, _ := w.ConnectorStatus("pg"); st.Connector.State != Paused || len(st.Tasks) != 0 {
		t.Fatalf("paused status %+v", st)
	}
	_, err = w.ResetConnectorOffsets("pg")
	wantRequestError(t, err, BadRequest, "Connectors must be in the STOPPED state before their offsets can be modified. This can be done for the specified connector by issuing a 'PUT' request to the '/connectors/pg/stop' endpoint")

	restart, err := w.RestartConnector("pg", true, false)
	if err != nil || restart.Connector.State != Restarting {
		t.Fatalf("restart: %+v, %v", restart, err)
	}

	var deleted map[string]string
	w.SetDeleteHook(func(_ context.Context, name string, cfg map[string]string) error { deleted = cfg; return nil })
	if err := w.DeleteConnector(context.Background(), "pg"); err != nil {
		t.Fatal(err)
	}
	if deleted["name"] != "pg" {
		t.Fatalf("delete hook got %v", deleted)
	}
	if got := w.Connectors(); got == nil || len(got) != 0 {
		t.Fatalf("connectors after delete: %#v", got)
	}
}

func TestHerderUnknownConnector(t *testing.T) {
	w := newTestWorker(t)
	_, err := w.ConnectorInfo("x")
	wantRequestError(t, err, NotFound, "Connector x not found")
	_, err = w.ConnectorStatus("x")
	wantRequestError(t, err, NotFound, "No status found for connector x")
	wantRequestError(t, w.PauseConnector("x"), NotFound, "Unknown connector x")
	wantRequestError(t, w.ResumeConnector("x"), NotFound, "Unknown connector x")
	wantRequestError(t, w.StopConnector("x"), ServerError, "No connector `x` configured")
	_, err = w.RestartConnector("x", true, false)
	wantRequestError(t, err, NotFound, "Unknown connector: x")
	wantRequestError(t, w.DeleteConnector(context.Background(), "x"), NotFound, "Connector x not found")
	_, err = w.AlterConnectorOffsets("x", nil)
	wantRequestError(t, err, NotFound, "Connector x not found")
}

func TestHerderRefusesInvalidConfig(t *testing.T) {
	w := newTestWorker(t)
	cfg := pgConfig("pg")
	delete(cfg, "topic.prefix")
	cfg["database.port"] = "abc"
	_, _, err := w.PutConnectorConfig("pg", cfg, false, "")
	wantRequestError(t, err, BadRequest, "Connector configuration is invalid and contains the following 2 error(s):\n"+
		"The 'topic.prefix' value is invalid: A value is required\n"+
		"The 'database.port' value is invalid: An integer is expected\n"+
		"You can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`")

	// A value Debezium accepts but cdcd cannot honour is refused too, on its key.
	cfg = pgConfig("pg")
	cfg["snapshot.isolation.mode"] = "read_committed"
	infos, err := w.ValidateConnectorConfig("PostgresConnector", cfg)
	if err != nil || infos.ErrorCount != 1 {
		t.Fatalf("validate: %d errors, %v", infos.ErrorCount, err)
	}

	_, _, err = w.PutConnectorConfig("pg", map[string]string{"name": "pg"}, false, "")
	wantRequestError(t, err, BadRequest, "Connector config contains no connector type")
	_, err = w.ValidateConnectorConfig("Postgres", map[string]string{"connector.class": "Other"})
	wantRequestError(t, err, BadRequest, "Included connector type Other does not match request type Postgres")
}

func TestValidateListsConnectThenDebeziumKeys(t *testing.T) {
	w := newTestWorker(t)
	infos, err := w.ValidateConnectorConfig("io.debezium.connector.postgresql.PostgresConnector", pgConfig("pg"))
	if err != nil {
		t.Fatal(err)
	}
	if infos.ErrorCount != 0 || len(infos.Configs) != 150 || infos.Configs[0].Definition.Name != "name" || infos.Configs[24].Definition.Name != "topic.prefix" {
		t.Fatalf("validate: %d errors, %d configs", infos.ErrorCount, len(infos.Configs))
	}
	if got := strings.Join(infos.Groups, ","); got != "Common,Transforms,Predicates,Error Handling,Topic Creation,Exactly Once Support,offsets.topic,Postgres,Connector,Events" {
		t.Fatalf("groups %s", got)
	}
}

// fakeReader emits one batch each time it is able to, and counts them.
type fakeReader struct{ sent chan int }

func (f fakeReader) Run(ctx context.Context, out chan<- source.Batch) error {
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case out <- source.Batch{}:
			f.sent <- i
		}
	}
}
func (fakeReader) Release(source.Position) {}

func TestGatedReaderHoldsBatchesWhilePaused(t *testing.T) {
	g := newGate(true)
	inner := fakeReader{sent: make(chan int, 100)}
	out := make(chan source.Batch)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- gatedReader{Reader: inner, gate: g, read: &lastPosition{}}.Run(ctx, out) }()

	// While closed, at most the one batch already taken from the reader waits; nothing reaches out.
	select {
	case <-out:
		t.Fatal("a batch passed a closed gate")
	case <-time.After(50 * time.Millisecond):
	}
	g.set(false)
	for range 3 {
		<-out
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run returned %v", err)
	}
}

// An unknown connector key is logged with the closest known key, and otherwise ignored, as Connect does; a
// key the connector reads outside Debezium's ConfigDef is not unknown.
func TestHerderWarnsAboutUnknownConnectorKeys(t *testing.T) {
	var logged strings.Builder
	w := newTestStandalone(t, map[string]string{
		"bootstrap.servers":            "127.0.0.1:1",
		"key.converter":                "org.apache.kafka.connect.json.JsonConverter",
		"value.converter":              "org.apache.kafka.connect.json.JsonConverter",
		"offset.storage.file.filename": filepath.Join(t.TempDir(), "offsets.dat"),
	}, slog.New(slog.NewTextHandler(&logged, nil)))
	cfg := pgConfig("pg")
	cfg["tombstone.on.delete"] = "false"
	cfg["producer.override.linger.ms"] = "5"
	cfg["read.only"] = "true" // read outside Debezium's ConfigDef, and honoured
	if _, _, err := w.PutConnectorConfig("pg", cfg, false, "stopped"); err != nil {
		t.Fatal(err)
	}
	out := logged.String()
	if !strings.Contains(out, "key=tombstone.on.delete") || !strings.Contains(out, "did_you_mean=tombstones.on.delete") {
		t.Fatalf("no did-you-mean warning for tombstone.on.delete:\n%s", out)
	}
	if strings.Contains(out, "key=producer.override.linger.ms") {
		t.Fatalf("a producer.override.* key is not unknown:\n%s", out)
	}
	if strings.Contains(out, "key=read.only") {
		t.Fatalf("read.only, which the connector reads outside Debezium's ConfigDef, was called unknown:\n%s", out)
	}
}

// A transforms chain that cannot run is refused before the connector is stored, naming the key.
func TestHerderRefusesABadTransformsChain(t *testing.T) {
	w := newTestWorker(t)
	cfg := pgConfig("pg")
	cfg["transforms"] = "unwrap"
	cfg["transforms.unwrap.type"] = "io.example.NoSuchTransform"
	_, _, err := w.PutConnectorConfig("pg", cfg, false, "stopped")
	var re *RequestError
	if !errors.As(err, &re) || re.Kind != BadRequest || !strings.Contains(re.Message, "transforms.unwrap.type") {
		t.Fatalf("got %v, want a 400 naming transforms.unwrap.type", err)
	}
}

// TestConnectorNameControlCharactersRefused: Connect's NonEmptyStringWithoutControlChars refuses a name with a
// control character (a newline, DEL, U+0085), listing each by its code point; other characters pass.
func TestConnectorNameControlCharactersRefused(t *testing.T) {
	w := newTestWorker(t)
	_, _, err := w.PutConnectorConfig("a\nb\x7f\u0085", pgConfig("a\nb\x7f\u0085"), false, "stopped")
	var re *RequestError
	if !errors.As(err, &re) || re.Kind != BadRequest ||
		!strings.Contains(re.Message, "for configuration name: String may not contain control sequences but had the following ASCII chars: 10, 127, 133") {
		t.Fatalf("error %v", err)
	}
	if _, _, err := w.PutConnectorConfig("a/b ü", pgConfig("a/b ü"), false, "stopped"); err != nil {
		t.Fatalf("a name Connect accepts was refused: %v", err)
	}
}
