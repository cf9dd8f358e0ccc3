#!/usr/bin/env bash
# What `make conformance` runs: cdcd side by side with the real Debezium 3.6.1.Final (connect.sh) on ONE
# database per PostgreSQL golden variant, so positions, transaction ids and commit times must agree too.
#
#   e2e/debezium/conformance.sh [VARIANT...]     (default: every variant of testdata/postgres/MANIFEST.json;
#                                                 CDCD_CONFORMANCE_VARIANTS="a b" works as well)
#
# Per variant, with the golden's own worker.properties and connector.properties:
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
# snapshot-initial is the exception: a slot made up front cannot export Debezium's snapshot, so cdcd runs
# that variant on a second fresh database and is compared with Debezium's capture in replay mode.
#
# Uses the services of e2e/services.sh (started here). Builds cdcd from this work tree unless CDCD_BIN
# names a binary. Exit status 1 when any comparison differs; the run's files are then kept (and always with
# CDCD_KEEP_RUNS set). Shares database, slot and topic names with goldens.sh and TestPostgresGoldens
# (they appear in the events), so run one of them at a time.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
STATE_DIR=${CDCD_E2E_DIR:-/var/tmp/cdcd-e2e}
PG_PORT=${CDCD_PG_PORT:-55432}
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
SNAPSHOT_VARIANT=snapshot-initial

log() { printf '[conformance] %s\n' "$*" >&2; }
die() { printf '[conformance] error: %s\n' "$*" >&2; exit 2; }

psql_admin() { "$PSQL" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PG_PORT" -U postgres "$@"; }
capture() { "$CAPTURE" -brokers "127.0.0.1:$KAFKA_PORT" -prefix "$TOPIC_PREFIX" "$@"; }

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

# fresh_database VARIANT [cdcd-slot] recreates the database from the corpus with the publication and, when
# asked, cdcd's slot: made before any change, it decodes the same WAL as the slot Debezium makes later.
fresh_database() {
	drop_slots
	psql_admin -d postgres -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)"
	psql_admin -d postgres -c "CREATE DATABASE $DB"
	psql_admin -d "$DB" -f "$CORPUS/schema.sql" >/dev/null
	psql_admin -d "$DB" -c "CREATE PUBLICATION $PUBLICATION FOR ALL TABLES"
	[[ ${2:-} == cdcd-slot ]] && psql_admin -d "$DB" -c "SELECT pg_create_logical_replication_slot('$CDCD_SLOT', 'pgoutput')" >/dev/null
	[[ $1 == "$SNAPSHOT_VARIANT" ]] && psql_admin -d "$DB" -f "$CORPUS/seed.sql" >/dev/null
	return 0
}

wait_slot_active() { # SLOT
	local deadline=$((SECONDS + 120))
	until [[ $(psql_admin -At -d postgres -c "SELECT active FROM pg_replication_slots WHERE slot_name = '$1'") == t ]]; do
		((SECONDS < deadline)) || die "slot $1 never became active"
		sleep 0.5
	done
}

# run_changes runs the corpus's changes once the connector is streaming: for the snapshot variant, after the
# snapshot's last row, the only record whose payload says so.
run_changes() { # VARIANT
	[[ $1 == "$SNAPSHOT_VARIANT" ]] && capture -wait-for '"snapshot":"last"' -o /dev/null
	psql_admin -d "$DB" -f "$CORPUS/changes.sql" >/dev/null
}

capture_until_end() { # OUT
	capture -wait-for "$END_MARKER" -quiet 3s -o "$1"
	sleep 2 # let one offset flush (offset.flush.interval.ms=1000) pass; a stop records offsets once more
}

run_debezium() { # VARIANT DIR
	local v=$1 dir=$2 run_dir=$2/debezium-run
	"$CONNECT" stop
	if [[ $v == "$SNAPSHOT_VARIANT" ]]; then fresh_database "$v"; else fresh_database "$v" cdcd-slot; fi
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

wait_cdcd_running() { # PORT LOG
	local deadline=$((SECONDS + CDCD_START_TIMEOUT)) status=
	while ((SECONDS < deadline)); do
		kill -0 "$CDCD_PID" 2>/dev/null || die "cdcd exited; see $2"
		status=$(curl -fsS "http://127.0.0.1:$1/connectors/$CONNECTOR_NAME/status" 2>/dev/null || true)
		[[ $status == *'"connector":{"state":"RUNNING"'* && $status == *'"tasks":[{"id":0,"state":"RUNNING"'* ]] && return 0
		[[ $status == *'"state":"FAILED"'* ]] && die "cdcd's connector failed: $status"
		sleep 0.5
	done
	die "cdcd's connector not RUNNING after ${CDCD_START_TIMEOUT}s: $status"
}

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

run_cdcd() { # VARIANT DIR
	local v=$1 dir=$2 run_dir=$2/cdcd-run port snapshot_mode=no_data
	capture -delete
	if [[ $v == "$SNAPSHOT_VARIANT" ]]; then
		fresh_database "$v" # cdcd makes its slot and exports its own snapshot, as Debezium did
		snapshot_mode=initial
	fi
	mkdir -p "$run_dir"
	port=$(free_port)
	with_props "$GOLDENS/$v/worker.properties" "$run_dir/worker.properties" \
		"offset.storage.file.filename=$run_dir/offsets.dat" "listeners=http://127.0.0.1:$port"
	with_props "$GOLDENS/$v/connector.properties" "$run_dir/connector.properties" \
		"slot.name=$CDCD_SLOT" "snapshot.mode=$snapshot_mode"
	log "starting cdcd on port $port (log $run_dir/cdcd.log)"
	(cd "$run_dir" && exec setsid "$CDCD_BIN" standalone worker.properties connector.properties) >"$run_dir/cdcd.log" 2>&1 &
	CDCD_PID=$!
	wait_cdcd_running "$port" "$run_dir/cdcd.log"
	wait_slot_active "$CDCD_SLOT"
	# Streaming variants: the changes are already in the WAL cdcd's slot holds.
	[[ $v == "$SNAPSHOT_VARIANT" ]] && run_changes "$v"
	capture_until_end "$dir/cdcd.jsonl"
	stop_cdcd
	grep -q 'level=ERROR' "$run_dir/cdcd.log" && log "warning: $run_dir/cdcd.log has ERROR lines"
	"$CONNECT" offsets "$run_dir/offsets.dat" >"$dir/cdcd.offsets.json"
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

summaries=()   # one line per variant, printed at the end
failed=0       # 1 once any variant differs
variant_start=0 debezium_secs=0 cdcd_secs=0 # the current variant's timings, in seconds

# compare_variant VARIANT DIR prints every difference and records the variant's summary line.
compare_variant() {
	local v=$1 dir=$2 mode=same-db side_flag=
	if [[ $v == "$SNAPSHOT_VARIANT" ]]; then
		mode=replay side_flag=--replay
		log "$v: cdcd ran on its own fresh database (a slot made up front cannot export Debezium's snapshot); comparing in replay mode"
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

cleanup() {
	stop_cdcd
	"$CONNECT" stop
	drop_slots || true
}

main() {
	local variants=("$@")
	((${#variants[@]})) || read -ra variants <<<"${CDCD_CONFORMANCE_VARIANTS:-}"
	if ((${#variants[@]} == 0)); then
		mapfile -t variants < <(python3 -c 'import json,sys; print("\n".join(json.load(open(sys.argv[1]))["variants"]))' "$GOLDENS/MANIFEST.json")
	fi
	local v
	for v in "${variants[@]}"; do [[ -r $GOLDENS/$v/connector.properties ]] || die "no golden variant $v under $GOLDENS"; done

	"$REPO/e2e/services.sh" start postgres
	"$REPO/e2e/services.sh" start kafka
	"$CONNECT" install
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
		run_debezium "$v" "$work/$v"
		debezium_secs=$((SECONDS - variant_start))
		run_cdcd "$v" "$work/$v"
		cdcd_secs=$((SECONDS - variant_start - debezium_secs))
		compare_variant "$v" "$work/$v"
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
