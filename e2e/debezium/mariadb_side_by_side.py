#!/usr/bin/env python3
"""What conformance.sh needs to run cdcd on the binlog range Debezium's MariaDB connector streamed, and to
judge the one offset difference cdcd is known to have.

    mariadb_side_by_side.py snapshot-offset HISTORY.jsonl
    mariadb_side_by_side.py snapshot-history HISTORY.jsonl
    mariadb_side_by_side.py end-position CAPTURE.jsonl TEXT
    mariadb_side_by_side.py select [--streamed] [--database DB] [--through FILE:POS] [--topic TOPIC] CAPTURE.jsonl
    mariadb_side_by_side.py offsets [--end-gtid GTID] DEBEZIUM.json CDCD.json

HISTORY.jsonl is a capture (e2e/cmd/capture) of Debezium's schema history topic. The records Debezium wrote
during its snapshot carry the snapshot's binlog position with "snapshot":"INITIAL"; snapshot-offset prints
that position as the offset of a finished snapshot, {"file":…,"pos":…,"gtids":…} (cdcd, resuming there,
streams what Debezium streamed), and snapshot-history prints those records' values, each ended by the byte
0x1e (for `kcat -P -D '\\x1e'`), to seed cdcd's own history topic.

end-position prints the binlog position (FILE:POS of its source block) and the GTID of the first record
whose key or value contains TEXT: the end marker's, where the compared range ends.

select prints the capture lines of the records it is asked for, unchanged (or with their topic renamed):
  --streamed   not written by a snapshot: change events and schema changes whose source.snapshot is absent or
               "false", and history records without "snapshot" in their position;
  --database   but schema changes and history records of other databases: Debezium's snapshot records the
               structure of every database on the server, so those of tests that happen to run on it, which a
               golden cannot hold;
  --through    at or before that binlog position (the source block's, or the history record's transaction
               start): the server is shared, so what a connector reads after the end marker depends on when
               it was stopped.
A tombstone goes with the record before it in its topic.

offsets prints two offsets JSON files (e2e/debezium/OffsetsDump.java output) side by side and checks the
shape of cdcd's (B's) position: cdcd records offsets at transaction boundaries, so it has no `event` and
`row` (Debezium's count of what it delivered of the transaction starting at `pos`), and it must not be behind
Debezium: not at an earlier binlog position, no GTID domain at a lower sequence number, and past the
transaction Debezium was inside. Every other field is left to `compare -offsets`. Exit status 1 otherwise.
With --end-gtid (the end marker's transaction), it also tells whether the two stopped where the compared
range ends: Debezium inside that transaction (or before it), cdcd at its end. Where either went on (the server
is shared: Debezium's offset moves on with another database's DDL, which it records, cdcd's with any
transaction), the offsets are not comparable: exit status 3 unless something else is wrong.
"""
import argparse
import json
import sys

from offsets_side_by_side import load

# The offset fields the transaction-boundary difference explains.
POSITION_FIELDS = ("pos", "gtids", "event", "row")
HISTORY_SEPARATOR = "\x1e"


def read_capture(path):
    """Yields (line, record, value document or None) for each line of a capture."""
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            record = json.loads(line)
            value = record["value"]
            yield line, record, (json.loads(value) if isinstance(value, str) else None)


def payload_of(doc):
    """The payload of a JsonConverter {"schema","payload"} document, else the document."""
    return doc["payload"] if isinstance(doc, dict) and set(doc) == {"schema", "payload"} else doc


def snapshot_marker(doc):
    """The snapshot marker of a change event, schema change or history document; None when it has none."""
    if not isinstance(doc, dict):
        return None
    if "position" in doc:  # a schema history document
        return doc["position"].get("snapshot")
    payload = payload_of(doc)
    source = payload.get("source") if isinstance(payload, dict) else None
    marker = source.get("snapshot") if isinstance(source, dict) else None
    return None if marker in (None, "false") else marker


def snapshot_history(path):
    """The values of the history records written during the snapshot, and their one binlog position."""
    values, positions = [], set()
    for _, record, doc in read_capture(path):
        if snapshot_marker(doc) is None:
            continue
        values.append(record["value"])
        p = doc["position"]
        positions.add((p["file"], p["pos"], p.get("gtids")))
    if not values:
        raise SystemExit(f"{path}: no history record has a snapshot position")
    if len(positions) != 1:
        raise SystemExit(f"{path}: the snapshot's history records disagree on its position: {sorted(positions, key=str)}")
    return values, positions.pop()


def snapshot_offset(path):
    (file, pos, gtids) = snapshot_history(path)[1]
    offset = {"file": file, "pos": pos}
    if gtids is not None:
        offset["gtids"] = gtids
    return json.dumps(offset, separators=(",", ":"))


def binlog_position(doc):
    """(file, pos) of a change event's or schema change's source block, or of a history record; else None."""
    payload = payload_of(doc)
    if not isinstance(payload, dict):
        return None
    block = payload.get("position") or payload.get("source")
    if not isinstance(block, dict) or "file" not in block or "pos" not in block:
        return None
    return block["file"], block["pos"]


def parse_position(text):
    file, _, pos = text.rpartition(":")
    return file, int(pos)


def end_position(path, text):
    """"FILE:POS GTID" of the first record whose key or value contains text."""
    for _, record, doc in read_capture(path):
        at = binlog_position(doc)
        if at and (text in (record.get("key") or "") or text in (record.get("value") or "")):
            return f"{at[0]}:{at[1]} {payload_of(doc)['source'].get('gtid')}"
    raise SystemExit(f"{path}: no record contains {text!r}")


def wanted(doc, streamed, database, through):
    """Whether a record (not a tombstone) passes select's filters."""
    payload = payload_of(doc)
    name = payload.get("databaseName") if isinstance(payload, dict) else None
    at = binlog_position(doc)
    if streamed and snapshot_marker(doc) is not None:
        return False
    if database is not None and name not in (None, "", database):
        return False
    return through is None or at is None or at <= through


def select(path, streamed=False, database=None, through=None, topic=None):
    """The capture lines of the records asked for (see the module's doc), their topic renamed when asked."""
    out, kept_last = [], {}  # whether each topic's previous record was kept, for a tombstone after it
    for line, record, doc in read_capture(path):
        if record["value"] is None:
            keep = kept_last.get(record["topic"], True)
        else:
            keep = wanted(doc, streamed, database, through)
        kept_last[record["topic"]] = keep
        if not keep:
            continue
        if topic is not None:
            record["topic"] = topic
            line = json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
        out.append(line)
    return out


def gtid_sequences(gtids):
    """MariaDB's GTID set "domain-server-seq,…" as {domain: seq}."""
    out = {}
    for gtid in filter(None, (g.strip() for g in (gtids or "").split(","))):
        domain, _, seq = gtid.split("-")
        out[domain] = max(out.get(domain, 0), int(seq))
    return out


def position_problems(debezium, cdcd):
    """Why cdcd's offset is not a transaction boundary at or past Debezium's position; empty when it is."""
    problems = [f"cdcd's offset has `{f}` ({cdcd[f]}): it records offsets at transaction boundaries only"
                for f in ("event", "row") if cdcd.get(f)]
    at_a, at_b = (debezium.get("file", ""), debezium.get("pos", 0)), (cdcd.get("file", ""), cdcd.get("pos", 0))
    inside = bool(debezium.get("event") or debezium.get("row"))
    if at_b < at_a or (inside and at_b == at_a):
        problems.append(f"cdcd's position {at_b[0]}:{at_b[1]} is not past Debezium's {at_a[0]}:{at_a[1]}"
                        + (" (Debezium was inside the transaction starting there)" if inside else ""))
    seq_a, seq_b = gtid_sequences(debezium.get("gtids")), gtid_sequences(cdcd.get("gtids"))
    for domain, seq in sorted(seq_a.items()):
        if seq_b.get(domain, 0) < seq:
            problems.append(f"cdcd's gtids {cdcd.get('gtids')!r} are behind Debezium's {debezium.get('gtids')!r} in domain {domain}")
    return problems


def past_the_end(debezium, cdcd, end_gtid):
    """Which of the two offsets went on past the end marker's transaction end_gtid ("domain-server-seq")."""
    domain, _, seq = end_gtid.split("-")
    seq_a, seq_b = gtid_sequences(debezium.get("gtids")).get(domain, 0), gtid_sequences(cdcd.get("gtids")).get(domain, 0)
    notes = []
    if seq_a >= int(seq):  # Debezium's gtids are those completed before the transaction it is inside
        notes.append(f"Debezium's offset (gtids {debezium.get('gtids')!r}) is past the end marker's transaction {end_gtid}")
    if seq_b > int(seq):
        notes.append(f"cdcd's offset (gtids {cdcd.get('gtids')!r}) is past the end marker's transaction {end_gtid}")
    return notes


def side_by_side(path_a, path_b, end_gtid=None):
    a, b = load(path_a), load(path_b)
    problems, disturbed = [], []
    for key in sorted(set(a) | set(b)):
        va, vb = a.get(key), b.get(key)
        print(f"  offset key {key}")
        fields = list(va or {}) + [k for k in (vb or {}) if k not in (va or {})]
        print(f"    {'field':<12} {'debezium':<24} {'cdcd':<24}")
        for field in fields:
            fa = "-" if va is None or field not in va else json.dumps(va[field])
            fb = "-" if vb is None or field not in vb else json.dumps(vb[field])
            mark = ""
            if fa != fb:
                mark = "  (known: transaction boundary)" if field in POSITION_FIELDS else "  <-- differs"
            print(f"    {field:<12} {fa:<24} {fb:<24}{mark}")
        if va is None or vb is None:
            problems.append(f"{key}: present on one side only")
            continue
        problems += [f"{key}: {p}" for p in position_problems(va, vb)]
        if end_gtid:
            disturbed += [f"{key}: {n}" for n in past_the_end(va, vb, end_gtid)]
    for p in problems:
        print(f"  offsets problem: {p}")
    for n in disturbed:
        print(f"  offsets not comparable: {n}: the server had transactions after it (other tests?); Debezium's offset"
              " moves only with the records it writes, cdcd's with every transaction it reads")
    return 1 if problems else 3 if disturbed else 0


def main(args):
    sys.stdout.reconfigure(encoding="utf-8")  # capture text is UTF-8 whatever the locale
    parser = argparse.ArgumentParser(prog="mariadb_side_by_side.py")
    commands = parser.add_subparsers(dest="command", required=True)
    for name in ("snapshot-offset", "snapshot-history"):
        commands.add_parser(name).add_argument("history")
    end = commands.add_parser("end-position")
    end.add_argument("capture")
    end.add_argument("text")
    sel = commands.add_parser("select")
    sel.add_argument("--streamed", action="store_true")
    sel.add_argument("--database")
    sel.add_argument("--through", type=parse_position)
    sel.add_argument("--topic")
    sel.add_argument("capture")
    offsets = commands.add_parser("offsets")
    offsets.add_argument("--end-gtid")
    offsets.add_argument("debezium")
    offsets.add_argument("cdcd")
    a = parser.parse_args(args)
    if a.command == "snapshot-offset":
        print(snapshot_offset(a.history))
    elif a.command == "snapshot-history":
        sys.stdout.write("".join(v + HISTORY_SEPARATOR for v in snapshot_history(a.history)[0]))
    elif a.command == "end-position":
        print(end_position(a.capture, a.text))
    elif a.command == "select":
        sys.stdout.write("".join(select(a.capture, a.streamed, a.database, a.through, a.topic)))
    else:
        return side_by_side(a.debezium, a.cdcd, a.end_gtid)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
