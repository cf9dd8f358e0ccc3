#!/usr/bin/env python3
"""Prints two offsets JSON files (e2e/debezium/OffsetsDump.java output) side by side and checks the one
difference cdcd is known to have: it records offsets at transaction boundaries, so its PostgreSQL offset is
messageType COMMIT with lsn = lsn_proc = lsn_commit (the commit's end LSN), where Debezium records the
position of the last event it processed.

    offsets_side_by_side.py [--replay] DEBEZIUM.json CDCD.json

Every other field is left to `compare -offsets`; this script only says whether cdcd's (B's) position
fields have the shape the known difference allows: COMMIT, three equal LSNs and, on one database (not
with --replay, where the two runs had different databases), not behind Debezium's last processed event.
Exit status 1 otherwise.
"""
import json
import sys

POSITION_FIELDS = ("lsn", "lsn_proc", "lsn_commit", "messageType")
# What `compare -mode replay -offsets` blanks: positions and times of two different databases.
REPLAY_FIELDS = ("txId", "ts_usec", "transaction_id")


def load(path):
    with open(path) as f:
        return {e["key"]: (None if e["value"] is None else json.loads(e["value"])) for e in json.load(f)}


def main(path_a, path_b, same_db):
    a, b = load(path_a), load(path_b)
    problems = []
    for key in sorted(set(a) | set(b)):
        va, vb = a.get(key), b.get(key)
        print(f"  offset key {key}")
        fields = list(va or {}) + [k for k in (vb or {}) if k not in (va or {})]
        print(f"    {'field':<14} {'debezium':<24} {'cdcd':<24}")
        for field in fields:
            fa = "-" if va is None or field not in va else json.dumps(va[field])
            fb = "-" if vb is None or field not in vb else json.dumps(vb[field])
            if fa == fb:
                mark = ""
            elif field in POSITION_FIELDS:
                mark = "  (known: transaction boundary)"
            elif not same_db and field in REPLAY_FIELDS:
                mark = "  (replay: another database)"
            else:
                mark = "  <-- differs"
            print(f"    {field:<14} {fa:<24} {fb:<24}{mark}")
        if va is None or vb is None:
            problems.append(f"{key}: present on one side only")
            continue
        if vb.get("messageType") != "COMMIT":
            continue  # cdcd kept Debezium's own position (e.g. a snapshot offset): compare alone judges it
        if not (vb.get("lsn") == vb.get("lsn_proc") == vb.get("lsn_commit")):
            problems.append(f"{key}: cdcd's COMMIT offset has lsn {vb.get('lsn')}, lsn_proc {vb.get('lsn_proc')}, "
                            f"lsn_commit {vb.get('lsn_commit')}; they must be equal")
        if same_db and isinstance(va.get("lsn_proc"), int) and isinstance(vb.get("lsn"), int) and vb["lsn"] < va["lsn_proc"]:
            problems.append(f"{key}: cdcd's lsn {vb['lsn']} is behind Debezium's last processed event {va['lsn_proc']}")
    for p in problems:
        print(f"  offsets problem: {p}")
    return 1 if problems else 0


if __name__ == "__main__":
    args = sys.argv[1:]
    replay = args[:1] == ["--replay"]
    if replay:
        args = args[1:]
    if len(args) != 2:
        sys.exit("usage: offsets_side_by_side.py [--replay] DEBEZIUM.json CDCD.json")
    sys.exit(main(args[0], args[1], not replay))
