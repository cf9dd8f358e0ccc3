package metrics

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestDebeziumNames renders a connector's streaming and snapshot facts as the JMX exporter renders
// Debezium's MBeans with the rules of Debezium's monitoring example.
func TestDebeziumNames(t *testing.T) {
	const conn = "dbz-names"
	defer Forget(conn)
	Identify(conn, "postgres", "shop")
	st := NewStream(conn)
	for _, op := range []byte("ccudtm") {
		st.Event(op)
	}
	commit := time.Unix(1_000_000, 0)
	st.Committed(commit.Add(-1500*time.Millisecond), commit)
	st.Committed(commit.Add(-500*time.Millisecond), commit)
	st.Connected(true)

	sn := NewSnapshot(conn)
	sn.Start(2, 10)
	sn.Progress(1, 7, -1)
	sn.TableRows("public.a", 5)
	sn.TableRows("public.b", 2)

	c := NewDebeziumCollector(func() map[string]QueueLevel { return map[string]QueueLevel{conn: {Capacity: 8, Used: 3}} })
	c.now = func() time.Time { return commit.Add(2 * time.Second) }
	want := `
# HELP debezium_metrics_Connected 1 while the reader holds its replication connection (Connected)
# TYPE debezium_metrics_Connected untyped
debezium_metrics_Connected{context="streaming",name="shop",plugin="postgres"} 1
# HELP debezium_metrics_MilliSecondsBehindSource Milliseconds between the last transaction's commit in the database and its reading, -1 before the first (MilliSecondsBehindSource)
# TYPE debezium_metrics_MilliSecondsBehindSource untyped
debezium_metrics_MilliSecondsBehindSource{context="streaming",name="shop",plugin="postgres"} 500
# HELP debezium_metrics_MilliSecondsBehindSourceMaxValue Largest MilliSecondsBehindSource measured (MilliSecondsBehindSourceMaxValue)
# TYPE debezium_metrics_MilliSecondsBehindSourceMaxValue untyped
debezium_metrics_MilliSecondsBehindSourceMaxValue{context="streaming",name="shop",plugin="postgres"} 1500
# HELP debezium_metrics_NumberOfCommittedTransactions Transactions read from the log (NumberOfCommittedTransactions)
# TYPE debezium_metrics_NumberOfCommittedTransactions untyped
debezium_metrics_NumberOfCommittedTransactions{context="streaming",name="shop",plugin="postgres"} 2
# HELP debezium_metrics_QueueRemainingCapacity Free batch slots of the pipeline's queue (QueueRemainingCapacity)
# TYPE debezium_metrics_QueueRemainingCapacity untyped
debezium_metrics_QueueRemainingCapacity{context="snapshot",name="shop",plugin="postgres"} 5
debezium_metrics_QueueRemainingCapacity{context="streaming",name="shop",plugin="postgres"} 5
# HELP debezium_metrics_RemainingTableCount Tables the snapshot has yet to finish (RemainingTableCount)
# TYPE debezium_metrics_RemainingTableCount untyped
debezium_metrics_RemainingTableCount{context="snapshot",name="shop",plugin="postgres"} 1
# HELP debezium_metrics_RowsScanned Rows scanned per table by the snapshot (RowsScanned).
# TYPE debezium_metrics_RowsScanned untyped
debezium_metrics_RowsScanned{context="snapshot",name="shop",plugin="postgres",table="public.a"} 5
debezium_metrics_RowsScanned{context="snapshot",name="shop",plugin="postgres",table="public.b"} 2
# HELP debezium_metrics_SnapshotRunning 1 while a snapshot runs (SnapshotRunning)
# TYPE debezium_metrics_SnapshotRunning untyped
debezium_metrics_SnapshotRunning{context="snapshot",name="shop",plugin="postgres"} 1
# HELP debezium_metrics_TotalNumberOfCreateEventsSeen Create events read (TotalNumberOfCreateEventsSeen)
# TYPE debezium_metrics_TotalNumberOfCreateEventsSeen untyped
debezium_metrics_TotalNumberOfCreateEventsSeen{context="snapshot",name="shop",plugin="postgres"} 0
debezium_metrics_TotalNumberOfCreateEventsSeen{context="streaming",name="shop",plugin="postgres"} 2
# HELP debezium_metrics_TotalNumberOfEventsSeen Events read: change events while streaming, rows while snapshotting (TotalNumberOfEventsSeen)
# TYPE debezium_metrics_TotalNumberOfEventsSeen untyped
debezium_metrics_TotalNumberOfEventsSeen{context="snapshot",name="shop",plugin="postgres"} 7
debezium_metrics_TotalNumberOfEventsSeen{context="streaming",name="shop",plugin="postgres"} 6
`
	names := []string{"debezium_metrics_Connected", "debezium_metrics_MilliSecondsBehindSource", "debezium_metrics_MilliSecondsBehindSourceMaxValue",
		"debezium_metrics_NumberOfCommittedTransactions", "debezium_metrics_QueueRemainingCapacity",
		"debezium_metrics_RemainingTableCount", "debezium_metrics_RowsScanned", "debezium_metrics_SnapshotRunning",
		"debezium_metrics_TotalNumberOfCreateEventsSeen", "debezium_metrics_TotalNumberOfEventsSeen"}
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), names...); err != nil {
		t.Error(err)
	}
	// DDSketch ranks q·(n-1): of two measurements even the 99th percentile is the smaller.
	if got := value(t, c, "debezium_metrics_MilliSecondsBehindSourceP99", "streaming"); math.Abs(got-500) > 5 {
		t.Errorf("MilliSecondsBehindSourceP99 = %v of lags 1500 and 500, want 500 ± 1%%", got)
	}
	if got := value(t, c, "debezium_metrics_MilliSecondsSinceLastEvent", "streaming"); got != 2000 {
		t.Errorf("MilliSecondsSinceLastEvent = %v two seconds after the last transaction, want 2000", got)
	}

	// A PostgreSQL reader has no binlog attributes; a binlog reader's appear with its first position.
	if n := testutil.CollectAndCount(c, "debezium_metrics_BinlogPosition"); n != 0 {
		t.Errorf("a reader without a binlog renders %d BinlogPosition series", n)
	}
	st.Binlog(4711, true)
	st.Disconnected()
	st.RolledBack()
	st.SkippedEvent()
	st.SkippedEvent()
	for name, want := range map[string]float64{"debezium_metrics_BinlogPosition": 4711, "debezium_metrics_IsGtidModeEnabled": 1,
		"debezium_metrics_NumberOfDisconnects": 1, "debezium_metrics_NumberOfRolledBackTransactions": 1,
		"debezium_metrics_NumberOfSkippedEvents": 2, "debezium_metrics_NumberOfLargeTransactions": 0} {
		if got := value(t, c, name, "streaming"); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}

	// Filtered changes, and an incremental snapshot's pause.
	st.Filtered()
	st.Filtered()
	if got := value(t, c, "debezium_metrics_NumberOfEventsFiltered", "streaming"); got != 2 {
		t.Errorf("NumberOfEventsFiltered = %v after two filtered changes, want 2", got)
	}
	sn.Paused(true)
	if got := value(t, c, "debezium_metrics_SnapshotPaused", "snapshot"); got != 1 {
		t.Errorf("SnapshotPaused = %v while paused, want 1", got)
	}
	sn.Paused(false)
	if got := value(t, c, "debezium_metrics_SnapshotPaused", "snapshot"); got != 0 {
		t.Errorf("SnapshotPaused = %v after the resume, want 0", got)
	}

	// A snapshot that stops with a table left was aborted; one that finishes every table completed.
	sn.Stop()
	if got := value(t, c, "debezium_metrics_SnapshotAborted", "snapshot"); got != 1 {
		t.Errorf("SnapshotAborted = %v after a stop with a table left, want 1", got)
	}
	sn.Start(1, 0)
	sn.Progress(1, 3, -1)
	sn.Stop()
	for name, want := range map[string]float64{"debezium_metrics_SnapshotCompleted": 1, "debezium_metrics_SnapshotAborted": 0, "debezium_metrics_SnapshotRunning": 0} {
		if got := value(t, c, name, "snapshot"); got != want {
			t.Errorf("%s = %v after a finished snapshot, want %v", name, got, want)
		}
	}

	Forget(conn)
	if n := testutil.CollectAndCount(c); n != 0 {
		t.Errorf("a forgotten connector still has %d Debezium series", n)
	}
}

// TestDebeziumBeforeEvents: before the first event the time attributes are -1, as Debezium's, and an
// unidentified connector is not rendered at all.
func TestDebeziumBeforeEvents(t *testing.T) {
	const conn = "dbz-fresh"
	defer Forget(conn)
	NewStream(conn)
	c := NewDebeziumCollector(nil)
	if n := testutil.CollectAndCount(c); n != 0 {
		t.Fatalf("an unidentified connector has %d Debezium series", n)
	}
	Identify(conn, "mariadb", "db1")
	for _, name := range []string{"debezium_metrics_MilliSecondsSinceLastEvent", "debezium_metrics_MilliSecondsBehindSource"} {
		if got := value(t, c, name, "streaming"); got != -1 {
			t.Errorf("%s = %v before any event, want -1", name, got)
		}
	}
	if n := testutil.CollectAndCount(c, "debezium_metrics_MilliSecondsBehindSourceMinValue", "debezium_metrics_MilliSecondsBehindSourceP50", "debezium_metrics_RowsScanned"); n != 0 {
		t.Errorf("%d statistics or RowsScanned series before any measurement, want none", n)
	}
	if got := value(t, c, "debezium_metrics_QueueTotalCapacity", "snapshot"); got != 0 {
		t.Errorf("QueueTotalCapacity = %v without a queue, want 0", got)
	}
}

// value is the one series of name and context c renders.
func value(t *testing.T, c prometheus.Collector, name, context string) float64 {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "context" && l.GetValue() == context {
					return m.GetUntyped().GetValue()
				}
			}
		}
	}
	t.Fatalf("no %s{context=%q}", name, context)
	return 0
}
