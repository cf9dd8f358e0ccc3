package capture

import "testing"

// TestCompareTransactionRecords: transaction-topic records and offsets written by two runs compare equal
// when they differ only in what differs between two databases (ids, times) and in the random names (and
// so the HashMap places) Debezium gives logical decoding messages; a different count or a different order
// of tables still shows.
func TestCompareTransactionRecords(t *testing.T) {
	const msg = "io.debezium.connector.postgresql.LogicalDecodingMessageMonitor$LogicalDecodingMessageId@"
	end := func(id, ts, collections string) string {
		return `{"status":"END","id":"` + id + `","event_count":3,"data_collections":[` + collections + `],"ts_ms":` + ts + `}`
	}
	offset := func(keys string) string { return `{"transaction_id":"7",` + keys + `"lsn":100}` }
	for _, tc := range []struct {
		name   string
		topic  string
		a, b   string
		aKey   string
		bKey   string
		equal  bool
		replay bool
	}{{
		name: "END replayed", topic: "pg1.transaction", replay: true, equal: true,
		aKey: `{"id":"7:100"}`, bKey: `{"id":"99:300"}`,
		a: end("7:100", "1", `{"data_collection":"`+msg+`72fe02b6","event_count":1},{"data_collection":"public.b","event_count":1},{"data_collection":"public.a","event_count":1}`),
		b: end("99:300", "2", `{"data_collection":"public.b","event_count":1},{"data_collection":"public.a","event_count":1},{"data_collection":"`+msg+`1d2c","event_count":1}`),
	}, {
		name: "END with tables in another order", topic: "pg1.transaction", replay: true,
		aKey: `{"id":"7:100"}`, bKey: `{"id":"7:100"}`,
		a: end("7:100", "1", `{"data_collection":"public.b","event_count":1},{"data_collection":"public.a","event_count":2}`),
		b: end("7:100", "1", `{"data_collection":"public.a","event_count":2},{"data_collection":"public.b","event_count":1}`),
	}, {
		name: "END of the same database", topic: "pg1.transaction",
		aKey: `{"id":"7:100"}`, bKey: `{"id":"99:300"}`,
		a: end("7:100", "1", ``), b: end("7:100", "1", ``),
	}, {
		name: "offset", topic: OffsetsTopic, replay: true, equal: true,
		a: offset(`"transaction_data_collection_order_` + msg + `72fe02b6":1,"transaction_data_collection_order_public.a":2,`),
		b: offset(`"transaction_data_collection_order_public.a":2,"transaction_data_collection_order_` + msg + `5":1,`),
	}, {
		name: "offset with another count", topic: OffsetsTopic, replay: true,
		a: offset(`"transaction_data_collection_order_public.a":2,`), b: offset(`"transaction_data_collection_order_public.a":3,`),
	}} {
		t.Run(tc.name, func(t *testing.T) {
			mode := SameDB
			if tc.replay {
				mode = Replay
			}
			diffs := Compare([]Record{record(tc.topic, 0, tc.aKey, tc.a)}, []Record{record(tc.topic, 0, tc.bKey, tc.b)}, mode)
			if (len(diffs) == 0) != tc.equal {
				t.Errorf("differences %v, want equal=%v", diffs, tc.equal)
			}
		})
	}
}
