package snapshot

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/source"
)

// TestReadTablesRunsOnEveryConnectionAtOnce: with three connections, three tables are read at the same
// time (each reader waits until all three are inside), and every table is read once.
func TestReadTablesRunsOnEveryConnectionAtOnce(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var mu sync.Mutex
	inside, read := map[string]int{}, map[string]int{}
	all := make(chan struct{})
	err := ReadTables(ctx, []int{0, 1, 2}, []string{"a", "b", "c", "d", "e"}, func(j string) string { return j },
		func(ctx context.Context, conn int, table string) error {
			mu.Lock()
			read[table]++
			inside[fmt.Sprint(conn)]++
			if len(inside) == 3 && len(read) == 3 {
				close(all)
			}
			mu.Unlock()
			if table <= "c" { // the first three wait for each other: sequential reading never gets past this
				select {
				case <-all:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"a", "b", "c", "d", "e"} {
		if read[table] != 1 {
			t.Errorf("table %s read %d times", table, read[table])
		}
	}
}

// TestReadTablesStopsAtTheFirstFailure: a failing table's error comes back wrapped with its name, the
// other readers see their context end, and no goroutine is left behind; a panic is a table's error too.
func TestReadTablesStopsAtTheFirstFailure(t *testing.T) {
	before := runtime.NumGoroutine()
	boom := errors.New("boom")
	err := ReadTables(context.Background(), []int{0, 1, 2}, []string{"db.a", "db.b", "db.c", "db.d"}, func(j string) string { return j },
		func(ctx context.Context, _ int, table string) error {
			if table == "db.b" {
				return boom
			}
			<-ctx.Done() // the others read until told to stop
			return ctx.Err()
		})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "snapshot of db.b") {
		t.Errorf("error %v, want boom wrapped with the table", err)
	}
	err = ReadTables(context.Background(), []int{0, 1}, []string{"db.a", "db.b"}, func(j string) string { return j },
		func(ctx context.Context, _ int, table string) error {
			if table == "db.a" {
				panic("bad row")
			}
			<-ctx.Done()
			return ctx.Err()
		})
	var p *source.PanicError
	if !errors.As(err, &p) || !strings.Contains(err.Error(), "snapshot of db.a") {
		t.Errorf("error %v, want the panic as db.a's error", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := ReadTables(ctx, []int{0, 1}, []string{"db.a", "db.b", "db.c"}, func(j string) string { return j },
		func(ctx context.Context, _ int, _ string) error { return ctx.Err() }); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	for deadline := time.Now().Add(5 * time.Second); runtime.NumGoroutine() > before; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines before, %d after", before, runtime.NumGoroutine())
		}
	}
}

// TestHandoverRecordsProgressOnlyWithTheRows interleaves three tables' readers on two connections and one
// handover and checks every batch: a table is done in a batch's progress only once the batches so far hold
// all its rows; each table's rows keep their order; the newest row waits for the next one or the end; and
// the final batch ends with the snapshot's last row, the only one marked "last".
func TestHandoverRecordsProgressOnlyWithTheRows(t *testing.T) {
	const rowsPerTable = 1000
	progress := &Progress{Tables: []TableProgress{{ID: "db.a"}, {ID: "db.b"}, {ID: "db.c"}}}
	var batches []Handed
	delivered := map[string][]int{}
	var mu sync.Mutex
	sources := map[string]*schema.Struct{}
	sourceSchema := &schema.Schema{Type: schema.StructT, Fields: []schema.Field{{Name: schema.SourceSnapshot, Schema: &schema.Schema{Type: schema.String, Optional: true}}}}
	interleaved := false
	h := NewHandover(progress, 64, func(_ context.Context, b Handed) error {
		tables := map[string]bool{}
		for _, ev := range b.Events {
			table, n, _ := strings.Cut(ev.Topic, "/")
			var i int
			fmt.Sscan(n, &i)
			delivered[table] = append(delivered[table], i)
			tables[table] = true
		}
		interleaved = interleaved || len(tables) > 1
		for _, tp := range b.Progress.Tables {
			if tp.Done && len(delivered[tp.ID]) != rowsPerTable {
				t.Errorf("batch %d says %s is done with %d of its rows handed over", len(batches), tp.ID, len(delivered[tp.ID]))
			}
		}
		batches = append(batches, Handed{Events: b.Events, Progress: b.Progress.Clone(), Final: b.Final, Rows: b.Rows})
		return nil
	})
	ctx := context.Background()
	err := ReadTables(ctx, []int{0, 1}, []string{"db.a", "db.b", "db.c"}, func(j string) string { return j },
		func(ctx context.Context, _ int, table string) error {
			for i := range rowsPerTable {
				topic := fmt.Sprint(table, "/", i)
				src := schema.NewStruct(sourceSchema).Set(schema.SourceSnapshot, string(True))
				mu.Lock()
				sources[topic] = src
				mu.Unlock()
				if err := h.Add(ctx, Item{Event: source.Event{Topic: topic}, Source: src}); err != nil {
					return err
				}
				if i%50 == 49 {
					runtime.Gosched() // let the other reader in
				}
			}
			return h.Add(ctx, Item{Advance: func(p *Progress) { p.Table(table).Done = true }})
		})
	if err != nil {
		t.Fatal(err)
	}
	if len(batches) == 0 || batches[len(batches)-1].Final {
		t.Fatal("no batch before Finish, or a final one")
	}
	if batches[len(batches)-1].Progress.Complete() {
		t.Error("every table was done before the last row was handed over")
	}
	if err := h.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	final := batches[len(batches)-1]
	if !final.Final || !final.Progress.Complete() || final.Rows != 3*rowsPerTable || len(final.Events) == 0 {
		t.Fatalf("final batch: final %v, complete %v, %d rows, %d events; want final, complete, %d rows and the held-back row",
			final.Final, final.Progress.Complete(), final.Rows, len(final.Events), 3*rowsPerTable)
	}
	for table, rows := range delivered {
		for i, n := range rows {
			if n != i {
				t.Fatalf("%s: row %d handed over in place %d", table, n, i)
			}
		}
	}
	lastTopic := final.Events[len(final.Events)-1].Topic
	for topic, src := range sources {
		if marked := src.Get(schema.SourceSnapshot) == string(Last); marked != (topic == lastTopic) {
			t.Errorf("row %s marked %v; the snapshot's last row is %s", topic, src.Get(schema.SourceSnapshot), lastTopic)
		}
	}
	if !interleaved {
		t.Log("no batch held rows of two tables: the readers did not interleave this time")
	}
}
