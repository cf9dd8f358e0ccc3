package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/cdcd/cdcd/e2e/testenv"
	"github.com/cdcd/cdcd/source/postgres/slotguard"
	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

func TestSlotsCommandUsage(t *testing.T) {
	for _, args := range [][]string{nil, {"list"}, {"drop", "--dsn", "postgres://x@h/db"}, {"frob", "--dsn", "postgres://x@h/db"}, {"list", "--nope"}} {
		if err := slotsCommand(args, strings.NewReader(""), &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "cdcd slots list") {
			t.Errorf("%v: %v, want the usage", args, err)
		}
	}
}

func TestSlotsListAndDrop(t *testing.T) {
	dsn := testenv.NewPostgresDB(t)
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	idle, held := fmt.Sprintf("cli_idle_%08x", rand.Uint32()), fmt.Sprintf("cli_held_%08x", rand.Uint32())
	for _, s := range []string{idle, held} {
		if _, err := conn.Exec(ctx, "SELECT pg_create_logical_replication_slot($1, 'pgoutput')", s); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := conn.Exec(ctx, "CREATE PUBLICATION p"); err != nil {
		t.Fatal(err)
	}
	repl, err := pgconn.Connect(ctx, dsn+"&replication=database")
	if err != nil {
		t.Fatal(err)
	}
	defer repl.Close(context.Background())
	if err := pglogrepl.StartReplication(ctx, repl, held, 0, pglogrepl.StartReplicationOptions{Mode: pglogrepl.LogicalReplication, PluginArgs: []string{"proto_version '1'", "publication_names 'p'"}}); err != nil {
		t.Fatal(err)
	}
	exists := func(name string) bool {
		var ok bool
		if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_replication_slots WHERE slot_name = $1)", name).Scan(&ok); err != nil {
			t.Fatal(err)
		}
		return ok
	}

	var out bytes.Buffer
	if err := slotsCommand([]string{"list", "--dsn", dsn}, nil, &out); err != nil {
		t.Fatal(err)
	}
	listed := map[string][]string{}
	for _, line := range strings.Split(out.String(), "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			listed[f[0]] = f
		}
	}
	if f := listed[idle]; !strings.HasPrefix(out.String(), "SLOT ") || len(f) < 5 || f[1] != "logical" || f[3] != "pgoutput" || f[4] != "false" {
		t.Errorf("list:\n%s", out.String())
	}
	if f := listed[held]; len(f) < 5 || f[4] != "true" {
		t.Errorf("held slot not listed as active:\n%s", out.String())
	}

	out.Reset()
	if err := slotsCommand([]string{"drop", "--dsn", dsn, idle}, strings.NewReader("n\n"), &out); err != nil || !exists(idle) {
		t.Fatalf("answered no: err %v, exists %v", err, exists(idle))
	}
	if !strings.Contains(out.String(), "[y/N]") || !strings.Contains(out.String(), "Not dropped.") {
		t.Errorf("prompt:\n%s", out.String())
	}
	if err := slotsCommand([]string{"drop", "--dsn", dsn, held, "--yes"}, nil, &out); !errors.Is(err, slotguard.ErrSlotActive) || !exists(held) {
		t.Fatalf("active slot: err %v, exists %v", err, exists(held))
	}
	if err := slotsCommand([]string{"drop", "--dsn", dsn, idle}, strings.NewReader("y\n"), &out); err != nil || exists(idle) {
		t.Fatalf("answered yes: err %v, exists %v", err, exists(idle))
	}
	if err := slotsCommand([]string{"drop", "--yes", "--dsn", dsn, idle}, nil, &out); !errors.Is(err, slotguard.ErrSlotNotFound) {
		t.Errorf("missing slot: %v", err)
	}
}
