"""Tests for mariadb_side_by_side.py: python3 -m unittest discover -s e2e/debezium -p '*_test.py'"""
import contextlib
import io
import json
import os
import tempfile
import unittest

import mariadb_side_by_side as helper

KEY = '["mdb-golden",{"server":"mdb1"}]'
# Debezium inside the marker's transaction: its start, two events and one row delivered.
DEBEZIUM = {"ts_sec": 5, "file": "mariadb-bin.000002", "pos": 416946, "gtids": "0-1-611", "row": 1, "server_id": 1, "event": 2}
# cdcd after that transaction's commit.
CDCD = {"server_id": 1, "gtids": "0-1-612", "file": "mariadb-bin.000002", "pos": 417178, "ts_sec": 5}


def history_line(offset, position, ddl="CREATE TABLE t (id INT)"):
    doc = {"source": {"server": "mdb1"}, "position": position, "ts_ms": 1, "databaseName": "db", "ddl": ddl, "tableChanges": []}
    return json.dumps({"topic": "mdb1-schema-history", "partition": 0, "offset": offset, "key": None,
                       "value": json.dumps(doc, indent=2), "headers": [], "timestamp": 0}) + "\n"


def event_line(topic, snapshot, schemas=True, op="c"):
    payload = {"before": None, "after": {"id": 1, "ü": "ü"}, "source": {"version": "3.5.0.Final", "snapshot": snapshot}, "op": op}
    value = {"schema": {"type": "struct"}, "payload": payload} if schemas else payload
    return json.dumps({"topic": topic, "partition": 0, "offset": 0, "key": "{}", "value": json.dumps(value, ensure_ascii=False),
                       "headers": [], "timestamp": 0}, ensure_ascii=False) + "\n"


TOMBSTONE = '{"topic":"mdb1.db.t","partition":0,"offset":1,"key":"{}","value":null,"headers":[],"timestamp":0}\n'
SNAPSHOT_POSITION = {"ts_sec": 1, "file": "mariadb-bin.000002", "pos": 395861, "gtids": "0-1-584", "snapshot": "INITIAL"}
STREAMED_POSITION = {"ts_sec": 2, "file": "mariadb-bin.000002", "pos": 414684, "gtids": "0-1-601", "server_id": 1, "event": 1}


class HelperTest(unittest.TestCase):
    def write(self, text):
        f = tempfile.NamedTemporaryFile("w", encoding="utf-8", suffix=".jsonl", delete=False)
        f.write(text)
        f.close()
        self.addCleanup(os.unlink, f.name)
        return f.name

    def write_offsets(self, entries):
        return self.write(json.dumps([{"key": k, "value": None if v is None else json.dumps(v)} for k, v in entries.items()]))

    def test_snapshot_offset_is_the_snapshot_records_position_without_the_snapshot_flag(self):
        history = self.write(history_line(0, SNAPSHOT_POSITION) + history_line(1, dict(SNAPSHOT_POSITION, ts_sec=9))
                             + history_line(2, STREAMED_POSITION))
        self.assertEqual(helper.snapshot_offset(history), '{"file":"mariadb-bin.000002","pos":395861,"gtids":"0-1-584"}')

    def test_snapshot_history_is_the_snapshot_records_values_only(self):
        history = self.write(history_line(0, SNAPSHOT_POSITION, "DROP TABLE a") + history_line(1, STREAMED_POSITION, "DROP TABLE b"))
        values, _ = helper.snapshot_history(history)
        self.assertEqual(len(values), 1)
        self.assertIn('"ddl": "DROP TABLE a"', values[0])

    def test_snapshot_records_at_two_positions_are_refused(self):
        history = self.write(history_line(0, SNAPSHOT_POSITION) + history_line(1, dict(SNAPSHOT_POSITION, pos=1)))
        with self.assertRaises(SystemExit):
            helper.snapshot_history(history)

    def test_a_history_without_snapshot_records_is_refused(self):
        with self.assertRaises(SystemExit):
            helper.snapshot_offset(self.write(history_line(0, STREAMED_POSITION)))

    def test_streamed_keeps_stream_records_and_tombstones_byte_for_byte(self):
        kept = [event_line("mdb1.db.t", "false"), TOMBSTONE, event_line("mdb1.db.t", "false", schemas=False)]
        capture = self.write(event_line("mdb1.db.t", "first", op="r") + kept[0] + TOMBSTONE
                             + event_line("mdb1.db.t", "last", schemas=False, op="r") + kept[2] + event_line("mdb1", "true"))
        self.assertEqual(helper.select(capture, streamed=True), kept)

    def test_select_renames_the_topic_and_keeps_the_value(self):
        capture = self.write(history_line(0, SNAPSHOT_POSITION) + history_line(7, STREAMED_POSITION))
        (line,) = helper.select(capture, streamed=True, topic="renamed")
        record, original = json.loads(line), json.loads(history_line(7, STREAMED_POSITION))
        self.assertEqual(record["topic"], "renamed")
        self.assertEqual(record["value"], original["value"])
        self.assertEqual(record["offset"], 7)

    def test_select_database_drops_the_schema_changes_of_other_databases_only(self):
        def schema_change(database, schemas=True):
            payload = {"source": {"snapshot": "true"}, "databaseName": database, "ddl": "DROP TABLE x"}
            value = {"schema": {}, "payload": payload} if schemas else payload
            return json.dumps({"topic": "mdb1", "partition": 0, "offset": 0, "key": "{}", "value": json.dumps(value),
                               "headers": [], "timestamp": 0}) + "\n"
        kept = [schema_change("db"), schema_change(""), event_line("mdb1.db.t", "false"), TOMBSTONE, schema_change("db", schemas=False)]
        capture = self.write(kept[0] + schema_change("other") + kept[1] + kept[2] + kept[3]
                             + schema_change("other", schemas=False) + kept[4])
        self.assertEqual(helper.select(capture, database="db"), kept)
        history = self.write(history_line(0, SNAPSHOT_POSITION))  # databaseName "db"
        self.assertEqual(helper.select(history, database="other"), [])

    def test_select_through_drops_what_comes_after_the_position_with_its_tombstones(self):
        def at(pos, op="c", value=True):
            source = {"snapshot": "false", "file": "mariadb-bin.000002", "pos": pos}
            doc = json.dumps({"source": source, "op": op}) if value else None
            return json.dumps({"topic": "mdb1.db.t", "partition": 0, "offset": pos, "key": "{}", "value": doc,
                               "headers": [], "timestamp": 0}) + "\n"
        kept = [at(100, "d"), at(101, value=False), at(200), history_line(0, dict(STREAMED_POSITION, pos=150))]
        capture = self.write(kept[0] + kept[1] + kept[2] + at(201, "d") + at(202, value=False)
                             + kept[3] + history_line(1, dict(STREAMED_POSITION, pos=250))
                             + history_line(2, dict(STREAMED_POSITION, file="mariadb-bin.000003", pos=4)))
        self.assertEqual(helper.select(capture, through=("mariadb-bin.000002", 200)), kept)

    def test_end_position_is_the_marker_record_s(self):
        marker = json.dumps({"source": {"file": "mariadb-bin.000002", "pos": 417151}, "after": {"note": "the-end"}})
        with_gtid = self.write(json.dumps({"topic": "m", "partition": 0, "offset": 0, "key": None, "headers": [], "timestamp": 0,
                                           "value": json.dumps({"schema": {}, "payload": {"source": {"file": "f.1", "pos": 4, "gtid": "0-1-9"}, "x": "the-end"}})}) + "\n")
        self.assertEqual(helper.end_position(with_gtid, "the-end"), "f.1:4 0-1-9")
        capture = self.write(event_line("mdb1.db.t", "false") + json.dumps(
            {"topic": "mdb1.db.m", "partition": 0, "offset": 0, "key": "{}", "value": marker, "headers": [], "timestamp": 0}) + "\n")
        self.assertEqual(helper.end_position(capture, "the-end"), "mariadb-bin.000002:417151 None")
        self.assertEqual(helper.parse_position("mariadb-bin.000002:417151"), ("mariadb-bin.000002", 417151))
        with self.assertRaises(SystemExit):
            helper.end_position(capture, "missing")

    def side_by_side(self, a, b, end_gtid=None):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = helper.side_by_side(self.write_offsets(a), self.write_offsets(b), end_gtid)
        return code, out.getvalue()

    def test_both_stopped_at_the_end_marker_s_transaction(self):
        self.assertEqual(self.side_by_side({KEY: DEBEZIUM}, {KEY: CDCD}, end_gtid="0-1-612")[0], 0)

    def test_cdcd_past_the_end_marker_is_not_comparable(self):
        code, out = self.side_by_side({KEY: DEBEZIUM}, {KEY: dict(CDCD, gtids="0-1-650", pos=500000)}, end_gtid="0-1-612")
        self.assertEqual(code, 3, out)
        self.assertIn("cdcd's offset", out)

    def test_debezium_past_the_end_marker_is_not_comparable(self):
        debezium_on = dict(DEBEZIUM, gtids="0-1-640", pos=480000, event=1)
        del debezium_on["row"]
        code, out = self.side_by_side({KEY: debezium_on}, {KEY: dict(CDCD, gtids="0-1-650", pos=500000)}, end_gtid="0-1-612")
        self.assertEqual(code, 3, out)
        self.assertIn("Debezium's offset", out)

    def test_a_wrong_shape_outranks_a_disturbed_run(self):
        code, _ = self.side_by_side({KEY: DEBEZIUM}, {KEY: dict(CDCD, gtids="0-1-650", event=1)}, end_gtid="0-1-612")
        self.assertEqual(code, 1)

    def test_a_commit_boundary_past_debezium_is_the_known_difference(self):
        code, out = self.side_by_side({KEY: DEBEZIUM}, {KEY: CDCD})
        self.assertEqual(code, 0, out)
        self.assertIn("(known: transaction boundary)", out)
        self.assertNotIn("<-- differs", out)

    def test_cdcd_mid_transaction_fails(self):
        self.assertEqual(self.side_by_side({KEY: DEBEZIUM}, {KEY: dict(CDCD, event=1)})[0], 1)

    def test_cdcd_at_the_start_of_the_transaction_debezium_was_inside_fails(self):
        self.assertEqual(self.side_by_side({KEY: DEBEZIUM}, {KEY: dict(CDCD, pos=DEBEZIUM["pos"], gtids="0-1-611")})[0], 1)

    def test_cdcd_at_debezium_s_boundary_passes(self):
        at_boundary = {k: v for k, v in DEBEZIUM.items() if k not in ("event", "row")}
        self.assertEqual(self.side_by_side({KEY: at_boundary}, {KEY: at_boundary})[0], 0)

    def test_cdcd_behind_in_a_gtid_domain_fails(self):
        code, out = self.side_by_side({KEY: dict(DEBEZIUM, gtids="0-1-611,1-2-40")}, {KEY: dict(CDCD, gtids="0-1-612,1-2-39")})
        self.assertEqual(code, 1, out)
        self.assertIn("domain 1", out)

    def test_cdcd_in_an_earlier_file_fails(self):
        self.assertEqual(self.side_by_side({KEY: DEBEZIUM}, {KEY: dict(CDCD, file="mariadb-bin.000001", pos=999999)})[0], 1)

    def test_other_fields_are_shown_as_differing(self):
        code, out = self.side_by_side({KEY: DEBEZIUM}, {KEY: dict(CDCD, server_id=2)})
        self.assertEqual(code, 0, out)  # compare -offsets judges fields other than the position
        self.assertIn("<-- differs", out)

    def test_a_key_on_one_side_only_fails(self):
        self.assertEqual(self.side_by_side({KEY: DEBEZIUM}, {})[0], 1)


if __name__ == "__main__":
    unittest.main()
