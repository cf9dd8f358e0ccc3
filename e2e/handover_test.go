package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"

	"github.com/cdcd/cdcd/connect/offsets"
	"github.com/cdcd/cdcd/e2e/capture"
	"github.com/cdcd/cdcd/e2e/testenv"
)

// TestHandoverWithDebezium proves that cdcd and Kafka Connect + Debezium share one standalone offsets file:
// Debezium streams, stops; cdcd starts on the same worker and connector files and resumes exactly where
// Debezium stopped; cdcd stops; Debezium starts again and resumes where cdcd stopped. Rows are written
// while each runs and in each gap while nothing runs. Each worker must deliver every change of the gap
// before it and none that the previous worker delivered, except at most the previous worker's last
// transaction again (at-least-once), with the same source.lsn and txId as the first delivery.
func TestHandoverWithDebezium(t *testing.T) {
	if os.Getenv("CDCD_E2E") == "" {
		t.Skip("set CDCD_E2E=1 (make test does) to run the handover with the real Connect worker")
	}
	java, lib, plugins := connectInstall(t)
	dsn := testenv.NewPostgresDB(t)
	brokers := testenv.Kafka(t)
	prefix := testenv.NewTopicPrefix(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	// FULL: a delete's before image carries the version it removed, which the checks match on.
	db := connectPostgres(t, ctx, dsn, `CREATE TABLE handover (id int PRIMARY KEY, version bigint NOT NULL); ALTER TABLE handover REPLICA IDENTITY FULL`)

	dir := t.TempDir()
	offsetFile := filepath.Join(dir, "offsets.dat")
	workerPath, connPath := filepath.Join(dir, "worker.properties"), filepath.Join(dir, "connector.properties")
	worker := workerProps(brokers, offsetFile)
	worker["listeners"] = fmt.Sprintf("http://127.0.0.1:%d", freePort(t)) // never connect.sh's 58083
	worker["plugin.path"] = plugins                                       // cdcd accepts and ignores it
	writeProperties(t, workerPath, worker)
	conn := pgConnector(t, dsn, "handover", prefix, "public.handover")
	conn["snapshot.mode"] = "no_data"
	writeProperties(t, connPath, conn)
	offsetKey, err := offsets.Key("handover", map[string]any{"server": prefix})
	if err != nil {
		t.Fatal(err)
	}

	broker := newBroker(t, brokers)
	h := &handover{t: t, ctx: ctx, db: db, broker: broker, topic: prefix + ".public.handover", rows: map[int]bool{},
		rnd: rand.New(rand.NewPCG(1, 2))}

	// 1. Debezium streams a first batch.
	debezium := startConnectWorker(t, java, lib, workerPath, connPath, filepath.Join(dir, "connect-1.log"))
	debezium.waitRunning(worker["listeners"], conn["name"])
	waitSlotActive(t, ctx, db, conn["slot.name"], nil)
	h.write(20)
	h.waitDelivered(debezium.exited)
	debezium.stop()
	h.endSegment("Debezium", durableLSN(offsetFile, offsetKey))

	// 2. A gap, then cdcd on the same files; more rows while it runs.
	h.write(15)
	cdcd := startCdcd(t, workerPath, connPath)
	waitSlotActive(t, ctx, db, conn["slot.name"], cdcd)
	h.write(15)
	h.waitDelivered(cdcd.exited)
	cdcd.stop()
	h.endSegment("cdcd", durableLSN(offsetFile, offsetKey))

	// 3. A gap, then Debezium again on the offsets cdcd wrote; more rows while it runs.
	h.write(15)
	debezium = startConnectWorker(t, java, lib, workerPath, connPath, filepath.Join(dir, "connect-2.log"))
	debezium.waitRunning(worker["listeners"], conn["name"])
	waitSlotActive(t, ctx, db, conn["slot.name"], nil)
	h.write(15)
	h.waitDelivered(debezium.exited)
	debezium.stop()
	h.endSegment("Debezium again", durableLSN(offsetFile, offsetKey))

	h.check()
}

// handover drives the workload and remembers which worker delivered which Kafka records.
type handover struct {
	t      *testing.T
	ctx    context.Context
	db     *pgx.Conn
	broker *capture.Broker
	topic  string
	rnd    *rand.Rand

	rows      map[int]bool // keys that exist now
	version   int64        // the last version written; versions grow in commit order
	committed []committedChange

	segments []handoverSegment
	events   []handoverEvent // every change event in Kafka, in offset order
}

// handoverSegment is one worker's run: the records it produced and the committed changes it had to deliver.
type handoverSegment struct {
	worker      string
	fromOffset  int64 // the topic's end offset when the worker started
	toOffset    int64 // and when it had stopped
	fromVersion int64 // the versions it must deliver: (fromVersion, toVersion]
	toVersion   int64
}

// handoverEvent is a change event with the position Debezium's source block gives it.
type handoverEvent struct {
	kafkaChange
	offset int64
	txID   int64
}

// write commits n small transactions of inserts, updates and deletes on keys 1..25.
func (h *handover) write(n int) {
	h.t.Helper()
	for range n {
		tx, err := h.db.Begin(h.ctx)
		if err != nil {
			h.t.Fatal(err)
		}
		next := map[int]bool{}
		for k, v := range h.rows {
			next[k] = v
		}
		var changes []committedChange
		for range 1 + h.rnd.IntN(3) {
			id := 1 + h.rnd.IntN(25)
			h.version++
			var sql, op string
			switch {
			case !next[id]:
				sql, op = "INSERT INTO handover VALUES ($1, $2)", "c"
				next[id] = true
			case h.rnd.IntN(10) < 7:
				sql, op = "UPDATE handover SET version = $2 WHERE id = $1", "u"
			default:
				sql, op = "DELETE FROM handover WHERE id = $1 AND $2 > 0", "d"
				next[id] = false
			}
			if _, err := tx.Exec(h.ctx, sql, id, h.version); err != nil {
				h.t.Fatal(err)
			}
			changes = append(changes, committedChange{id, op, h.version})
		}
		if err := tx.Commit(h.ctx); err != nil {
			h.t.Fatal(err)
		}
		h.rows = next
		h.committed = append(h.committed, changes...)
	}
}

// read returns every change event now in the topic.
func (h *handover) read() []handoverEvent {
	h.t.Helper()
	// A prefix selection, unlike a topic list, reads nothing rather than failing before the topic exists.
	recs, err := h.broker.Read(h.ctx, capture.Selection{Prefix: h.topic})
	if err != nil {
		h.t.Fatal(err)
	}
	var values []capture.Record
	for _, r := range recs {
		if r.Value != nil { // tombstones carry no position
			values = append(values, r)
		}
	}
	changes := parseChanges(h.t, values)
	events := make([]handoverEvent, len(values))
	for i, r := range values {
		var env struct {
			Payload struct {
				Source struct {
					TxID int64 `json:"txId"`
				} `json:"source"`
			} `json:"payload"`
		}
		if err := json.Unmarshal(r.Value, &env); err != nil {
			h.t.Fatalf("record %s@%d: %v", r.Topic, r.Offset, err)
		}
		events[i] = handoverEvent{kafkaChange: changes[i], offset: r.Offset, txID: env.Payload.Source.TxID}
	}
	return events
}

// waitDelivered waits until every change committed so far is in Kafka.
func (h *handover) waitDelivered(workerExited func() bool) {
	h.t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		events := h.read()
		missing := missingChanges(h.committed, kafkaChanges(events))
		if len(missing) == 0 {
			return
		}
		if workerExited() || time.Now().After(deadline) {
			h.t.Fatalf("%d of %d committed changes not in Kafka (worker exited: %v), e.g. %+v",
				len(missing), len(h.committed), workerExited(), missing[:min(5, len(missing))])
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func kafkaChanges(events []handoverEvent) []kafkaChange {
	out := make([]kafkaChange, len(events))
	for i, e := range events {
		out[i] = e.kafkaChange
	}
	return out
}

// endSegment records the worker that just stopped: the records it produced and the changes it owed.
func (h *handover) endSegment(worker string, durable uint64) {
	h.t.Helper()
	h.events = h.read()
	seg := handoverSegment{worker: worker, toVersion: h.version}
	if len(h.events) > 0 {
		seg.toOffset = h.events[len(h.events)-1].offset + 1
	}
	if n := len(h.segments); n > 0 {
		seg.fromOffset, seg.fromVersion = h.segments[n-1].toOffset, h.segments[n-1].toVersion
	}
	if durable == 0 {
		h.t.Fatalf("%s stopped without a resume position in the offsets file", worker)
	}
	h.t.Logf("%s delivered Kafka offsets [%d, %d) for versions (%d, %d]; offsets file resumes at %s",
		worker, seg.fromOffset, seg.toOffset, seg.fromVersion, seg.toVersion, pglogrepl.LSN(durable))
	h.segments = append(h.segments, seg)
}

// check compares each worker's records with what it owed and with what the workers before it delivered.
func (h *handover) check() {
	h.t.Helper()
	if missing := missingChanges(h.committed, kafkaChanges(h.events)); len(missing) > 0 {
		h.t.Errorf("%d committed changes never reached Kafka, e.g. %+v", len(missing), missing[:min(5, len(missing))])
	}
	// The first delivery of each change: "op/id/version" → event.
	first := map[string]handoverEvent{}
	for i, seg := range h.segments {
		var own []handoverEvent
		for _, e := range h.events {
			if e.offset >= seg.fromOffset && e.offset < seg.toOffset {
				own = append(own, e)
			}
		}
		// Every change of the gap before it, and of its own run, is among its records.
		var owed []committedChange
		for _, m := range missingChanges(h.committed, kafkaChanges(own)) {
			if m.version > seg.fromVersion && m.version <= seg.toVersion {
				owed = append(owed, m)
			}
		}
		if len(owed) > 0 {
			h.t.Errorf("%s did not deliver %d changes it owed (versions (%d, %d]), e.g. %+v", seg.worker, len(owed), seg.fromVersion, seg.toVersion, owed[:min(5, len(owed))])
		}
		// Nothing the previous workers delivered comes again, except the previous worker's last
		// transaction, at the same position.
		redeliveredTx := map[int64]bool{}
		var firstOwn []handoverEvent
		for _, e := range own {
			key := fmt.Sprintf("%s/%d/%d", e.op, e.id, e.version)
			before, seen := first[key]
			if !seen {
				first[key] = e
				firstOwn = append(firstOwn, e)
				continue
			}
			if before.offset >= seg.fromOffset {
				h.t.Errorf("%s delivered %s twice in one run (Kafka offsets %d and %d)", seg.worker, key, before.offset, e.offset)
				continue
			}
			if before.position != e.position || before.txID != e.txID {
				h.t.Errorf("%s redelivered %s at %s tx %d, first delivered at %s tx %d", seg.worker, key, e.position, e.txID, before.position, before.txID)
			}
			redeliveredTx[e.txID] = true
		}
		if i > 0 {
			prev := h.segments[i-1]
			var lastTx int64
			for _, e := range h.events {
				if e.offset >= prev.fromOffset && e.offset < prev.toOffset {
					lastTx = e.txID
				}
			}
			for tx := range redeliveredTx {
				if tx != lastTx {
					h.t.Errorf("%s redelivered transaction %d; only %s's last transaction (%d) may come again", seg.worker, tx, prev.worker, lastTx)
				}
			}
			h.t.Logf("%s: %d records, %d first deliveries, redelivered transactions %v (previous worker's last: %d)",
				seg.worker, len(own), len(firstOwn), keysOf(redeliveredTx), lastTx)
		}
		// Per key, the first deliveries of this run continue in commit order.
		if bad := orderViolations(kafkaChanges(firstOwn)); len(bad) > 0 {
			h.t.Errorf("%s: per-key order violated, e.g. %v", seg.worker, bad[:min(5, len(bad))])
		}
	}
	if bad := orderViolations(kafkaChanges(onlyFirst(h.events))); len(bad) > 0 {
		h.t.Errorf("per-key order across the handovers violated, e.g. %v", bad[:min(5, len(bad))])
	}
}

func onlyFirst(events []handoverEvent) []handoverEvent {
	seen := map[string]bool{}
	var out []handoverEvent
	for _, e := range events {
		key := fmt.Sprintf("%s/%d/%d", e.op, e.id, e.version)
		if !seen[key] {
			seen[key] = true
			out = append(out, e)
		}
	}
	return out
}

func keysOf(m map[int64]bool) []int64 {
	var out []int64
	for k := range m {
		out = append(out, k)
	}
	return out
}

// connectWorker is a Kafka Connect standalone worker of the test's own (its own REST port and offsets
// file), run the way e2e/debezium/connect.sh runs the reference worker.
type connectWorker struct {
	t       *testing.T
	cmd     *exec.Cmd
	logPath string
	done    chan struct{}
}

func startConnectWorker(t *testing.T, java, lib, workerPath, connPath, logPath string) *connectWorker {
	t.Helper()
	return startConnectMain(t, java, lib, logPath, filepath.Dir(workerPath), "org.apache.kafka.connect.cli.ConnectStandalone", workerPath, connPath)
}

// startConnectMain runs one of Connect's command-line classes (ConnectStandalone, ConnectDistributed)
// in dir with args, logging to logPath.
func startConnectMain(t *testing.T, java, lib, logPath, dir, mainClass string, args ...string) *connectWorker {
	t.Helper()
	here, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	cmd := exec.Command(java, "-Xmx512m", "-Duser.timezone=UTC", "-Dfile.encoding=UTF-8",
		"-Dlog4j2.configurationFile="+filepath.Join(here, "debezium", "log4j2.properties"),
		"-cp", filepath.Join(lib, "*"), mainClass)
	cmd.Args = append(cmd.Args, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w := &connectWorker{t: t, cmd: cmd, logPath: logPath, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(w.done)
	}()
	t.Cleanup(func() {
		if !w.exited() {
			_ = cmd.Process.Kill()
			<-w.done
		}
		if t.Failed() {
			t.Logf("%s:\n%s", logPath, w.logTail())
		}
	})
	return w
}

func (w *connectWorker) exited() bool {
	select {
	case <-w.done:
		return true
	default:
		return false
	}
}

func (w *connectWorker) logTail() string {
	b, _ := os.ReadFile(w.logPath)
	return tail(string(b), 6000)
}

// waitRunning waits until the connector and its task are RUNNING, as connect.sh wait-running does. A
// loaded machine can take a minute to start a JVM worker, hence the long deadline.
func (w *connectWorker) waitRunning(baseURL, connector string) {
	w.t.Helper()
	deadline := time.Now().Add(4 * time.Minute)
	for {
		var status struct {
			Connector struct {
				State string `json:"state"`
			} `json:"connector"`
			Tasks []struct {
				State string `json:"state"`
			} `json:"tasks"`
		}
		resp, err := http.Get(baseURL + "/connectors/" + connector + "/status")
		if err == nil {
			err = json.NewDecoder(resp.Body).Decode(&status)
			resp.Body.Close()
		}
		if err == nil && status.Connector.State == "RUNNING" && len(status.Tasks) == 1 && status.Tasks[0].State == "RUNNING" {
			return
		}
		if err == nil && (status.Connector.State == "FAILED" || len(status.Tasks) == 1 && status.Tasks[0].State == "FAILED") {
			w.t.Fatalf("connector %s failed: %+v", connector, status)
		}
		if w.exited() || time.Now().After(deadline) {
			w.t.Fatalf("connector %s not RUNNING (worker exited: %v, last status %+v, error %v)", connector, w.exited(), status, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// stop sends SIGTERM: Connect's shutdown hook stops the task and commits its offsets before exiting.
func (w *connectWorker) stop() {
	w.t.Helper()
	_ = w.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-w.done:
	case <-time.After(90 * time.Second):
		w.t.Fatalf("Connect did not stop within 90s of SIGTERM; log:\n%s", w.logTail())
	}
}
