package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/jackc/pgx/v5"
	kafkago "github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/cdcd/cdcd/connect/offsets"
	"github.com/cdcd/cdcd/e2e/testenv"
)

// avroBed is one table captured by cdcd standalone in Avro, through a recording proxy in front of the
// real registry, with the REST API listening.
type avroBed struct {
	t          *testing.T
	ctx        context.Context
	db         *pgx.Conn
	brokers    []string
	topic      string
	name       string
	reg        *recordingProxy
	offsetFile string
	offsetKey  []byte
	workerPath string
	connPath   string
	conn       map[string]string // the connector's properties, as written to connPath
	slot       string
}

// newAvroBed creates table (its DDL names it) and writes cdcd's config; converter settings extra are
// given to both converters.
func newAvroBed(t *testing.T, ctx context.Context, table, ddl string, extra map[string]string) *avroBed {
	t.Helper()
	registryURL := realRegistry(t)
	dsn := testenv.NewPostgresDB(t)
	b := &avroBed{t: t, ctx: ctx, brokers: testenv.Kafka(t), name: "avro-" + table}
	prefix := testenv.NewTopicPrefix(t)
	b.topic = prefix + ".public." + table
	db, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close(context.Background()) })
	b.db = db
	b.exec(ddl)

	b.reg = newRecordingProxy(t, registryURL)
	dir := t.TempDir()
	b.offsetFile = filepath.Join(dir, "offsets.dat")
	worker := workerProps(b.brokers, b.offsetFile)
	for _, side := range []string{"key", "value"} {
		worker[side+".converter"] = "io.confluent.connect.avro.AvroConverter"
		worker[side+".converter.schema.registry.url"] = b.reg.url
		for k, v := range extra {
			worker[side+".converter."+k] = v
		}
	}
	b.workerPath, b.connPath = filepath.Join(dir, "worker.properties"), filepath.Join(dir, "pg.properties")
	writeProperties(t, b.workerPath, worker)
	b.conn = pgConnector(t, dsn, b.name, prefix, "public."+table)
	b.slot = b.conn["slot.name"]
	writeProperties(t, b.connPath, b.conn)
	if b.offsetKey, err = offsets.Key(b.name, map[string]any{"server": prefix}); err != nil {
		t.Fatal(err)
	}
	return b
}

func (b *avroBed) exec(sql string) {
	b.t.Helper()
	if _, err := b.db.Exec(b.ctx, sql); err != nil {
		b.t.Fatalf("%s: %v", sql, err)
	}
}

// start runs cdcd and returns it with a client of its REST API once it streams.
func (b *avroBed) start() (*cdcdProcess, restClient) {
	b.t.Helper()
	p := startCdcd(b.t, b.workerPath, b.connPath)
	rest := restClient{t: b.t, base: "http://" + listeningAddress(b.t, p)}
	waitSlotActive(b.t, b.ctx, b.db, b.slot, p)
	return p, rest
}

type taskStatus struct{ State, Trace string }

// taskStatus is the state of the connector's only task, "" while it has none.
func (b *avroBed) taskStatus(rest restClient) taskStatus {
	b.t.Helper()
	var st struct{ Tasks []taskStatus }
	_ = json.Unmarshal([]byte(rest.do("GET", "/connectors/"+b.name+"/status", "").body), &st)
	if len(st.Tasks) != 1 {
		return taskStatus{}
	}
	return st.Tasks[0]
}

// waitTaskFailed polls until the task is FAILED and returns its trace.
func (b *avroBed) waitTaskFailed(rest restClient, p *cdcdProcess) string {
	b.t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if st := b.taskStatus(rest); st.State == "FAILED" {
			return st.Trace
		}
		if p.exited() {
			b.t.Fatalf("cdcd exited instead of failing the task; log:\n%s", tail(p.log.String(), 4000))
		}
		time.Sleep(200 * time.Millisecond)
	}
	b.t.Fatalf("the task did not fail within 2 minutes: %+v", b.taskStatus(rest))
	return ""
}

// currentLSN is the server's WAL insert position.
func (b *avroBed) currentLSN() uint64 {
	b.t.Helper()
	var lsn uint64
	if err := b.db.QueryRow(b.ctx, "SELECT pg_current_wal_lsn() - '0/0'").Scan(&lsn); err != nil {
		b.t.Fatal(err)
	}
	return lsn
}

// valueRow decodes a record's value with the writer schema its own id names and returns the after image.
func (b *avroBed) valueRow(r *kgo.Record) map[string]any {
	b.t.Helper()
	_, valueID := assertWireFormat(b.t, r)
	return changeEvent{value: decodeAvro(b.t, b.reg.schemaByID(b.t, valueID), r.Value)}.row(b.t, "after")
}

// TestAvroSchemaEvolutionBackward changes a captured table's columns while cdcd streams it in Avro to a
// registry that enforces BACKWARD compatibility: compatible changes register a new version and old and
// new records decode with their own schema ids; an incompatible change is refused with 409, which fails
// the task with the subject and the registry's message, delivers nothing after it and keeps the offset
// before the refused record.
func TestAvroSchemaEvolutionBackward(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	b := newAvroBed(t, ctx, "evo", `CREATE TABLE evo (id int PRIMARY KEY, x int, d text)`, nil)
	valueSubject := b.topic + "-value"
	p, rest := b.start()
	consumer := newTopicReader(t, b.brokers, b.topic)

	b.exec(`INSERT INTO evo VALUES (1, 10, 'd1')`)
	first := consumer.read(ctx, 1)[0]
	keyID, v1 := assertWireFormat(t, first)

	// ADD COLUMN of a nullable column: the new field is optional with default null, BACKWARD accepts it.
	b.exec(`ALTER TABLE evo ADD COLUMN c text`)
	b.exec(`INSERT INTO evo VALUES (2, 20, 'd2', 'c2')`)
	added := consumer.read(ctx, 1)[0]
	k2, v2 := assertWireFormat(t, added)
	if k2 != keyID || v2 == v1 {
		t.Fatalf("after ADD COLUMN: schema ids %d/%d, before %d/%d: want the same key id and a new value id", k2, v2, keyID, v1)
	}
	if vs := b.reg.versions(t, valueSubject); len(vs) != 2 {
		t.Errorf("after ADD COLUMN %s has versions %v, want two", valueSubject, vs)
	}
	old, now := b.valueRow(first), b.valueRow(added)
	if _, ok := old["c"]; ok {
		t.Errorf("the first record, decoded with its own schema %d, has column c: %v", v1, old)
	}
	assertField(t, old, "d", "d1")
	assertField(t, now, "c", "c2")
	assertField(t, now, "d", "d2")

	// DROP COLUMN of a nullable column: a reader without d ignores the writer's d, BACKWARD accepts it.
	b.exec(`ALTER TABLE evo DROP COLUMN d`)
	b.exec(`INSERT INTO evo VALUES (3, 30, 'c3')`)
	dropped := consumer.read(ctx, 1)[0]
	_, v3 := assertWireFormat(t, dropped)
	row3 := b.valueRow(dropped)
	if _, ok := row3["d"]; ok || v3 == v2 {
		t.Errorf("after DROP COLUMN: value id %d (before %d), row %v", v3, v2, row3)
	}
	assertField(t, row3, "c", "c3")
	t.Logf("BACKWARD accepted ADD COLUMN (value ids %d -> %d) and DROP COLUMN (-> %d); subject versions %v",
		v1, v2, v3, b.reg.versions(t, valueSubject))

	// int -> text: a string reader cannot read the int the older versions wrote; the registry refuses.
	b.exec(`ALTER TABLE evo ALTER COLUMN x TYPE text`)
	// The offsets must stay before the refused record: wait until record 3's offset is durable.
	beforeRefused := b.currentLSN()
	for durableLSN(b.offsetFile, b.offsetKey) == 0 {
		time.Sleep(100 * time.Millisecond)
	}
	b.exec(`INSERT INTO evo VALUES (4, 'four', 'c4')`)
	b.exec(`INSERT INTO evo VALUES (5, 'five', 'c5')`)
	trace := b.waitTaskFailed(rest, p)
	t.Logf("task trace after the incompatible change:\n%s", firstLines(trace, 6))
	for _, want := range []string{valueSubject, "HTTP 409", "Incompatible artifact"} {
		if !strings.Contains(trace, want) {
			t.Errorf("the task's trace does not name %q:\n%s", want, trace)
		}
	}
	for _, line := range logLines(p.log.String(), "ncompatible") {
		t.Logf("cdcd log: %s", line)
	}
	if vs := b.reg.versions(t, valueSubject); len(vs) != 3 {
		t.Errorf("after the refused change %s has versions %v, want three", valueSubject, vs)
	}
	if recs := pollFor(ctx, consumer, 5*time.Second); len(recs) != 0 {
		t.Errorf("%d records were delivered after the refused one (first at offset %d)", len(recs), recs[0].Offset)
	}
	if durable := durableLSN(b.offsetFile, b.offsetKey); durable == 0 || durable > beforeRefused {
		t.Errorf("durable offset LSN %d moved past the refused record (WAL was at %d before it)", durable, beforeRefused)
	}
}

// pollFor returns whatever records arrive within d.
func pollFor(ctx context.Context, r *topicReader, d time.Duration) []*kgo.Record {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var recs []*kgo.Record
	for ctx.Err() == nil {
		recs = append(recs, r.cl.PollFetches(ctx).Records()...)
	}
	return recs
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], "\n")
}

// TestAvroKeysLandWhereJavaPutsThem proves that Avro keys are partitioned by their serialized bytes
// (magic byte, schema id, Avro body) with the Java producer's murmur2, as Debezium's were.
func TestAvroKeysLandWhereJavaPutsThem(t *testing.T) {
	const partitions = 6
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	b := newAvroBed(t, ctx, "parts", `CREATE TABLE parts (id int PRIMARY KEY, v text)`, nil)
	createTopic(t, ctx, b.brokers, b.topic, partitions)
	b.start()
	const rows = 60
	b.exec(`INSERT INTO parts SELECT g, 'v' || g FROM generate_series(1, 60) g`)
	recs := newTopicReader(t, b.brokers, b.topic).read(ctx, rows)

	// kafka-go's consistent Murmur2Balancer is the function sink/kafka's partitioner uses for keyed
	// records, checked there against the Java producer's answers.
	java := kafkago.Murmur2Balancer{Consistent: true}
	all := []int{0, 1, 2, 3, 4, 5}
	used := map[int32]int{}
	for _, r := range recs {
		assertWireFormat(t, r)
		if want := java.Balance(kafkago.Message{Key: r.Key}, all...); int(r.Partition) != want {
			t.Errorf("key % x is in partition %d, Java puts it in %d", r.Key, r.Partition, want)
		}
		used[r.Partition]++
	}
	if len(used) < 3 {
		t.Errorf("%d keys used only partitions %v: the check proves little", rows, used)
	}
	t.Logf("%d keys spread over partitions %v, each where Java's murmur2 puts it", rows, used)
}

// createTopic creates topic with n partitions up front.
func createTopic(t *testing.T, ctx context.Context, brokers []string, topic string, n int32) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, n, 1
	req.Topics = append(req.Topics, rt)
	req.TimeoutMillis = 30000
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("creating topic %s: %v", topic, err)
	}
	for _, rt := range resp.Topics {
		if err := kerr.ErrorForCode(rt.ErrorCode); err != nil {
			t.Fatalf("creating topic %s: %v", topic, err)
		}
	}
}

// TestAvroRegistryOutage stops the registry while cdcd streams and a new table version needs registering:
// cdcd retries, then fails the task or restarts it from the durable offset; once the registry is back
// every row arrives (at least once).
func TestAvroRegistryOutage(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	b := newAvroBed(t, ctx, "outage", `CREATE TABLE outage (id int PRIMARY KEY, v text)`,
		map[string]string{"max.retries": "3", "retries.wait.ms": "200", "retries.max.wait.ms": "1000"})
	t.Cleanup(func() {
		if out, err := exec.Command("./registry.sh", "start").CombinedOutput(); err != nil {
			t.Errorf("restarting the registry at cleanup: %v\n%s", err, out)
		}
	})
	p, rest := b.start()
	consumer := newTopicReader(t, b.brokers, b.topic)
	b.exec(`INSERT INTO outage SELECT g, 'before' FROM generate_series(1, 5) g`)
	seen := map[int]int{}
	for _, r := range consumer.read(ctx, 5) {
		seen[keyID(t, r)]++
	}

	registry(t, "stop")
	b.exec(`ALTER TABLE outage ADD COLUMN c text`)
	const rows = 20
	for id := 6; id <= rows; id++ {
		b.exec(fmt.Sprintf(`INSERT INTO outage VALUES (%d, 'during', 'c%d')`, id, id))
	}
	deadline := time.Now().Add(time.Minute)
	for len(logLines(p.log.String(), "schema registry")) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("cdcd logged no registry error within a minute of the outage; status %+v", b.taskStatus(rest))
		}
		time.Sleep(200 * time.Millisecond)
	}
	time.Sleep(3 * time.Second) // let retries and any restart play out while the registry is down
	during := b.taskStatus(rest)
	t.Logf("task during the outage: %s\n%s", during.State, firstLines(during.Trace, 4))
	for _, line := range firstN(logLines(p.log.String(), "schema registry"), 4) {
		t.Logf("cdcd log: %s", line)
	}

	registry(t, "start")
	if st := b.taskStatus(rest); st.State == "FAILED" {
		t.Logf("restarting the failed task through REST")
		rest.expect("POST", "/connectors/"+b.name+"/tasks/0/restart", "", 204)
	}
	deadline = time.Now().Add(2 * time.Minute)
	for len(seen) < rows {
		if time.Now().After(deadline) {
			t.Fatalf("after the registry came back only ids %v arrived; task %+v", seen, b.taskStatus(rest))
		}
		for _, r := range pollFor(ctx, consumer, time.Second) {
			seen[keyID(t, r)]++
		}
	}
	var dups int
	for _, n := range seen {
		dups += n - 1
	}
	t.Logf("all %d rows arrived, %d redelivered duplicates; task %s",
		rows, dups, b.taskStatus(rest).State)
}

// keyID decodes the id of a framed key. The registry keeps schemas in memory, so after its restart ids may
// name other schemas: the key's body is read with the key schema the table implies instead.
func keyID(t *testing.T, r *kgo.Record) int {
	t.Helper()
	assertWireFormat(t, r)
	var key struct {
		ID int `avro:"id"`
	}
	if err := avro.Unmarshal(outageKeySchema, r.Key[5:], &key); err != nil {
		t.Fatalf("key % x: %v", r.Key, err)
	}
	return key.ID
}

var outageKeySchema = avro.MustParse(`{"type":"record","name":"Key","fields":[{"name":"id","type":"int"}]}`)

func registry(t *testing.T, action string) {
	t.Helper()
	if out, err := exec.Command("./registry.sh", action).CombinedOutput(); err != nil {
		t.Fatalf("registry.sh %s: %v\n%s", action, err, out)
	}
}

func firstN(lines []string, n int) []string { return lines[:min(n, len(lines))] }
