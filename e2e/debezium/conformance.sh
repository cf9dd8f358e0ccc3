#!/usr/bin/env bash
# What `make conformance` runs: cdcd side by side with the real Debezium 3.6.1.Final (connect.sh) on ONE
# database per PostgreSQL golden variant, and with Debezium's MariaDbConnector on ONE binlog range per MariaDB
# golden variant, so positions, transaction ids and commit times must agree too.
#
#   e2e/debezium/conformance.sh [VARIANT...]     (default: every variant of testdata/postgres/MANIFEST.json,
#                                                 then mariadb/VARIANT for every variant of
#                                                 testdata/mariadb/MANIFEST.json; CDCD_CONFORMANCE_VARIANTS="a b"
#                                                 works as well, e.g. "mariadb/default mariadb/schemas-off")
#
# Per PostgreSQL variant, with the golden's own worker.properties and connector.properties:
#  1. a fresh database from the corpus, the publication created FOR ALL TABLES up front (cdcd refuses to
#     create one while public.no_pk has no replica identity; Debezium would) and cdcd's slot created before
#     any change, so both slots decode the same WAL; Debezium creates its own slot when it starts;
#  2. Debezium streams the corpus's changes into the `pg1` topics; its capture and offsets are kept;
#  3. the topics are deleted and cdcd reads its slot with the same files except slot.name, the offsets
#     file, listeners and snapshot.mode=no_data, until the end-marker message arrives; SIGTERM stops it;
#  4. the captures are compared in same-db mode (everything but versions, processing times and the runId
#     header must be equal) and so are the offsets, except the known difference: cdcd records offsets at
#     transaction boundaries (messageType COMMIT, lsn = lsn_proc = lsn_commit); Debezium's capture is also
#     compared with the committed golden in replay mode, which proves the golden still reproduces.
# A variant's own SQL runs as goldens.sh runs it: extra-schema.sql after the corpus schema, extra-changes.sql
# before the corpus changes. The snapshot variants are the exception to the shared slot (replay_variant): a slot
# made up front cannot export Debezium's snapshot (snapshot-initial*), and an incremental or blocking snapshot
# requested in the signal table would be run again by cdcd on the database as it is after Debezium's run, so
# cdcd runs those on a second fresh database with the golden's own snapshot.mode and is compared with
# Debezium's capture in replay mode.
#
# Per MariaDB variant (Debezium 3.5.0.Final's MariaDbConnector, connect.sh's `mariadb` instance; see
# testdata/mariadb/README.md), with the golden's own files pointed at the test bed's MariaDB:
#  1. a fresh database from the corpus (schema and seed); Debezium snapshots it, streams changes.sql until the
#     end marker and stops; its capture, its schema history topic and its offsets are kept;
#  2. cdcd is given the binlog range Debezium streamed: an offsets file holding the snapshot's position (that
#     of the history records written during the snapshot) as a finished snapshot, and a history topic of its
#     own seeded with those records (cdcd recovers the tables' structure from it); the data topics are
#     deleted and cdcd streams until the end marker (mariadb_side_by_side.py and OffsetsWrite.java help);
#  3. Debezium's streamed records (its snapshot's are left out: cdcd takes no snapshot here) are compared with
#     cdcd's in same-db mode, and so are the history records written while streaming and the offsets. Records
#     past the end marker are left out (the server is shared: what a connector reads after it depends on when
#     it stops); offsets that went past it (Debezium's onto another database's DDL, cdcd's onto any later
#     transaction) cannot be compared, which the summary says. Known differences, counted apart: the
#     offset's transaction boundary (Debezium records mid-transaction offsets, `pos` of the transaction's
#     start with `event`/`row`; cdcd the position after the commit) and the zero TIMESTAMPs streamed into
#     zero_dates, the epoch for Debezium 3.5.0, null or the column's default for 3.6.1 and cdcd. Debezium's
#     capture is also compared with the committed golden in replay mode, other databases' schema changes
#     (Debezium's snapshot records every database on the server) left out.
# The incremental and blocking snapshot variants are the exception (mariadb_replay_variant): given Debezium's
# binlog range, cdcd would run the signal in it again on the database as it is after Debezium's run, so cdcd
# runs them as TestMariaDBGoldens does, on a fresh database with its own snapshot, and its capture (each side
# through its own end marker) and offsets are compared with Debezium's in replay mode.
#
# Uses the services of e2e/services.sh (started here). Builds cdcd from this work tree unless CDCD_BIN
# names a binary. Exit status 1 when any comparison differs; the run's files are then kept (and always with
# CDCD_KEEP_RUNS set). Shares database, slot and topic names with goldens.sh, TestPostgresGoldens and
# TestMariaDBGoldens (they appear in the events), so run one of them at a time. A MariaDB variant waits
# while another run has connect.sh's `mariadb` worker going (CDCD_MARIADB_WORKER_WAIT seconds, 900).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
STATE_DIR=${CDCD_E2E_DIR:-/var/tmp/cdcd-e2e}
PG_PORT=${CDCD_PG_PORT:-55432}
MARIADB_PORT=${CDCD_MARIADB_PORT:-53306}
KAFKA_PORT=${CDCD_KAFKA_PORT:-59092}
PSQL=/usr/lib/postgresql/15/bin/psql
CONNECT=$HERE/connect.sh
GOLDENS=$REPO/testdata/postgres
CORPUS=$GOLDENS/corpus
BIN_DIR=$STATE_DIR/bin
CAPTURE=$BIN_DIR/capture
COMPARE=$BIN_DIR/compare
CDCD_START_TIMEOUT=${CDCD_START_TIMEOUT:-120}
CDCD_STOP_TIMEOUT=${CDCD_STOP_TIMEOUT:-60}

# The golden files' names (see goldens.sh); cdcd's slot is the only new one.
DB=cdcd_golden
PUBLICATION=cdcd_golden
DEBEZIUM_SLOT=cdcd_golden
CDCD_SLOT=cdcd_golden_cdcd
CONNECTOR_NAME=pg-golden
TOPIC_PREFIX=pg1
END_MARKER=cdcd-golden-end

# The MariaDB goldens' names (goldens.sh mariadb): variant V of testdata/mariadb runs as mariadb/V. cdcd's
# history topic is the only new name.
MDB=mariadb/
MDB_GOLDENS=$REPO/testdata/mariadb
MDB_CONNECT=(env CDCD_CONNECT_INSTANCE=mariadb "$CONNECT")
MDB_REST_PORT=58084
MDB_CONNECTOR_NAME=mdb-golden
MDB_TOPIC_PREFIX=mdb1
MDB_HISTORY_TOPIC=mdb1-schema-history
MDB_CDCD_HISTORY_TOPIC=mdb1-schema-history-cdcd
MDB_HELPER=$HERE/mariadb_side_by_side.py
# Both connectors read the test bed's MariaDB, whatever server the golden was written against.
MDB_SERVER_PROPS=("database.hostname=127.0.0.1" "database.port=$MARIADB_PORT")

log() { printf '[conformance] %s\n' "$*" >&2; }
die() { printf '[conformance] error: %s\n' "$*" >&2; exit 2; }

psql_admin() { "$PSQL" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PG_PORT" -U postgres "$@"; }
mariadb_admin() {
	MYSQL_PWD=cdcd mariadb --no-defaults --protocol=TCP -h 127.0.0.1 -P "$MARIADB_PORT" -u root \
		--default-character-set=utf8mb4 "$@"
}
kafka_capture() { "$CAPTURE" -brokers "127.0.0.1:$KAFKA_PORT" "$@"; }
capture() { kafka_capture -prefix "$TOPIC_PREFIX" "$@"; }

build_tools() {
	mkdir -p "$BIN_DIR"
	(cd "$REPO" && go build -o "$CAPTURE" ./e2e/cmd/capture && go build -o "$COMPARE" ./e2e/cmd/compare)
	if [[ -z ${CDCD_BIN:-} ]]; then
		CDCD_BIN=$BIN_DIR/cdcd
		(cd "$REPO" && CGO_ENABLED=0 go build -o "$CDCD_BIN" ./cmd/cdcd)
	fi
	[[ -x $CDCD_BIN ]] || die "cdcd binary $CDCD_BIN is not executable"
}

# with_props IN OUT KEY=VALUE... copies a properties file, replacing the given keys (appending missing ones).
with_props() {
	local in=$1 out=$2
	shift 2
	awk -v overrides="$(printf '%s\n' "$@")" '
		BEGIN { n = split(overrides, o, "\n"); for (i = 1; i <= n; i++) if (o[i] != "") { k = substr(o[i], 1, index(o[i], "=") - 1); line[k] = o[i]; order[++m] = k } }
		{ k = substr($0, 1, index($0, "=") - 1) }
		k in line { print line[k]; done[k] = 1; next }
		{ print }
		END { for (i = 1; i <= m; i++) if (!(order[i] in done)) print line[order[i]] }' "$in" >"$out"
}

# drop_slots ends the walsenders still holding either slot (one may outlive its client for a moment) and
# drops both; a slot left behind would retain WAL for good.
drop_slots() {
	local slots="'$DEBEZIUM_SLOT','$CDCD_SLOT'" deadline=$((SECONDS + 30))
	psql_admin -d postgres -c "SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name IN ($slots) AND active" >/dev/null
	until [[ $(psql_admin -At -d postgres -c "SELECT count(*) FROM pg_replication_slots WHERE slot_name IN ($slots) AND active") == 0 ]]; do
		((SECONDS < deadline)) || die "slots $slots stay active"
		sleep 0.2
	done
	psql_admin -d postgres -c "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name IN ($slots)" >/dev/null
}

# snapshot_variant VARIANT: the variant's connector takes an initial snapshot of the corpus's seed rows.
snapshot_variant() { [[ $1 == snapshot-initial* ]]; }

# replay_variant VARIANT: cdcd cannot share the slot made up front with Debezium's run (see the top), so it runs
# the variant on a fresh database of its own and is compared in replay mode.
replay_variant() { snapshot_variant "$1" || [[ $1 == incremental-* || $1 == blocking-* ]]; }

# run_variant_sql VARIANT FILE runs a variant's own SQL (extra-schema.sql, extra-changes.sql), as goldens.sh.
run_variant_sql() {
	local file=$GOLDENS/$1/$2
	if [[ -f $file ]]; then psql_admin -d "$DB" -f "$file" >/dev/null; fi
}

# fresh_database VARIANT [cdcd-slot] recreates the database from the corpus and the variant's own schema with
# the publication and, when asked, cdcd's slot: made before any change, it decodes the same WAL as the slot
# Debezium makes later.
fresh_database() {
	drop_slots
	psql_admin -d postgres -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)"
	psql_admin -d postgres -c "CREATE DATABASE $DB"
	psql_admin -d "$DB" -f "$CORPUS/schema.sql" >/dev/null
	run_variant_sql "$1" extra-schema.sql
	local with=
	# As Debezium creates it for the golden (publication.autocreate.mode=all_tables).
	grep -qx 'publish.via.partition.root=true' "$GOLDENS/$1/connector.properties" && with=" WITH (publish_via_partition_root = true)"
	psql_admin -d "$DB" -c "CREATE PUBLICATION $PUBLICATION FOR ALL TABLES$with"
	[[ ${2:-} == cdcd-slot ]] && psql_admin -d "$DB" -c "SELECT pg_create_logical_replication_slot('$CDCD_SLOT', 'pgoutput')" >/dev/null
	snapshot_variant "$1" && psql_admin -d "$DB" -f "$CORPUS/seed.sql" >/dev/null
	return 0
}

wait_slot_active() { # SLOT
	local deadline=$((SECONDS + 120))
	until [[ $(psql_admin -At -d postgres -c "SELECT active FROM pg_replication_slots WHERE slot_name = '$1'") == t ]]; do
		((SECONDS < deadline)) || die "slot $1 never became active"
		sleep 0.5
	done
}

# run_changes runs the variant's own changes and then the corpus's once the connector is streaming: for a
# snapshot variant, after the snapshot's last row, the only record whose payload says so.
run_changes() { # VARIANT
	if snapshot_variant "$1"; then capture -wait-for '"snapshot":"last"' -o /dev/null; fi
	run_variant_sql "$1" extra-changes.sql
	psql_admin -d "$DB" -f "$CORPUS/changes.sql" >/dev/null
}

capture_until_end() { # OUT [TOPIC_PREFIX]
	kafka_capture -prefix "${2:-$TOPIC_PREFIX}" -wait-for "$END_MARKER" -quiet 3s -o "$1"
	sleep 2 # let one offset flush (offset.flush.interval.ms=1000) pass; a stop records offsets once more
}

run_debezium() { # VARIANT DIR
	local v=$1 dir=$2 run_dir=$2/debezium-run
	"$CONNECT" stop
	if replay_variant "$v"; then fresh_database "$v"; else fresh_database "$v" cdcd-slot; fi
	capture -delete
	"$CONNECT" run "$GOLDENS/$v/worker.properties" "$GOLDENS/$v/connector.properties" "$run_dir"
	"$CONNECT" wait-running "$CONNECTOR_NAME"
	wait_slot_active "$DEBEZIUM_SLOT"
	run_changes "$v"
	capture_until_end "$dir/debezium.jsonl"
	"$CONNECT" stop
	grep -q 'ERROR' "$run_dir/connect.log" && log "warning: $run_dir/connect.log has ERROR lines"
	"$CONNECT" offsets "$run_dir/offsets.dat" >"$dir/debezium.offsets.json"
}

CDCD_PID= # the cdcd this script started, while it runs
CDCD_PORT= # its REST port

stop_cdcd() {
	[[ -n $CDCD_PID ]] || return 0
	local pid=$CDCD_PID
	CDCD_PID=
	kill -0 "$pid" 2>/dev/null || return 0
	log "stopping cdcd (pid $pid) with SIGTERM"
	kill -TERM "$pid"
	local deadline=$((SECONDS + CDCD_STOP_TIMEOUT))
	while kill -0 "$pid" 2>/dev/null; do
		((SECONDS < deadline)) || { log "cdcd (pid $pid) ignored SIGTERM for ${CDCD_STOP_TIMEOUT}s; killing"; kill -KILL "$pid"; break; }
		sleep 0.2
	done
}

wait_cdcd_running() { # PORT LOG CONNECTOR_NAME
	local deadline=$((SECONDS + CDCD_START_TIMEOUT)) status=
	while ((SECONDS < deadline)); do
		kill -0 "$CDCD_PID" 2>/dev/null || die "cdcd exited; see $2"
		status=$(curl -fsS "http://127.0.0.1:$1/connectors/$3/status" 2>/dev/null || true)
		[[ $status == *'"connector":{"state":"RUNNING"'* && $status == *'"tasks":[{"id":0,"state":"RUNNING"'* ]] && return 0
		[[ $status == *'"state":"FAILED"'* ]] && die "cdcd's connector failed: $status"
		sleep 0.5
	done
	die "cdcd's connector not RUNNING after ${CDCD_START_TIMEOUT}s: $status"
}

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# start_cdcd RUN_DIR GOLDEN_DIR CONNECTOR_NAME KEY=VALUE... starts cdcd with the golden's files, the worker
# given RUN_DIR/offsets.dat and a free REST port, the connector the given keys; returns once it is RUNNING.
start_cdcd() {
	local run_dir=$1 golden=$2 name=$3 port
	shift 3
	mkdir -p "$run_dir"
	port=$(free_port)
	CDCD_PORT=$port
	with_props "$golden/worker.properties" "$run_dir/worker.properties" \
		"offset.storage.file.filename=$run_dir/offsets.dat" "listeners=http://127.0.0.1:$port"
	with_props "$golden/connector.properties" "$run_dir/connector.properties" "$@"
	log "starting cdcd on port $port (log $run_dir/cdcd.log)"
	(cd "$run_dir" && exec setsid "$CDCD_BIN" standalone worker.properties connector.properties) >"$run_dir/cdcd.log" 2>&1 &
	CDCD_PID=$!
	wait_cdcd_running "$port" "$run_dir/cdcd.log" "$name"
}

finish_cdcd() { # RUN_DIR OFFSETS_JSON
	stop_cdcd
	grep -q 'level=ERROR' "$1/cdcd.log" && log "warning: $1/cdcd.log has ERROR lines"
	"$CONNECT" offsets "$1/offsets.dat" >"$2"
}

run_cdcd() { # VARIANT DIR
	local v=$1 dir=$2 props=("slot.name=$CDCD_SLOT")
	capture -delete
	if replay_variant "$v"; then
		fresh_database "$v" # cdcd makes its slot (and snapshot) as Debezium did, with the golden's snapshot.mode
	else
		props+=("snapshot.mode=no_data") # the changes are already in the WAL cdcd's slot holds
	fi
	start_cdcd "$dir/cdcd-run" "$GOLDENS/$v" "$CONNECTOR_NAME" "${props[@]}"
	wait_slot_active "$CDCD_SLOT"
	if replay_variant "$v"; then run_changes "$v"; fi
	capture_until_end "$dir/cdcd.jsonl"
	finish_cdcd "$dir/cdcd-run" "$dir/cdcd.offsets.json"
}

# run_mariadb_variant_sql VARIANT FILE runs a MariaDB variant's own SQL, as goldens.sh.
run_mariadb_variant_sql() {
	local file=$MDB_GOLDENS/$1/$2
	if [[ -f $file ]]; then mariadb_admin "$DB" <"$file"; fi
}

fresh_mariadb_database() { # VARIANT
	mariadb_admin -e "DROP DATABASE IF EXISTS $DB; CREATE DATABASE $DB CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci"
	mariadb_admin "$DB" <"$MDB_GOLDENS/corpus/schema.sql"
	run_mariadb_variant_sql "$1" extra-schema.sql
	mariadb_admin "$DB" <"$MDB_GOLDENS/corpus/seed.sql"
}

# wait_mariadb_snapshot returns once the snapshot's last row is out (changes made earlier would land among
# the snapshot's records); the task can fail after it was RUNNING, so its state is checked between reads.
wait_mariadb_snapshot() {
	local deadline=$((SECONDS + 180)) status
	until kafka_capture -prefix "$MDB_TOPIC_PREFIX" -wait-for '"snapshot":"last"' -timeout 5s -o /dev/null 2>/dev/null; do
		status=$(curl -fsS "http://127.0.0.1:$MDB_REST_PORT/connectors/$MDB_CONNECTOR_NAME/status" 2>/dev/null || true)
		[[ $status == *'"state":"FAILED"'* ]] && die "connector $MDB_CONNECTOR_NAME failed during its snapshot: $status"
		((SECONDS < deadline)) || die "the snapshot of $MDB_CONNECTOR_NAME did not end within 180s"
	done
}

MDB_WORKER_STARTED= # set while the mariadb reference worker runs for this script

# wait_mariadb_worker_free waits until no other run has had a mariadb reference worker going for 15s: neither
# connect.sh's (goldens.sh mariadb, another conformance run: they use the same database and topics, which this
# script recreates, and restart the worker a few seconds after stopping it between variants) nor one with a
# state dir of its own (the benchmark) holding the instance's REST port.
wait_mariadb_worker_free() {
	local pid_file=$STATE_DIR/debezium/connect-mariadb.pid pid free_since=$SECONDS busy
	local deadline=$((SECONDS + ${CDCD_MARIADB_WORKER_WAIT:-900}))
	while ((SECONDS - free_since < 15)); do
		busy=
		if pid=$(cat "$pid_file" 2>/dev/null) && grep -qs ConnectStandalone "/proc/$pid/cmdline"; then
			busy="the mariadb reference worker of another run (pid $pid)"
		elif (exec 3<>"/dev/tcp/127.0.0.1/$MDB_REST_PORT") 2>/dev/null; then
			busy="whatever listens on the mariadb reference worker's REST port $MDB_REST_PORT"
		fi
		if [[ -n $busy ]]; then
			((SECONDS < deadline)) || die "still busy after ${CDCD_MARIADB_WORKER_WAIT:-900}s: $busy"
			log "waiting for $busy to stop"
			sleep 10
			free_since=$SECONDS
		else
			sleep 1
		fi
	done
}

run_mariadb_debezium() { # VARIANT DIR
	local v=$1 dir=$2 run_dir=$2/debezium-run
	with_props "$MDB_GOLDENS/$v/connector.properties" "$dir/debezium.connector.properties" "${MDB_SERVER_PROPS[@]}"
	wait_mariadb_worker_free
	fresh_mariadb_database "$v"
	kafka_capture -prefix "$MDB_TOPIC_PREFIX" -topics "$MDB_HISTORY_TOPIC,$MDB_CDCD_HISTORY_TOPIC" -delete
	"${MDB_CONNECT[@]}" run "$MDB_GOLDENS/$v/worker.properties" "$dir/debezium.connector.properties" "$run_dir"
	MDB_WORKER_STARTED=1
	"${MDB_CONNECT[@]}" wait-running "$MDB_CONNECTOR_NAME"
	wait_mariadb_snapshot
	run_mariadb_variant_sql "$v" extra-changes.sql
	mariadb_admin "$DB" <"$MDB_GOLDENS/corpus/changes.sql"
	capture_until_end "$dir/debezium.jsonl" "$MDB_TOPIC_PREFIX"
	kafka_capture -topics "$MDB_HISTORY_TOPIC" -o "$dir/debezium.history.jsonl"
	"${MDB_CONNECT[@]}" stop
	MDB_WORKER_STARTED=
	grep -q 'ERROR' "$run_dir/connect.log" && log "warning: $run_dir/connect.log has ERROR lines"
	"$CONNECT" offsets "$run_dir/offsets.dat" >"$dir/debezium.offsets.json"
}

# run_mariadb_cdcd VARIANT DIR has cdcd stream the binlog range Debezium streamed: from the position its
# snapshot handed over to streaming, knowing the tables from its snapshot's history records.
run_mariadb_cdcd() {
	local v=$1 dir=$2 run_dir=$2/cdcd-run offset
	if mariadb_replay_variant "$v"; then
		run_mariadb_cdcd_fresh "$v" "$dir"
		return
	fi
	offset=$(python3 "$MDB_HELPER" snapshot-offset "$dir/debezium.history.jsonl")
	log "cdcd starts from Debezium's snapshot position $offset"
	mkdir -p "$run_dir"
	java "$HERE/OffsetsWrite.java" "$run_dir/offsets.dat" "[\"$MDB_CONNECTOR_NAME\",{\"server\":\"$MDB_TOPIC_PREFIX\"}]" "$offset"
	kafka_capture -prefix "$MDB_TOPIC_PREFIX" -delete
	python3 "$MDB_HELPER" snapshot-history "$dir/debezium.history.jsonl" |
		kcat -P -b "127.0.0.1:$KAFKA_PORT" -t "$MDB_CDCD_HISTORY_TOPIC" -p 0 -D '\x1e'
	start_cdcd "$run_dir" "$MDB_GOLDENS/$v" "$MDB_CONNECTOR_NAME" "${MDB_SERVER_PROPS[@]}" \
		"schema.history.internal.kafka.topic=$MDB_CDCD_HISTORY_TOPIC"
	capture_until_end "$dir/cdcd.jsonl" "$MDB_TOPIC_PREFIX"
	# The end marker in the topics proves nothing if cdcd failed: TestMariaDBGoldens writes the same topics
	# (and takes over the same database.server.id) when it runs meanwhile.
	local status
	status=$(curl -fsS "http://127.0.0.1:$CDCD_PORT/connectors/$MDB_CONNECTOR_NAME/status" 2>/dev/null || true)
	[[ $status == *'"tasks":[{"id":0,"state":"RUNNING"'* ]] || die "cdcd's connector is not running after the capture (see $run_dir/cdcd.log): $status"
	kafka_capture -topics "$MDB_CDCD_HISTORY_TOPIC" -o "$dir/cdcd.history.jsonl"
	finish_cdcd "$run_dir" "$dir/cdcd.offsets.json"
}

# mariadb_replay_variant VARIANT: cdcd runs it on a fresh database of its own (see the top).
mariadb_replay_variant() { [[ $1 == incremental-* || $1 == blocking-* ]]; }

# run_mariadb_cdcd_fresh VARIANT DIR runs cdcd as Debezium ran: a fresh database, its own snapshot with the
# golden's files, then the variant's and the corpus's changes.
run_mariadb_cdcd_fresh() {
	local v=$1 dir=$2 run_dir=$2/cdcd-run status
	fresh_mariadb_database "$v"
	kafka_capture -prefix "$MDB_TOPIC_PREFIX" -topics "$MDB_CDCD_HISTORY_TOPIC" -delete
	start_cdcd "$run_dir" "$MDB_GOLDENS/$v" "$MDB_CONNECTOR_NAME" "${MDB_SERVER_PROPS[@]}" \
		"schema.history.internal.kafka.topic=$MDB_CDCD_HISTORY_TOPIC"
	kafka_capture -prefix "$MDB_TOPIC_PREFIX" -wait-for '"snapshot":"last"' -timeout 180s -o /dev/null
	run_mariadb_variant_sql "$v" extra-changes.sql
	mariadb_admin "$DB" <"$MDB_GOLDENS/corpus/changes.sql"
	capture_until_end "$dir/cdcd.jsonl" "$MDB_TOPIC_PREFIX"
	status=$(curl -fsS "http://127.0.0.1:$CDCD_PORT/connectors/$MDB_CONNECTOR_NAME/status" 2>/dev/null || true)
	[[ $status == *'"tasks":[{"id":0,"state":"RUNNING"'* ]] || die "cdcd's connector is not running after the capture (see $run_dir/cdcd.log): $status"
	finish_cdcd "$run_dir" "$dir/cdcd.offsets.json"
}

# compare_into OUT COMPARE-ARGS... runs compare, keeps every difference line in OUT, prints them indented
# and echoes how many there are (compare's closing "N differences" line is not one).
compare_into() {
	local out=$1 rc=0
	shift
	"$COMPARE" "$@" >"$out.all" || rc=$?
	((rc <= 1)) || die "compare $* failed (exit $rc)"
	grep -Ev '^[0-9]+ differences \(A=' "$out.all" >"$out" || true
	sed 's/^/    /' "$out" >&2
	wc -l <"$out"
}

# Lines of compare -offsets that the known transaction-boundary difference explains.
KNOWN_OFFSET_DIFF='^connect-offsets#[0-9]+ value\.(lsn|lsn_proc|lsn_commit|messageType): '
# The same for a binlog offset: Debezium's is the transaction's start plus the events and rows it delivered.
KNOWN_MARIADB_OFFSET_DIFF='^connect-offsets#[0-9]+ value\.(pos|gtids|event|row): '
# Lines of a MariaDB capture comparison that Debezium 3.5.0.Final's zero TIMESTAMP explains (the epoch where
# 3.6.1.Final, which cdcd follows, writes null or the column's default; testdata/mariadb/README.md).
KNOWN_MARIADB_CAPTURE_DIFF='^mdb1\.cdcd_golden\.zero_dates#[0-9]+ value\.(payload\.)?after\.zts(_nn)?: '
# A blocking snapshot's rows carry Debezium's streaming offset as it paused, whose `row` (how many rows of the
# signal's rows event it had dispatched) depends on timing: the golden has 0, a later run of the same Debezium 3
# or 0. Known in the golden comparison and in cdcd's.
KNOWN_MARIADB_BLOCKING_DIFF='^mdb1\.cdcd_golden\.blk_items#[0-9]+ value\.(payload\.)?source\.row: '

summaries=()   # one line per variant, printed at the end
failed=0       # 1 once any variant differs
variant_start=0 debezium_secs=0 cdcd_secs=0 # the current variant's timings, in seconds

# compare_variant VARIANT DIR prints every difference and records the variant's summary line.
compare_variant() {
	local v=$1 dir=$2 mode=same-db side_flag=
	if replay_variant "$v"; then
		mode=replay side_flag=--replay
		log "$v: cdcd ran on its own fresh database (a snapshot variant); comparing in replay mode"
	fi
	local golden_capture golden_offsets capture_diffs offset_diffs offsets_ok=yes verdict=ok
	log "$v: Debezium now vs the committed golden (replay mode)"
	golden_capture=$(compare_into "$dir/golden.diff" -mode replay "$GOLDENS/$v/capture.jsonl" "$dir/debezium.jsonl")
	golden_offsets=$(compare_into "$dir/golden-offsets.diff" -mode replay -offsets "$GOLDENS/$v/offsets.json" "$dir/debezium.offsets.json")
	log "$v: Debezium (A) vs cdcd (B), captures ($mode mode)"
	capture_diffs=$(compare_into "$dir/capture.diff" -mode "$mode" "$dir/debezium.jsonl" "$dir/cdcd.jsonl")
	log "$v: Debezium (A) vs cdcd (B), offsets ($mode mode)"
	compare_into "$dir/offsets.diff" -mode "$mode" -offsets "$dir/debezium.offsets.json" "$dir/cdcd.offsets.json" >/dev/null
	offset_diffs=$(grep -Evc "$KNOWN_OFFSET_DIFF" "$dir/offsets.diff" || true)
	python3 "$HERE/offsets_side_by_side.py" $side_flag "$dir/debezium.offsets.json" "$dir/cdcd.offsets.json" >&2 || offsets_ok=no
	if ((golden_capture + golden_offsets + capture_diffs + offset_diffs)) || [[ $offsets_ok == no ]]; then
		verdict=DIFFERS
		failed=1
	fi
	local known=$(($(wc -l <"$dir/offsets.diff") - offset_diffs))
	summaries+=("$(printf '%-22s %-7s records %3d/%-3d capture diffs %-3d offset diffs %d (+%d known%s)  golden diffs %d  %3ds (debezium %ds, cdcd %ds)%s' \
		"$v" "$verdict" "$(wc -l <"$dir/debezium.jsonl")" "$(wc -l <"$dir/cdcd.jsonl")" "$capture_diffs" "$offset_diffs" "$known" \
		"$([[ $offsets_ok == yes ]] || echo ', cdcd offset shape WRONG')" "$((golden_capture + golden_offsets))" \
		"$((SECONDS - variant_start))" "$debezium_secs" "$cdcd_secs" "$([[ $mode == replay ]] && echo '  cdcd in replay mode')")")
}

# compare_mariadb_variant VARIANT DIR prints every difference and records the variant's summary line.
compare_mariadb_variant() {
	local v=$1 dir=$2 golden=$MDB_GOLDENS/${1#"$MDB"} end end_gtid golden_end
	local golden_diffs capture_all capture_diffs history_diffs offset_diffs offsets_ok=yes verdict=ok
	# The server is shared: what each connector read after the end marker depends on when it was stopped,
	# and Debezium's snapshot records the tables of every database on it, so both are left out.
	read -r end end_gtid < <(python3 "$MDB_HELPER" end-position "$dir/debezium.jsonl" "$END_MARKER")
	# The golden was written on another server, at other binlog positions: its own end marker bounds it.
	read -r golden_end _ < <(python3 "$MDB_HELPER" end-position "$golden/capture.jsonl" "$END_MARKER")
	local select=(python3 "$MDB_HELPER" select --through "$end")
	log "$v: Debezium now vs the committed golden (replay mode, through the end markers at $end and $golden_end, other databases left out)"
	python3 "$MDB_HELPER" select --through "$golden_end" --database "$DB" "$golden/capture.jsonl" >"$dir/golden.selected.jsonl"
	"${select[@]}" --database "$DB" "$dir/debezium.jsonl" >"$dir/debezium.selected.jsonl"
	compare_into "$dir/golden.diff" -mode replay "$dir/golden.selected.jsonl" "$dir/debezium.selected.jsonl" >/dev/null
	golden_diffs=$(($(grep -Evc "$KNOWN_MARIADB_BLOCKING_DIFF" "$dir/golden.diff" || true) +
		$(compare_into "$dir/golden-offsets.diff" -mode replay -offsets "$golden/offsets.json" "$dir/debezium.offsets.json")))
	if mariadb_replay_variant "${v#"$MDB"}"; then
		compare_mariadb_replay "$v" "$dir" "$golden_diffs"
		return
	fi
	# cdcd took no snapshot: Debezium's snapshot records, and its history records written then (which cdcd
	# was given), are left out; the history topics get one name so their records compare.
	"${select[@]}" --streamed "$dir/debezium.jsonl" >"$dir/debezium.streamed.jsonl"
	"${select[@]}" "$dir/cdcd.jsonl" >"$dir/cdcd.streamed.jsonl"
	"${select[@]}" --streamed --topic "$MDB_HISTORY_TOPIC" "$dir/debezium.history.jsonl" >"$dir/debezium.history.streamed.jsonl"
	"${select[@]}" --streamed --topic "$MDB_HISTORY_TOPIC" "$dir/cdcd.history.jsonl" >"$dir/cdcd.history.streamed.jsonl"
	log "$v: Debezium's streamed records (A) vs cdcd's (B), through the end marker (same-db mode)"
	capture_all=$(compare_into "$dir/capture.diff" -mode same-db "$dir/debezium.streamed.jsonl" "$dir/cdcd.streamed.jsonl")
	capture_diffs=$(grep -Evc "$KNOWN_MARIADB_CAPTURE_DIFF" "$dir/capture.diff" || true)
	log "$v: Debezium (A) vs cdcd (B), schema history records written while streaming (same-db mode)"
	history_diffs=$(compare_into "$dir/history.diff" -mode same-db "$dir/debezium.history.streamed.jsonl" "$dir/cdcd.history.streamed.jsonl")
	log "$v: Debezium (A) vs cdcd (B), offsets (same-db mode)"
	compare_into "$dir/offsets.diff" -mode same-db -offsets "$dir/debezium.offsets.json" "$dir/cdcd.offsets.json" >/dev/null
	offset_diffs=$(grep -Evc "$KNOWN_MARIADB_OFFSET_DIFF" "$dir/offsets.diff" || true)
	python3 "$MDB_HELPER" offsets --end-gtid "$end_gtid" "$dir/debezium.offsets.json" "$dir/cdcd.offsets.json" >&2 || offsets_ok=$?
	if ((golden_diffs + capture_diffs + history_diffs + offset_diffs)) || [[ $offsets_ok != yes ]]; then
		verdict=DIFFERS
		failed=1
	fi
	summaries+=("$(printf '%-22s %-7s records %3d/%-3d capture diffs %-3d (+%d known) history diffs %d offset diffs %d (+%d known%s)  golden diffs %d  %3ds (debezium %ds, cdcd %ds)' \
		"$v" "$verdict" "$(wc -l <"$dir/debezium.streamed.jsonl")" "$(wc -l <"$dir/cdcd.streamed.jsonl")" "$capture_diffs" \
		"$((capture_all - capture_diffs))" "$history_diffs" "$offset_diffs" "$(($(wc -l <"$dir/offsets.diff") - offset_diffs))" \
		"$(mariadb_offsets_note "$offsets_ok")" "$golden_diffs" \
		"$((SECONDS - variant_start))" "$debezium_secs" "$cdcd_secs")")
}

# compare_mariadb_replay VARIANT DIR GOLDEN_DIFFS compares a variant cdcd ran on a fresh database of its own
# (mariadb_replay_variant): the captures, each through its own end marker, and the offsets, in replay mode.
compare_mariadb_replay() {
	local v=$1 dir=$2 golden_diffs=$3 cdcd_end capture_all capture_diffs offset_diffs verdict=ok
	read -r cdcd_end _ < <(python3 "$MDB_HELPER" end-position "$dir/cdcd.jsonl" "$END_MARKER")
	python3 "$MDB_HELPER" select --through "$cdcd_end" --database "$DB" "$dir/cdcd.jsonl" >"$dir/cdcd.selected.jsonl"
	log "$v: Debezium (A) vs cdcd (B) on a fresh database of its own, through each one's end marker (replay mode)"
	capture_all=$(compare_into "$dir/capture.diff" -mode replay "$dir/debezium.selected.jsonl" "$dir/cdcd.selected.jsonl")
	capture_diffs=$(grep -Evc -e "$KNOWN_MARIADB_CAPTURE_DIFF" -e "$KNOWN_MARIADB_BLOCKING_DIFF" "$dir/capture.diff" || true)
	log "$v: Debezium (A) vs cdcd (B), offsets (replay mode)"
	compare_into "$dir/offsets.diff" -mode replay -offsets "$dir/debezium.offsets.json" "$dir/cdcd.offsets.json" >/dev/null
	offset_diffs=$(grep -Evc "$KNOWN_MARIADB_OFFSET_DIFF" "$dir/offsets.diff" || true)
	if ((golden_diffs + capture_diffs + offset_diffs)); then
		verdict=DIFFERS
		failed=1
	fi
	summaries+=("$(printf '%-22s %-7s records %3d/%-3d capture diffs %-3d (+%d known) offset diffs %d (+%d known)  golden diffs %d  %3ds (debezium %ds, cdcd %ds)  cdcd in replay mode' \
		"$v" "$verdict" "$(wc -l <"$dir/debezium.selected.jsonl")" "$(wc -l <"$dir/cdcd.selected.jsonl")" "$capture_diffs" \
		"$((capture_all - capture_diffs))" "$offset_diffs" "$(($(wc -l <"$dir/offsets.diff") - offset_diffs))" "$golden_diffs" \
		"$((SECONDS - variant_start))" "$debezium_secs" "$cdcd_secs")")
}

# mariadb_offsets_note STATUS says what `mariadb_side_by_side.py offsets` found (yes, or its exit status).
mariadb_offsets_note() {
	case $1 in
	yes) ;;
	3) echo ', offsets NOT COMPARABLE: the server had transactions after the end marker' ;;
	*) echo ', cdcd offset shape WRONG' ;;
	esac
}

PG_RUN= # set when the run has PostgreSQL variants: only then is the PostgreSQL side cleaned up

cleanup() {
	stop_cdcd
	if [[ -n $MDB_WORKER_STARTED ]]; then "${MDB_CONNECT[@]}" stop; fi
	if [[ -n $PG_RUN ]]; then
		"$CONNECT" stop
		drop_slots || true
	fi
}

ensure_kcat() { # seeds cdcd's schema history topic
	command -v kcat >/dev/null && return 0
	log "installing kcat"
	DEBIAN_FRONTEND=noninteractive apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends kcat >/dev/null
}

main() {
	local variants=("$@")
	((${#variants[@]})) || read -ra variants <<<"${CDCD_CONFORMANCE_VARIANTS:-}"
	if ((${#variants[@]} == 0)); then
		# Every golden variant: PostgreSQL's by name, then MariaDB's under mariadb/.
		mapfile -t variants < <(python3 -c '
import json, sys
for manifest, prefix in zip(sys.argv[1::2], sys.argv[2::2]):
    for v in json.load(open(manifest))["variants"]:
        print(prefix + v)' "$GOLDENS/MANIFEST.json" "" "$MDB_GOLDENS/MANIFEST.json" "$MDB")
	fi
	local v mariadb_run=
	for v in "${variants[@]}"; do
		if [[ $v == "$MDB"* ]]; then
			[[ -r $MDB_GOLDENS/${v#"$MDB"}/connector.properties ]] || die "no golden variant ${v#"$MDB"} under $MDB_GOLDENS"
			mariadb_run=1
		else
			[[ -r $GOLDENS/$v/connector.properties ]] || die "no golden variant $v under $GOLDENS"
			PG_RUN=1
		fi
	done

	"$REPO/e2e/services.sh" start kafka
	if [[ -n $PG_RUN ]]; then
		"$REPO/e2e/services.sh" start postgres
		"$CONNECT" install
	fi
	if [[ -n $mariadb_run ]]; then
		"$REPO/e2e/services.sh" start mariadb
		"${MDB_CONNECT[@]}" install
		ensure_kcat
	fi
	build_tools
	trap cleanup EXIT
	trap 'exit 130' INT TERM

	local work
	work=$(mktemp -d "${TMPDIR:-/tmp}/cdcd-conformance.XXXXXX")
	log "${#variants[@]} variants, Debezium and cdcd ($CDCD_BIN) side by side; files in $work"
	local run_start=$SECONDS
	for v in "${variants[@]}"; do
		variant_start=$SECONDS
		log "== $v"
		mkdir -p "$work/$v"
		local kind=
		[[ $v == "$MDB"* ]] && kind=mariadb_
		"run_${kind}debezium" "${v#"$MDB"}" "$work/$v"
		debezium_secs=$((SECONDS - variant_start))
		"run_${kind}cdcd" "${v#"$MDB"}" "$work/$v"
		cdcd_secs=$((SECONDS - variant_start - debezium_secs))
		"compare_${kind}variant" "$v" "$work/$v"
	done

	log "summary: variant, verdict, records debezium/cdcd, differences, time ($((SECONDS - run_start))s in all):"
	printf '%s\n' "${summaries[@]}" >&2
	if ((failed)); then
		log "FAILED: cdcd and Debezium differ (files in $work)"
		exit 1
	fi
	if [[ -n ${CDCD_KEEP_RUNS:-} ]]; then log "files kept in $work"; else rm -rf "$work"; fi
	log "all ${#variants[@]} variants: cdcd matches Debezium"
}

main "$@"
