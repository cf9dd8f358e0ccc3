package postgres

import (
	"math"
	"testing"
	"time"
)

func TestSequenceIsDebeziums(t *testing.T) {
	for _, tc := range []struct {
		last, lsn LSN
		want      string
	}{
		{0, 5, `[null,"5"]`},
		{24023119, 24023128, `["24023119","24023128"]`},
		{math.MaxUint64, math.MaxUint64, `["18446744073709551615","18446744073709551615"]`},
	} {
		if got := sequence(tc.last, tc.lsn); got != tc.want {
			t.Errorf("sequence(%d, %d) = %s, want %s", tc.last, tc.lsn, got, tc.want)
		}
	}
}

// TestSourceBlocksFollowTheirTransaction: source blocks reuse what one table's changes in one transaction
// share; each must still carry its own position, and the next transaction (or table) its own values.
func TestSourceBlocksFollowTheirTransaction(t *testing.T) {
	st := &streamState{cfg: &Config{TopicPrefix: "p", DBName: "db"}}
	begin := func(xid uint32, commit time.Time, lastCommit LSN) {
		st.xid, st.commitTime, st.lastCommit = xid, commit, lastCommit
	}
	check := func(what string, lsn LSN, table string, xid uint32, commit time.Time, lastCommit LSN) {
		t.Helper()
		src := st.sourceInfo(lsn, "public", table, true)
		want := map[string]any{"lsn": int64(lsn), "sequence": sequence(lastCommit, lsn), "table": table,
			"txId": int64(xid), "ts_us": commit.UnixMicro(), "ts_ms": commit.UnixMilli(), "name": "p", "db": "db"}
		for field, v := range want {
			if got := src.Values[src.Schema.FieldIndex(field)]; got != v {
				t.Errorf("%s: %s = %v, want %v", what, field, got, v)
			}
		}
		src.Values[src.Schema.FieldIndex("table")] = "scribbled" // a transform may rewrite its copy
	}
	t1 := time.UnixMicro(1_700_000_000_123_456)
	begin(7, t1, 100)
	check("first change", 110, "a", 7, t1, 100)
	check("second change", 120, "a", 7, t1, 100)
	check("other table", 130, "b", 7, t1, 100)
	t2 := t1.Add(time.Second)
	begin(8, t2, 140)
	check("next transaction", 150, "b", 8, t2, 140)
}
