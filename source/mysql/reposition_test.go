package mysql

import (
	"strings"
	"testing"
)

// TestParseReposition checks a set-binlog-position signal's data as Debezium's SetBinlogPositionSignal
// does: a file with a position, or a GTID set, and nothing else.
func TestParseReposition(t *testing.T) {
	for _, c := range []struct {
		data, refused string // refused: a part of the error, "" when accepted
	}{
		{`{"binlog_filename": "mariadb-bin.000003", "binlog_position": 1234}`, ""},
		{`{"gtid_set": "0-1-100,1-2-5"}`, ""},
		{`{"gtid_set": "0-1-100\n"}`, ""},
		{``, "has no data"},
		{`{}`, "give binlog_filename and binlog_position, or gtid_set"},
		{`{"gtid_set": "0-1-1", "binlog_position": 4}`, "not both"},
		{`{"binlog_position": 4}`, "needs binlog_filename"},
		{`{"binlog_filename": "mariadb-bin.000003"}`, "needs binlog_position"},
		{`{"binlog_filename": "mariadb-bin.000003", "binlog_position": -1}`, "negative"},
		{`{"binlog_filename": "../etc/passwd", "binlog_position": 4}`, "not a binlog file name"},
		{`{"binlog_filename": "mariadb-bin.3", "binlog_position": 4}`, "not a binlog file name"},
		{`{"binlog_filename": "mariadb-bin.000003", "binlog_position": "4"}`, "is not {"},
		{`[1]`, "is not {"},
	} {
		_, err := parseReposition(c.data)
		switch {
		case c.refused == "" && err != nil:
			t.Errorf("%s: refused: %v", c.data, err)
		case c.refused != "" && (err == nil || !strings.Contains(err.Error(), c.refused)):
			t.Errorf("%s: got %v, want an error saying %q", c.data, err, c.refused)
		}
	}
}

func TestSQLString(t *testing.T) {
	if got := sqlString(`a'b\c`); got != `'a''b\\c'` {
		t.Fatalf("sqlString = %s", got)
	}
}
