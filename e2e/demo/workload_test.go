package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// fakeDB keeps the row ids of each table, hands out serial ids like PostgreSQL, and refuses a
// statement that names a row which does not exist, so the workload's bookkeeping is checked.
type fakeDB struct {
	rows  map[string][]int // table → live ids
	next  map[string]int
	execs []string
}

func newFakeDB() *fakeDB { return &fakeDB{rows: map[string][]int{}, next: map[string]int{}} }

func (f *fakeDB) insertID(_ context.Context, sql string) (int, error) {
	table := strings.Fields(sql)[2] // INSERT INTO table …
	f.next[table]++
	f.rows[table] = append(f.rows[table], f.next[table])
	f.execs = append(f.execs, sql)
	return f.next[table], nil
}

func (f *fakeDB) exec(_ context.Context, sql string) error {
	words := strings.Fields(sql)
	table := words[1] // UPDATE table …
	if words[0] == "DELETE" {
		table = words[2] // DELETE FROM table …
	}
	var id int
	if _, err := fmt.Sscanf(sql[strings.LastIndex(sql, "WHERE id = "):], "WHERE id = %d", &id); err != nil {
		return fmt.Errorf("no WHERE id in %q", sql)
	}
	i := slices.Index(f.rows[table], id)
	if i < 0 {
		return fmt.Errorf("%s has no row %d", table, id)
	}
	switch {
	case words[0] == "DELETE":
		f.rows[table] = slices.Delete(f.rows[table], i, i+1)
	case strings.Contains(sql, "SET id = id + 1000"):
		f.rows[table][i] += 1000
	}
	f.execs = append(f.execs, sql)
	return nil
}

func stepWorkload(t *testing.T, seed uint64, ticks int) (db *fakeDB, shown []string) {
	t.Helper()
	db = newFakeDB()
	w := newWorkload(db, seed, func(sql string) { shown = append(shown, sql) })
	for range ticks {
		if err := w.step(context.Background()); err != nil {
			t.Fatalf("tick %d: %v", w.tick, err)
		}
	}
	return db, shown
}

func TestWorkloadCoversEveryKindOfChange(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3, 42} {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			// Three ticks are the shortest run that holds every kind of change.
			db, shown := stepWorkload(t, seed, 3)
			count := func(prefix string) int {
				n := 0
				for _, s := range db.execs {
					if strings.HasPrefix(s, prefix) {
						n++
					}
				}
				return n
			}
			for _, prefix := range []string{"INSERT INTO customers", "INSERT INTO orders", "UPDATE orders SET status", "DELETE FROM orders"} {
				if count(prefix) == 0 {
					t.Errorf("no %q in three ticks:\n%s", prefix, strings.Join(db.execs, "\n"))
				}
			}
			if n := count("UPDATE customers SET id = id + 1000"); n != 1 {
				t.Errorf("%d primary key changes in three ticks, want 1", n)
			}
			if !slices.Equal(shown, db.execs) {
				t.Errorf("shown statements differ from those run:\nshown %q\n  ran %q", shown, db.execs)
			}
		})
	}
}

func TestWorkloadChangesTheKeyOnce(t *testing.T) {
	db, _ := stepWorkload(t, 7, 30)
	n := 0
	for _, s := range db.execs {
		if strings.Contains(s, "SET id = id + 1000") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d primary key changes in 30 ticks, want 1", n)
	}
}

func TestWorkloadIsSeeded(t *testing.T) {
	a, _ := stepWorkload(t, 5, 12)
	b, _ := stepWorkload(t, 5, 12)
	if !slices.Equal(a.execs, b.execs) {
		t.Errorf("two runs with one seed differ:\n%q\n%q", a.execs, b.execs)
	}
	c, _ := stepWorkload(t, 6, 12)
	if slices.Equal(a.execs, c.execs) {
		t.Error("seeds 5 and 6 ran the same statements")
	}
}

func TestQuote(t *testing.T) {
	if got, want := quote("O'Brien"), "'O''Brien'"; got != want {
		t.Errorf("quote = %s, want %s", got, want)
	}
}
