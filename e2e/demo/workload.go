package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/jackc/pgx/v5"
)

// schemaSQL creates the sample tables. REPLICA IDENTITY FULL makes PostgreSQL send the whole old
// row with updates and deletes, so the printed updates can show before → after.
var schemaSQL = []string{
	`CREATE TABLE customers (id serial PRIMARY KEY, name text NOT NULL, email text, tier text)`,
	`CREATE TABLE orders (id serial PRIMARY KEY, customer_id int NOT NULL, amount numeric(10,2), status text)`,
	`ALTER TABLE customers REPLICA IDENTITY FULL`,
	`ALTER TABLE orders REPLICA IDENTITY FULL`,
}

// database is what the workload needs from a PostgreSQL connection; tests stand in a fake.
type database interface {
	// exec runs one statement and returns once it has committed.
	exec(ctx context.Context, sql string) error
	// insertID runs one INSERT … RETURNING id and returns that id.
	insertID(ctx context.Context, sql string) (int, error)
}

// pgDatabase runs the workload on a real connection; each statement commits on its own.
type pgDatabase struct{ conn *pgx.Conn }

var _ database = pgDatabase{}

func (d pgDatabase) exec(ctx context.Context, sql string) error {
	_, err := d.conn.Exec(ctx, sql)
	return err
}

func (d pgDatabase) insertID(ctx context.Context, sql string) (int, error) {
	var id int
	err := d.conn.QueryRow(ctx, sql).Scan(&id)
	return id, err
}

// keyChangeTick is the tick at which the first customer's primary key changes, early enough to
// fall inside even a short demo run.
const keyChangeTick = 2

var (
	firstNames = []string{"Ada", "Grace", "Edsger", "Barbara", "Donald", "Frances", "Ken", "Radia"}
	lastNames  = []string{"Lovelace", "Hopper", "Dijkstra", "Liskov", "Knuth", "Allen", "Thompson", "Perlman"}
	tiers      = []string{"bronze", "silver", "gold"}
	// nextStatus is an order's life: an update moves it one step on, and shipped orders stay put.
	nextStatus = map[string]string{"new": "paid", "paid": "shipped"}
)

type order struct {
	id     int
	status string
}

// workload is a small, seeded stream of changes on the sample schema. Each tick inserts a
// customer; odd ticks insert an order and even ticks move one on; every third tick deletes the
// oldest order; tick keyChangeTick changes a customer's primary key. Only the choice of names,
// amounts and rows depends on the seed, so every run covers every kind of change.
type workload struct {
	db        database
	rng       *rand.Rand
	show      func(sql string) // called before each statement runs
	tick      int
	customers []int
	orders    []order // oldest first
}

func newWorkload(db database, seed uint64, show func(string)) *workload {
	return &workload{db: db, rng: rand.New(rand.NewPCG(seed, seed)), show: show}
}

// step runs one tick's statements, each in its own transaction.
func (w *workload) step(ctx context.Context) error {
	w.tick++
	if err := w.insertCustomer(ctx); err != nil {
		return err
	}
	if w.tick == keyChangeTick {
		i := w.rng.IntN(len(w.customers))
		id := w.customers[i]
		if err := w.run(ctx, fmt.Sprintf("UPDATE customers SET id = id + 1000 WHERE id = %d", id)); err != nil {
			return err
		}
		w.customers[i] = id + 1000
	}
	if w.tick%2 == 1 || len(w.orders) == 0 {
		if err := w.insertOrder(ctx); err != nil {
			return err
		}
	} else if err := w.advanceOrder(ctx); err != nil {
		return err
	}
	if w.tick%3 == 0 && len(w.orders) > 0 {
		oldest := w.orders[0]
		if err := w.run(ctx, fmt.Sprintf("DELETE FROM orders WHERE id = %d", oldest.id)); err != nil {
			return err
		}
		w.orders = w.orders[1:]
	}
	return nil
}

func (w *workload) insertCustomer(ctx context.Context) error {
	first, last := pick(w.rng, firstNames), pick(w.rng, lastNames)
	sql := fmt.Sprintf("INSERT INTO customers (name, email, tier) VALUES (%s, %s, %s) RETURNING id",
		quote(first+" "+last), quote(strings.ToLower(first+"@"+last+".example")), quote(pick(w.rng, tiers)))
	id, err := w.runInsert(ctx, sql)
	if err != nil {
		return err
	}
	w.customers = append(w.customers, id)
	return nil
}

func (w *workload) insertOrder(ctx context.Context) error {
	customer := pick(w.rng, w.customers)
	cents := 500 + w.rng.IntN(20000)
	sql := fmt.Sprintf("INSERT INTO orders (customer_id, amount, status) VALUES (%d, %d.%02d, 'new') RETURNING id",
		customer, cents/100, cents%100)
	id, err := w.runInsert(ctx, sql)
	if err != nil {
		return err
	}
	w.orders = append(w.orders, order{id, "new"})
	return nil
}

// advanceOrder moves a random order that is not yet shipped to its next status; with every
// order shipped it changes an amount instead, so an even tick always updates an order.
func (w *workload) advanceOrder(ctx context.Context) error {
	var open []int
	for i, o := range w.orders {
		if nextStatus[o.status] != "" {
			open = append(open, i)
		}
	}
	if len(open) == 0 {
		o := pick(w.rng, w.orders)
		return w.run(ctx, fmt.Sprintf("UPDATE orders SET amount = amount + 1 WHERE id = %d", o.id))
	}
	o := &w.orders[pick(w.rng, open)]
	status := nextStatus[o.status]
	if err := w.run(ctx, fmt.Sprintf("UPDATE orders SET status = %s WHERE id = %d", quote(status), o.id)); err != nil {
		return err
	}
	o.status = status
	return nil
}

func (w *workload) run(ctx context.Context, sql string) error {
	w.show(sql)
	if err := w.db.exec(ctx, sql); err != nil {
		return fmt.Errorf("workload: %s: %w", sql, err)
	}
	return nil
}

func (w *workload) runInsert(ctx context.Context, sql string) (int, error) {
	w.show(sql)
	id, err := w.db.insertID(ctx, sql)
	if err != nil {
		return 0, fmt.Errorf("workload: %s: %w", sql, err)
	}
	return id, nil
}

func pick[T any](rng *rand.Rand, from []T) T { return from[rng.IntN(len(from))] }

// quote makes a SQL string literal; the workload inlines its values so that the statement it
// shows is exactly the one it runs.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
