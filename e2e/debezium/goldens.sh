#!/usr/bin/env bash
# Writes the Debezium goldens: for each variant, a fresh database, slot and `pg1` topics, the real
# Debezium 3.6.1.Final on Kafka Connect 4.4.0 (connect.sh) streaming the corpus, and what it wrote.
#
#   e2e/debezium/goldens.sh postgres [-o OUT_DIR] [VARIANT...]
#
# OUT_DIR defaults to testdata/postgres; each variant gets OUT_DIR/VARIANT/{worker.properties,
# connector.properties,capture.jsonl,offsets.dat,offsets.json} and OUT_DIR gets MANIFEST.json. A golden is
# only ever written by a Debezium run: never edit these files by hand or from cdcd's output.
# Needs the services of e2e/services.sh (PostgreSQL, Kafka) running. Each run's directory (connect.log,
# offsets.dat) is removed after success unless CDCD_KEEP_RUNS is set; a failed run's is kept.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
STATE_DIR=${CDCD_E2E_DIR:-/var/tmp/cdcd-e2e}
PG_PORT=${CDCD_PG_PORT:-55432}
KAFKA_PORT=${CDCD_KAFKA_PORT:-59092}
PSQL=/usr/lib/postgresql/15/bin/psql
CONNECT=$HERE/connect.sh
BIN_DIR=$STATE_DIR/bin

# Names shared by every variant; they appear in the output (source.db, offsets keys), so a replay by cdcd
# must use the same ones, which it does by reading the stored connector.properties.
DB=cdcd_golden
SLOT=cdcd_golden
CONNECTOR_NAME=pg-golden
TOPIC_PREFIX=pg1
END_MARKER=cdcd-golden-end

PG_VARIANTS=(default schemas-off decimal-double decimal-string time-connect time-microseconds binary-base64
	binary-hex hstore-map interval-string truncate-no-tombstones message-key-columns snapshot-initial)

log() { printf '[goldens] %s\n' "$*" >&2; }
die() { printf '[goldens] error: %s\n' "$*" >&2; exit 1; }

psql_admin() { "$PSQL" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PG_PORT" -U postgres "$@"; }

build_tools() {
	mkdir -p "$BIN_DIR"
	(cd "$REPO" && go build -o "$BIN_DIR/capture" ./e2e/cmd/capture && go build -o "$BIN_DIR/compare" ./e2e/cmd/compare)
}

# variant_connector_props VARIANT prints the connector properties that differ from the defaults.
variant_connector_props() {
	case $1 in
	default | schemas-off) ;;
	decimal-double) echo "decimal.handling.mode=double" ;;
	decimal-string) echo "decimal.handling.mode=string" ;;
	time-connect) echo "time.precision.mode=connect" ;;
	time-microseconds) echo "time.precision.mode=microseconds" ;;
	binary-base64) echo "binary.handling.mode=base64" ;;
	binary-hex) echo "binary.handling.mode=hex" ;;
	hstore-map) echo "hstore.handling.mode=map" ;;
	interval-string) echo "interval.handling.mode=string" ;;
	truncate-no-tombstones) printf '%s\n' "skipped.operations=none" "tombstones.on.delete=false" ;;
	message-key-columns) echo "message.key.columns=public.no_pk_full:a;public.composite_pk:v" ;;
	snapshot-initial) ;;
	*) die "unknown postgres variant $1" ;;
	esac
}

write_worker_props() { # VARIANT FILE
	local schemas=true
	[[ $1 == schemas-off ]] && schemas=false
	cat >"$2" <<-EOF
		bootstrap.servers=127.0.0.1:$KAFKA_PORT
		key.converter=org.apache.kafka.connect.json.JsonConverter
		value.converter=org.apache.kafka.connect.json.JsonConverter
		key.converter.schemas.enable=$schemas
		value.converter.schemas.enable=$schemas
		offset.storage.file.filename=offsets.dat
		offset.flush.interval.ms=1000
		listeners=http://127.0.0.1:58083
	EOF
}

write_connector_props() { # VARIANT FILE
	local snapshot_mode=no_data
	[[ $1 == snapshot-initial ]] && snapshot_mode=initial
	{
		cat <<-EOF
			name=$CONNECTOR_NAME
			connector.class=io.debezium.connector.postgresql.PostgresConnector
			tasks.max=1
			database.hostname=127.0.0.1
			database.port=$PG_PORT
			database.user=postgres
			database.password=postgres
			database.dbname=$DB
			topic.prefix=$TOPIC_PREFIX
			plugin.name=pgoutput
			slot.name=$SLOT
			publication.name=$SLOT
			snapshot.mode=$snapshot_mode
		EOF
		variant_connector_props "$1"
	} >"$2"
}

# fresh_database drops the slot and database of a previous run and recreates them from the corpus.
fresh_database() { # VARIANT
	local corpus=$REPO/testdata/postgres/corpus
	psql_admin -d postgres -c "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = '$SLOT'" >/dev/null
	psql_admin -d postgres -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)"
	psql_admin -d postgres -c "CREATE DATABASE $DB"
	psql_admin -d "$DB" -f "$corpus/schema.sql" >/dev/null
	if [[ $1 == snapshot-initial ]]; then psql_admin -d "$DB" -f "$corpus/seed.sql" >/dev/null; fi
}

wait_slot_active() {
	local deadline=$((SECONDS + 120))
	until [[ $(psql_admin -At -d postgres -c "SELECT active FROM pg_replication_slots WHERE slot_name = '$SLOT'") == t ]]; do
		((SECONDS < deadline)) || die "slot $SLOT never became active"
		sleep 0.5
	done
}

run_pg_variant() { # VARIANT OUT_DIR
	local variant=$1 dir=$2/$1 run_dir
	log "postgres/$variant"
	mkdir -p "$dir"
	run_dir=$(mktemp -d "$STATE_DIR/debezium/run-$variant.XXXXXX")
	write_worker_props "$variant" "$dir/worker.properties"
	write_connector_props "$variant" "$dir/connector.properties"
	"$CONNECT" stop
	fresh_database "$variant"
	"$BIN_DIR/capture" -brokers "127.0.0.1:$KAFKA_PORT" -prefix "$TOPIC_PREFIX" -delete
	"$CONNECT" run "$dir/worker.properties" "$dir/connector.properties" "$run_dir"
	"$CONNECT" wait-running "$CONNECTOR_NAME"
	wait_slot_active
	if [[ $variant == snapshot-initial ]]; then
		# The snapshot's last row is the only record whose payload says so.
		"$BIN_DIR/capture" -brokers "127.0.0.1:$KAFKA_PORT" -prefix "$TOPIC_PREFIX" -wait-for '"snapshot":"last"' -o /dev/null
	fi
	psql_admin -d "$DB" -f "$REPO/testdata/postgres/corpus/changes.sql" >/dev/null
	"$BIN_DIR/capture" -brokers "127.0.0.1:$KAFKA_PORT" -prefix "$TOPIC_PREFIX" -wait-for "$END_MARKER" -quiet 3s \
		-o "$dir/capture.jsonl"
	sleep 2 # let one offset flush (offset.flush.interval.ms=1000) pass; stop flushes once more
	"$CONNECT" stop
	grep -q 'ERROR' "$run_dir/connect.log" && log "warning: $run_dir/connect.log has ERROR lines"
	cp "$run_dir/offsets.dat" "$dir/offsets.dat"
	"$CONNECT" offsets "$dir/offsets.dat" >"$dir/offsets.json"
	log "postgres/$variant: $(wc -l <"$dir/capture.jsonl") records"
	[[ -n ${CDCD_KEEP_RUNS:-} ]] || rm -rf "$run_dir"
}

write_manifest() { # OUT_DIR VARIANT...
	local out=$1
	shift
	local java_version pg_version
	java_version=$("$CONNECT" java-version)
	pg_version=$(psql_admin -At -d postgres -c 'SELECT version()')
	JAVA_VERSION=$java_version PG_VERSION=$pg_version python3 - "$out/MANIFEST.json" "$@" <<-'EOF'
		import json, os, sys, datetime
		out, variants = sys.argv[1], sys.argv[2:]
		manifest = {
		    "debezium": "3.6.1.Final",
		    "kafka_connect": "4.4.0",
		    "java_version": os.environ["JAVA_VERSION"].splitlines(),
		    "postgres_version": os.environ["PG_VERSION"],
		    "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
		    "variants": variants,
		}
		with open(out, "w") as f:
		    json.dump(manifest, f, indent=2)
		    f.write("\n")
	EOF
}

# cleanup stops the worker and drops the slot, which would otherwise retain WAL for good.
cleanup() {
	"$CONNECT" stop
	psql_admin -d postgres -c "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = '$SLOT'" >/dev/null || true
}

cmd_postgres() {
	local out=$REPO/testdata/postgres
	if [[ ${1:-} == -o ]]; then
		out=$2
		shift 2
	fi
	local variants=("$@")
	((${#variants[@]})) || variants=("${PG_VARIANTS[@]}")
	"$CONNECT" install
	build_tools
	mkdir -p "$out"
	trap cleanup EXIT
	local v
	for v in "${variants[@]}"; do run_pg_variant "$v" "$out"; done
	write_manifest "$out" "${variants[@]}"
}

case ${1:-} in
postgres) shift && cmd_postgres "$@" ;;
*) die "usage: goldens.sh postgres [-o OUT_DIR] [VARIANT...]" ;;
esac
