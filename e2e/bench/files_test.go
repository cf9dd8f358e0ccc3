package main

import (
	"slices"
	"testing"
)

func TestOutFilesKeepPostgresNamesAndTagMariaDB(t *testing.T) {
	pg, mdb := outFiles{dir: "/r", kind: "postgres"}, outFiles{dir: "/r", kind: "mariadb"}
	for name, want := range map[string][2]string{
		"results.json":   {"/r/results.json", "/r/results-mariadb.json"},
		"cdcd.cpu.pprof": {"/r/cdcd.cpu.pprof", "/r/cdcd-mariadb.cpu.pprof"},
		"connect":        {"/r/connect", "/r/connect-mariadb"},
	} {
		if got := pg.path(name); got != want[0] {
			t.Errorf("postgres %s: %s, want %s", name, got, want[0])
		}
		if got := mdb.path(name); got != want[1] {
			t.Errorf("mariadb %s: %s, want %s", name, got, want[1])
		}
	}
}

// The pid files are connect.sh's: PID_FILE of its postgres and mariadb instances.
func TestConnectScriptPidFileIsConnectShs(t *testing.T) {
	for instance, want := range map[string]string{
		"postgres": "/h/debezium/connect.pid",
		"mariadb":  "/h/debezium/connect-mariadb.pid",
	} {
		if got := (connectScript{home: "/h", instance: instance}).pidFile(); got != want {
			t.Errorf("%s: %s, want %s", instance, got, want)
		}
	}
}

func TestWriterCommitTimesMatchSeenInsertsByID(t *testing.T) {
	committed := []change{{ID: 1, K: 1, Op: 'c'}, {ID: 2, K: 2, Op: 'c'}, {ID: 3, K: 3, Op: 'c'}}
	committedMs := []int64{100, 100, 250}
	seen := []change{{ID: 2, K: 2, Op: 'c'}, {ID: 3, K: 3, Op: 'c'}, {ID: 9, K: 9, Op: 'c'}, {ID: 1, K: 1, Op: 'c'}}
	appendMs := []int64{105, 260, 270, 110}
	got := writerCommitTimes(committed, committedMs, seen, appendMs)
	// Id 9 was never committed: its own append time, a latency of zero.
	if want := []int64{100, 250, 270, 100}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestParseFlagsDatabases(t *testing.T) {
	o, err := parseFlags(nil)
	if err != nil || !slices.Equal(o.databases, []string{"postgres", "mariadb"}) {
		t.Errorf("default databases %v (%v), want both", o.databases, err)
	}
	if o, err := parseFlags([]string{"-databases", "mariadb"}); err != nil || !slices.Equal(o.databases, []string{"mariadb"}) {
		t.Errorf("-databases mariadb: %v (%v)", o.databases, err)
	}
	if _, err := parseFlags([]string{"-databases", "postgres,mysql"}); err == nil {
		t.Error("-databases with an unknown database accepted")
	}
}
