"""Tests for offsets_side_by_side.py: python3 -m unittest discover -s e2e/debezium -p '*_test.py'"""
import contextlib
import io
import json
import os
import tempfile
import unittest

import offsets_side_by_side

KEY = '["pg-golden",{"server":"pg1"}]'
DEBEZIUM = {"lsn_proc": 100, "messageType": "MESSAGE", "lsn_commit": 100, "lsn": 172, "txId": 7, "ts_usec": 5}


class SideBySideTest(unittest.TestCase):
    def check(self, a, b, same_db=True):
        paths = []
        for entries in (a, b):
            f = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
            json.dump([{"key": k, "value": None if v is None else json.dumps(v)} for k, v in entries.items()], f)
            f.close()
            self.addCleanup(os.unlink, f.name)
            paths.append(f.name)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = offsets_side_by_side.main(paths[0], paths[1], same_db)
        return code, out.getvalue()

    def test_commit_boundary_ahead_of_debezium_is_the_known_difference(self):
        code, out = self.check({KEY: DEBEZIUM}, {KEY: dict(DEBEZIUM, messageType="COMMIT", lsn_proc=200, lsn_commit=200, lsn=200)})
        self.assertEqual(code, 0, out)
        self.assertIn("(known: transaction boundary)", out)

    def test_unequal_commit_lsns_fail(self):
        code, out = self.check({KEY: DEBEZIUM}, {KEY: dict(DEBEZIUM, messageType="COMMIT", lsn_proc=200, lsn_commit=190, lsn=200)})
        self.assertEqual(code, 1, out)

    def test_commit_behind_debezium_fails_on_one_database_only(self):
        behind = dict(DEBEZIUM, messageType="COMMIT", lsn_proc=50, lsn_commit=50, lsn=50)
        self.assertEqual(self.check({KEY: DEBEZIUM}, {KEY: behind})[0], 1)
        self.assertEqual(self.check({KEY: DEBEZIUM}, {KEY: behind}, same_db=False)[0], 0)

    def test_a_key_on_one_side_only_fails(self):
        self.assertEqual(self.check({KEY: DEBEZIUM}, {})[0], 1)

    def test_other_fields_are_shown_as_differing(self):
        code, out = self.check({KEY: DEBEZIUM}, {KEY: dict(DEBEZIUM, txId=8)})
        self.assertIn("<-- differs", out)

    def test_replay_labels_the_other_databases_positions(self):
        code, out = self.check({KEY: DEBEZIUM}, {KEY: dict(DEBEZIUM, txId=8)}, same_db=False)
        self.assertIn("(replay: another database)", out)
        self.assertNotIn("<-- differs", out)


if __name__ == "__main__":
    unittest.main()
