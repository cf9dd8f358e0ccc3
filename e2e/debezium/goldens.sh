#!/usr/bin/env bash
# Writes the Debezium goldens: for each variant, a fresh database, slot and `pg1` topics, the real
# Debezium 3.6.1.Final on Kafka Connect 4.4.0 (connect.sh) streaming the corpus, and what it wrote.
#
#   e2e/debezium/goldens.sh postgres [-o OUT_DIR] [VARIANT...]
#   e2e/debezium/goldens.sh mariadb [-o OUT_DIR] [VARIANT...]
#
# OUT_DIR defaults to testdata/postgres (testdata/mariadb); each variant gets OUT_DIR/VARIANT/{worker.properties,
# connector.properties,capture.jsonl,offsets.dat,offsets.json} and OUT_DIR gets MANIFEST.json. A golden is
# only ever written by a Debezium run: never edit these files by hand or from cdcd's output.
# Needs the services of e2e/services.sh (PostgreSQL or MariaDB, Kafka) running. Each run's directory
# (connect.log, offsets.dat) is removed after success unless CDCD_KEEP_RUNS is set; a failed run's is kept.
#
# MariaDB: the registry serves no Debezium 3.6.1.Final MariaDB connector, so its goldens are 3.5.0.Final's
# (connect.sh's `mariadb` instance, a second worker beside the PostgreSQL one; MANIFEST.json says so).
# Every variant snapshots seed.sql (snapshot.mode=initial) and then streams changes.sql; a variant also gets
# schema-history.jsonl, the records of the internal schema history topic.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
STATE_DIR=${CDCD_E2E_DIR:-/var/tmp/cdcd-e2e}
PG_PORT=${CDCD_PG_PORT:-55432}
MARIADB_PORT=${CDCD_MARIADB_PORT:-53306}
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
	binary-hex hstore-map interval-string truncate-no-tombstones message-key-columns snapshot-initial
	transforms-unwrap transforms-router transforms-fields transforms-outbox transforms-outbox-expand transforms-kafka columns
	transaction-metadata incremental-snapshot incremental-notifications snapshot-initial-notifications
	blocking-snapshot partition-root snapshot-initial-select-override)

# The MariaDB reference runs as connect.sh's `mariadb` instance (REST port 58084), so it never touches a
# PostgreSQL worker another run may have going.
MDB_CONNECT=(env CDCD_CONNECT_INSTANCE=mariadb "$CONNECT")
MDB_REST_PORT=58084
MDB_CONNECTOR_NAME=mdb-golden
MDB_TOPIC_PREFIX=mdb1
MDB_HISTORY_TOPIC=mdb1-schema-history
# database.server.id must be unique among the server's replicas; no other cdcd test uses this one.
MDB_SERVER_ID=85401
MDB_VARIANTS=(default schemas-off decimal-string bigint-precise time-connect binary-base64 truncate-no-tombstones columns include-query
	transaction-metadata incremental-snapshot incremental-notifications message-key-columns snapshot-include select-override boolean-converter blocking-snapshot)

log() { printf '[goldens] %s\n' "$*" >&2; }
die() { printf '[goldens] error: %s\n' "$*" >&2; exit 1; }

psql_admin() { "$PSQL" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PG_PORT" -U postgres "$@"; }

mariadb_admin() {
	MYSQL_PWD=cdcd mariadb --no-defaults --protocol=TCP -h 127.0.0.1 -P "$MARIADB_PORT" -u root \
		--default-character-set=utf8mb4 "$@"
}

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
	snapshot-initial-select-override)
		# The initial snapshot reads two tables with the user's SELECTs: some rows and columns of one (the
		# others null: the serials are NOT NULL, and Debezium fails unless the last column is read), all of the other with its columns reordered.
		printf '%s\n' "snapshot.select.statement.overrides=public.numeric_types,public.composite_pk" \
			"snapshot.select.statement.overrides.public.numeric_types=SELECT id, f8, ss, bs, money_col FROM public.numeric_types WHERE id > 1001" \
			"snapshot.select.statement.overrides.public.composite_pk=SELECT v, id, tenant FROM public.composite_pk"
		;;
	snapshot-initial-notifications) # the initial snapshot's notifications on a topic the capture reads
		printf '%s\n' "notification.enabled.channels=sink" "notification.sink.topic.name=pg1.notifications"
		;;
	transaction-metadata) echo "provide.transaction.metadata=true" ;; # BEGIN/END on pg1.transaction, event blocks
	incremental-snapshot)
		# An execute-snapshot signal in the signal table (extra-changes.sql) for a table streaming never
		# touched (extra-schema.sql), read in chunks of 10 between watermark rows in the same table.
		printf '%s\n' "signal.data.collection=public.debezium_signal" "incremental.snapshot.chunk.size=10"
		;;
	blocking-snapshot)
		# An execute-snapshot signal of type blocking in the signal table (extra-changes.sql): streaming
		# pauses while a table it never touched (extra-schema.sql) is read again, then resumes.
		echo "signal.data.collection=public.debezium_signal"
		;;
	partition-root)
		# The publication Debezium creates (FOR ALL TABLES) publishes through partition roots: the changes
		# of part_root's partitions (extra-schema.sql, extra-changes.sql) are part_root's.
		echo "publish.via.partition.root=true"
		;;
	incremental-notifications)
		# The incremental-snapshot variant with Debezium's notifications on a topic the capture reads.
		printf '%s\n' "signal.data.collection=public.debezium_signal" "incremental.snapshot.chunk.size=10" \
			"notification.enabled.channels=sink,log" "notification.sink.topic.name=pg1.notifications"
		;;
	transforms-unwrap)
		printf '%s\n' "transforms=unwrap" "transforms.unwrap.type=io.debezium.transforms.ExtractNewRecordState" \
			"transforms.unwrap.delete.tombstone.handling.mode=rewrite" \
			"transforms.unwrap.add.fields=op,table,lsn,source.ts_ms" "transforms.unwrap.add.headers=db"
		;;
	transforms-router)
		# Two routers in a chain: "types" merges the five *_types tables into pg1.types with the default key
		# field (the original topic); "keyed" merges two more tables, naming the key field and deriving its
		# value with key.field.regex. Backslashes are doubled for the properties file.
		printf '%s\n' "transforms=types,keyed" \
			"transforms.types.type=io.debezium.transforms.ByLogicalTableRouter" \
			'transforms.types.topic.regex=pg1\\.public\\.(.*)_types' "transforms.types.topic.replacement=pg1.types" \
			"transforms.keyed.type=io.debezium.transforms.ByLogicalTableRouter" \
			'transforms.keyed.topic.regex=pg1\\.public\\.(composite_pk|full_identity)' \
			"transforms.keyed.topic.replacement=pg1.keyed" "transforms.keyed.key.field.name=source_table" \
			'transforms.keyed.key.field.regex=pg1\\.public\\.(.*)' 'transforms.keyed.key.field.replacement=$1'
		;;
	transforms-fields)
		# Kafka's field transforms after the unwrap, each limited by a predicate to tables they can run on:
		# the *_types tables get their key rebuilt from the value and then flattened to the bare id,
		# composite_pk's value becomes its v column.
		printf '%s\n' "transforms=unwrap,key,flat,value" \
			"transforms.unwrap.type=io.debezium.transforms.ExtractNewRecordState" \
			"transforms.unwrap.delete.tombstone.handling.mode=rewrite" \
			"transforms.key.type=org.apache.kafka.connect.transforms.ValueToKey" "transforms.key.fields=id,__deleted" \
			"transforms.key.predicate=types" \
			'transforms.flat.type=org.apache.kafka.connect.transforms.ExtractField$Key' "transforms.flat.field=id" \
			"transforms.flat.predicate=types" \
			'transforms.value.type=org.apache.kafka.connect.transforms.ExtractField$Value' "transforms.value.field=v" \
			"transforms.value.predicate=composite" \
			"predicates=types,composite" \
			"predicates.types.type=org.apache.kafka.connect.transforms.predicates.TopicNameMatches" \
			'predicates.types.pattern=pg1\\.public\\..*_types' \
			"predicates.composite.type=org.apache.kafka.connect.transforms.predicates.TopicNameMatches" \
			'predicates.composite.pattern=pg1\\.public\\.composite_pk'
		;;
	transforms-outbox)
		# The outbox pattern on the variant's own outbox table (extra-schema.sql, extra-changes.sql), limited
		# by a predicate to that table's topic, routed under the pg1 prefix the capture reads. The event type
		# goes to a header, the aggregate id also into the value envelope beside the payload.
		printf '%s\n' "transforms=outbox" \
			"transforms.outbox.type=io.debezium.transforms.outbox.EventRouter" \
			"transforms.outbox.predicate=outbox" \
			'transforms.outbox.route.topic.replacement=pg1.outbox.${routedByValue}' \
			"transforms.outbox.table.fields.additional.placement=type:header:eventType,aggregateid:envelope:aggregate" \
			"transforms.outbox.route.tombstone.on.empty.payload=true" \
			"predicates=outbox" \
			"predicates.outbox.type=org.apache.kafka.connect.transforms.predicates.TopicNameMatches" \
			'predicates.outbox.pattern=pg1\\.public\\.outbox'
		;;
	transforms-outbox-expand)
		# The outbox pattern with the record timestamp taken from the outbox table's `created` column and
		# the text payload expanded from JSON into a struct (its schema inferred from the JSON), the event
		# type beside it in the value envelope (extra-schema.sql, extra-changes.sql).
		printf '%s\n' "transforms=outbox" \
			"transforms.outbox.type=io.debezium.transforms.outbox.EventRouter" \
			"transforms.outbox.predicate=outbox" \
			'transforms.outbox.route.topic.replacement=pg1.outbox.${routedByValue}' \
			"transforms.outbox.table.fields.additional.placement=type:envelope:eventType" \
			"transforms.outbox.table.field.event.timestamp=created" \
			"transforms.outbox.table.expand.json.payload=true" \
			"predicates=outbox" \
			"predicates.outbox.type=org.apache.kafka.connect.transforms.predicates.TopicNameMatches" \
			'predicates.outbox.pattern=pg1\\.public\\.outbox'
		;;
	transforms-kafka)
		# Kafka's own transforms after the unwrap, each limited by a predicate to tables whose rows it can
		# take (a transform that fails a record fails Connect's task): every record gets a topic field, a
		# static field and a header, and all but the messages are flattened (a flattened source block would hide
		# its positions from the replay's comparison); numeric_types is masked and cast, text_types has
		# fields dropped and renamed, time_types has Debezium's millisecond and microsecond timestamps
		# converted, composite_pk gets a cast key and a header copied from the value, array_types a hoisted
		# key, range_types a renamed value schema.
		printf '%s\n' "transforms=unwrap,insert,replace,mask,maskto,tsstring,tsmicros,flat,cast,castkey,hoist,meta,header,copy" \
			"transforms.unwrap.type=io.debezium.transforms.ExtractNewRecordState" \
			"transforms.unwrap.delete.tombstone.handling.mode=rewrite" \
			'transforms.insert.type=org.apache.kafka.connect.transforms.InsertField$Value' \
			"transforms.insert.topic.field=__topic!" "transforms.insert.static.field=__origin" \
			"transforms.insert.static.value=golden" \
			'transforms.replace.type=org.apache.kafka.connect.transforms.ReplaceField$Value' \
			"transforms.replace.exclude=x,hs,mac8" "transforms.replace.renames=vc:varchar_col,txt:text_col" \
			"transforms.replace.predicate=text" \
			'transforms.mask.type=org.apache.kafka.connect.transforms.MaskField$Value' \
			"transforms.mask.fields=i2,i4,f8,bool_col,oid_col" "transforms.mask.predicate=numeric" \
			'transforms.maskto.type=org.apache.kafka.connect.transforms.MaskField$Value' \
			"transforms.maskto.fields=i8,f4,num_ps" "transforms.maskto.replacement=-7.125" \
			"transforms.maskto.predicate=numeric" \
			'transforms.tsstring.type=org.apache.kafka.connect.transforms.TimestampConverter$Value' \
			"transforms.tsstring.field=ts3" "transforms.tsstring.target.type=string" \
			"transforms.tsstring.format=EEE, d MMM yyyy HH:mm:ss.SSS 'UTC'" "transforms.tsstring.predicate=time" \
			'transforms.tsmicros.type=org.apache.kafka.connect.transforms.TimestampConverter$Value' \
			"transforms.tsmicros.field=ts6" "transforms.tsmicros.target.type=Timestamp" \
			"transforms.tsmicros.unix.precision=microseconds" "transforms.tsmicros.predicate=time" \
			'transforms.flat.type=org.apache.kafka.connect.transforms.Flatten$Value' "transforms.flat.delimiter=_" \
			"transforms.flat.predicate=message" "transforms.flat.negate=true" \
			'transforms.cast.type=org.apache.kafka.connect.transforms.Cast$Value' \
			"transforms.cast.spec=bool_col:int32,i8:string,f4:float64,num_ps:string,ss:boolean,bs:float32" \
			"transforms.cast.predicate=numeric" \
			'transforms.castkey.type=org.apache.kafka.connect.transforms.Cast$Key' "transforms.castkey.spec=tenant:string" \
			"transforms.castkey.predicate=composite" \
			'transforms.hoist.type=org.apache.kafka.connect.transforms.HoistField$Key' "transforms.hoist.field=pk" \
			"transforms.hoist.predicate=array" \
			'transforms.meta.type=org.apache.kafka.connect.transforms.SetSchemaMetadata$Value' \
			"transforms.meta.schema.name=com.example.Range" "transforms.meta.schema.version=2" \
			"transforms.meta.predicate=range" \
			"transforms.header.type=org.apache.kafka.connect.transforms.InsertHeader" \
			"transforms.header.header=origin" "transforms.header.value.literal=golden-1" \
			'transforms.copy.type=org.apache.kafka.connect.transforms.HeaderFrom$Value' \
			"transforms.copy.fields=v" "transforms.copy.headers=v" "transforms.copy.operation=copy" \
			"transforms.copy.predicate=composite" \
			"predicates=text,numeric,time,composite,array,range,message" \
			"predicates.text.type=org.apache.kafka.connect.transforms.predicates.TopicNameMatches" \
			'predicates.text.pattern=pg1\\.public\\.text_types' \
			"predicates.numeric.type=org.apache.kafka.connect.transforms.predicates.TopicNameMatches" \
			'predicates.numeric.pattern=pg1\\.public\\.numeric_types' \
			"predicates.time.type=org.apache.kafka.connect.transforms.predicates.TopicNameMatches" \
			'predicates.time.pattern=pg1\\.public\\.time_types' \
			"predicates.composite.type=org.apache.kafka.connect.transforms.predicates.TopicNameMatches" \
			'predicates.composite.pattern=pg1\\.public\\.composite_pk' \
			"predicates.array.type=org.apache.kafka.connect.transforms.predicates.TopicNameMatches" \
			'predicates.array.pattern=pg1\\.public\\.array_types' \
			"predicates.range.type=org.apache.kafka.connect.transforms.predicates.TopicNameMatches" \
			'predicates.range.pattern=pg1\\.public\\.range_types' \
			"predicates.message.type=org.apache.kafka.connect.transforms.predicates.TopicNameMatches" \
			'predicates.message.pattern=pg1\\.message'
		;;
	columns)
		# The column mappers on corpus columns of many types, and on the variant's masked_keys table (a
		# mapped primary key): truncation first, then masking, propagation and hashing, as Debezium ranks
		# them when several select one column (text_types.txt is truncated, not propagated). Patterns are
		# case-insensitive; datatype.propagate matches schema.table.typename.
		printf '%s\n' \
			'column.truncate.to.3.chars=public\\.text_types\\.(txt|bin|vc|ch),public\\.numeric_types\\.(bit1|i4),public\\.masked_keys\\.code' \
			'column.mask.with.5.chars=public\\.text_types\\.(ci|nm|m|u),public\\.defaults_table\\.nn_text,public\\.masked_keys\\.note' \
			'column.mask.hash.SHA-256.with.salt.CzQMA0cB5K=public\\.composite_pk\\.v,public\\.full_identity\\.v,public\\.defaults_table\\.opt_text,public\\.masked_keys\\.email' \
			'column.mask.hash.v2.MD5.with.salt.s.a.lt=PUBLIC\\.no_pk_full\\.B,public\\.toast_table\\.big_text' \
			'column.propagate.source.type=public\\.numeric_types\\..*,public\\.time_types\\..*,public\\.array_types\\..*,public\\.text_types\\.(dom|lt|txt)' \
			'datatype.propagate.source.type=.+\\.numrange,.+\\.DATE,.+\\.tstzrange'
		;;
	*) die "unknown postgres variant $1" ;;
	esac
}

write_worker_props() { # VARIANT FILE [REST_PORT]
	local schemas=true rest_port=${3:-58083}
	[[ $1 == schemas-off ]] && schemas=false
	cat >"$2" <<-EOF
		bootstrap.servers=127.0.0.1:$KAFKA_PORT
		key.converter=org.apache.kafka.connect.json.JsonConverter
		value.converter=org.apache.kafka.connect.json.JsonConverter
		key.converter.schemas.enable=$schemas
		value.converter.schemas.enable=$schemas
		offset.storage.file.filename=offsets.dat
		offset.flush.interval.ms=1000
		listeners=http://127.0.0.1:$rest_port
	EOF
}

write_connector_props() { # VARIANT FILE
	local snapshot_mode=no_data
	[[ $1 == snapshot-initial* ]] && snapshot_mode=initial # snapshot-initial and its variants
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

# A variant's own SQL, beside its goldens: extra-schema.sql runs after the corpus schema, extra-changes.sql
# before the corpus changes (whose end marker stays last). e2e/golden_test.go's replay runs them the same way.
run_variant_sql() { # VARIANT FILE
	local file=$REPO/testdata/postgres/$1/$2
	if [[ -f $file ]]; then psql_admin -d "$DB" -f "$file" >/dev/null; fi
}

# fresh_database drops the slot and database of a previous run and recreates them from the corpus.
fresh_database() { # VARIANT
	local corpus=$REPO/testdata/postgres/corpus
	psql_admin -d postgres -c "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = '$SLOT'" >/dev/null
	psql_admin -d postgres -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)"
	psql_admin -d postgres -c "CREATE DATABASE $DB"
	psql_admin -d "$DB" -f "$corpus/schema.sql" >/dev/null
	run_variant_sql "$1" extra-schema.sql
	if [[ $1 == snapshot-initial* ]]; then psql_admin -d "$DB" -f "$corpus/seed.sql" >/dev/null; fi
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
	if [[ $variant == snapshot-initial* ]]; then
		# The snapshot's last row is the only record whose payload says so.
		"$BIN_DIR/capture" -brokers "127.0.0.1:$KAFKA_PORT" -prefix "$TOPIC_PREFIX" -wait-for '"snapshot":"last"' -o /dev/null
	fi
	run_variant_sql "$variant" extra-changes.sql
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

# write_manifest OUT_DIR DEBEZIUM_VERSION NOTE DB_KEY DB_VERSION VARIANT... records what wrote the goldens;
# an empty NOTE is left out.
write_manifest() {
	local out=$1 debezium_version=$2 note=$3 db_key=$4 db_version=$5
	shift 5
	local java_version
	java_version=$("$CONNECT" java-version)
	JAVA_VERSION=$java_version DEBEZIUM_VERSION=$debezium_version NOTE=$note DB_KEY=$db_key DB_VERSION=$db_version \
		python3 - "$out/MANIFEST.json" "$@" <<-'EOF'
		import json, os, sys, datetime
		out, variants = sys.argv[1], sys.argv[2:]
		# A run of some variants keeps the others in the list: their goldens are still in OUT_DIR.
		if os.path.exists(out):
		    with open(out) as f:
		        earlier = json.load(f).get("variants", [])
		    variants = earlier + [v for v in variants if v not in earlier]
		manifest = {"debezium": os.environ["DEBEZIUM_VERSION"]}
		if os.environ["NOTE"]:
		    manifest["debezium_note"] = os.environ["NOTE"]
		manifest.update({
		    "kafka_connect": "4.4.0",
		    "java_version": os.environ["JAVA_VERSION"].splitlines(),
		    os.environ["DB_KEY"]: os.environ["DB_VERSION"],
		    "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
		    "variants": variants,
		})
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
	write_manifest "$out" "$("$CONNECT" debezium-version)" "" postgres_version \
		"$(psql_admin -At -d postgres -c 'SELECT version()')" "${variants[@]}"
}

# mariadb_variant_connector_props VARIANT prints the connector properties that differ from the defaults.
mariadb_variant_connector_props() {
	case $1 in
	default | schemas-off) ;;
	decimal-string) echo "decimal.handling.mode=string" ;;
	bigint-precise) echo "bigint.unsigned.handling.mode=precise" ;;
	time-connect) echo "time.precision.mode=connect" ;;
	binary-base64) echo "binary.handling.mode=base64" ;;
	truncate-no-tombstones) printf '%s\n' "skipped.operations=none" "tombstones.on.delete=false" ;;
	include-query) echo "include.query=true" ;; # source.query from the binlog's annotate rows events
	# A key for the table without a primary key, and another key than the primary key for composite_pk.
	message-key-columns) echo "message.key.columns=cdcd_golden.no_pk:a;cdcd_golden.composite_pk:v" ;;
	# The snapshot reads the rows of two tables; the others' schemas are read, their changes streamed.
	snapshot-include) echo 'snapshot.include.collection.list=cdcd_golden\.no_pk,cdcd_golden\.composite_pk' ;;
	boolean-converter)
		# Debezium's TinyIntOneToBooleanConverter on the variant's flags table (extra-schema.sql): its
		# TINYINT(1) columns but f_unselected, which the selector leaves out, and f_wide, which is TINYINT(4).
		printf '%s\n' "converters=boolean" "boolean.type=io.debezium.connector.binlog.converters.TinyIntOneToBooleanConverter" \
			'boolean.selector=cdcd_golden\.flags\.f_(null|required|unsigned|wide)'
		;;
	select-override)
		# The snapshot reads two tables with the user's SELECTs: some rows, the columns reordered.
		printf '%s\n' "snapshot.select.statement.overrides=cdcd_golden.no_pk,cdcd_golden.composite_pk" \
			"snapshot.select.statement.overrides.cdcd_golden.no_pk=SELECT b, a FROM cdcd_golden.no_pk WHERE a IS NOT NULL" \
			"snapshot.select.statement.overrides.cdcd_golden.composite_pk=SELECT v, k2, k1 FROM cdcd_golden.composite_pk WHERE k1 = 1"
		;;
	transaction-metadata) echo "provide.transaction.metadata=true" ;; # BEGIN/END on mdb1.transaction, event blocks
	incremental-snapshot)
		# As PostgreSQL's variant: an execute-snapshot signal in the signal table (extra-changes.sql) for a
		# table streaming never touches (extra-schema.sql), read in chunks of 10 between watermark rows.
		printf '%s\n' "signal.data.collection=$DB.debezium_signal" "incremental.snapshot.chunk.size=10"
		;;
	blocking-snapshot)
		# An execute-snapshot signal of type blocking in the signal table (extra-changes.sql): streaming
		# pauses while a table it never touched (extra-schema.sql) is read again, then resumes.
		echo "signal.data.collection=$DB.debezium_signal"
		;;
	incremental-notifications)
		# The incremental-snapshot variant with Debezium's notifications (the initial snapshot's too).
		printf '%s\n' "signal.data.collection=$DB.debezium_signal" "incremental.snapshot.chunk.size=10" \
			"notification.enabled.channels=sink,log" "notification.sink.topic.name=$MDB_TOPIC_PREFIX.notifications"
		;;
	columns)
		# The column mappers, as in the PostgreSQL variant: composite_pk.k2 is a masked key column, all_types'
		# columns not truncated or masked get their source types propagated, binary(4) is too short to
		# truncate to 4, latin1's varchar(32) cuts its digest to 32.
		printf '%s\n' \
			'column.truncate.to.4.chars=cdcd_golden\\.all_types\\.(c_char|c_varchar|c_text|c_blob|c_varbinary|c_binary|c_int),cdcd_golden\\.unicode_tbl\\.c_utf8mb4' \
			'column.mask.with.3.chars=cdcd_golden\\.all_types\\.(c_enum|c_set|c_json|c_date),cdcd_golden\\.composite_pk\\.k2,cdcd_golden\\.defaults_tbl\\.d_varchar' \
			'column.mask.hash.SHA-256.with.salt.pepper=cdcd_golden\\.unicode_tbl\\.(c_latin1|c_text_utf8),cdcd_golden\\.all_types\\.c_longtext' \
			'column.mask.hash.v2.SHA-1.with.salt.x.y=CDCD_GOLDEN\\.composite_pk\\.V,cdcd_golden\\.no_pk\\.b' \
			'column.propagate.source.type=cdcd_golden\\.all_types\\..*,cdcd_golden\\.defaults_tbl\\..*' \
			'datatype.propagate.source.type=.+\\.TIMESTAMP,.+\\.datetime'
		;;
	*) die "unknown mariadb variant $1" ;;
	esac
}

write_mariadb_connector_props() { # VARIANT FILE
	{
		cat <<-EOF
			name=$MDB_CONNECTOR_NAME
			connector.class=io.debezium.connector.mariadb.MariaDbConnector
			tasks.max=1
			database.hostname=127.0.0.1
			database.port=$MARIADB_PORT
			database.user=cdcd
			database.password=cdcd
			database.server.id=$MDB_SERVER_ID
			database.include.list=$DB
			topic.prefix=$MDB_TOPIC_PREFIX
			schema.history.internal.kafka.topic=$MDB_HISTORY_TOPIC
			schema.history.internal.kafka.bootstrap.servers=127.0.0.1:$KAFKA_PORT
			snapshot.mode=initial
		EOF
		mariadb_variant_connector_props "$1"
	} >"$2"
}

# A MariaDB variant's own SQL, as run_variant_sql's: extra-schema.sql after the corpus schema (so the initial
# snapshot reads its tables too), extra-changes.sql before the corpus changes. e2e/mariadb_golden_test.go's
# replay runs them the same way.
run_mariadb_variant_sql() { # VARIANT FILE
	local file=$REPO/testdata/mariadb/$1/$2
	if [[ -f $file ]]; then mariadb_admin "$DB" <"$file"; fi
}

fresh_mariadb_database() { # VARIANT
	local corpus=$REPO/testdata/mariadb/corpus
	mariadb_admin -e "DROP DATABASE IF EXISTS $DB; CREATE DATABASE $DB CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci"
	mariadb_admin "$DB" <"$corpus/schema.sql"
	run_mariadb_variant_sql "$1" extra-schema.sql
	mariadb_admin "$DB" <"$corpus/seed.sql"
}

mdb_capture() { "$BIN_DIR/capture" -brokers "127.0.0.1:$KAFKA_PORT" "$@"; }

# wait_mariadb_snapshot returns once the snapshot's last row is out: changes made before then would still be
# read from the binlog, but their place among the snapshot records would vary from run to run. The task can
# fail after it was RUNNING (a DDL it cannot parse), so its state is checked between reads.
wait_mariadb_snapshot() {
	local deadline=$((SECONDS + 180)) status
	until mdb_capture -prefix "$MDB_TOPIC_PREFIX" -wait-for '"snapshot":"last"' -timeout 5s -o /dev/null 2>/dev/null; do
		status=$(curl -fsS "http://127.0.0.1:$MDB_REST_PORT/connectors/$MDB_CONNECTOR_NAME/status" 2>/dev/null || true)
		[[ $status == *'"state":"FAILED"'* ]] && die "connector $MDB_CONNECTOR_NAME failed during its snapshot: $status"
		((SECONDS < deadline)) || die "the snapshot of $MDB_CONNECTOR_NAME did not end within 180s"
	done
}

run_mariadb_variant() { # VARIANT OUT_DIR
	local variant=$1 dir=$2/$1 run_dir started=$SECONDS
	log "mariadb/$variant"
	mkdir -p "$dir"
	run_dir=$(mktemp -d "$STATE_DIR/debezium/run-mariadb-$variant.XXXXXX")
	write_worker_props "$variant" "$dir/worker.properties" "$MDB_REST_PORT"
	write_mariadb_connector_props "$variant" "$dir/connector.properties"
	"${MDB_CONNECT[@]}" stop
	fresh_mariadb_database "$variant"
	mdb_capture -prefix "$MDB_TOPIC_PREFIX" -topics "$MDB_HISTORY_TOPIC" -delete
	"${MDB_CONNECT[@]}" run "$dir/worker.properties" "$dir/connector.properties" "$run_dir"
	"${MDB_CONNECT[@]}" wait-running "$MDB_CONNECTOR_NAME"
	wait_mariadb_snapshot
	run_mariadb_variant_sql "$variant" extra-changes.sql
	mariadb_admin "$DB" <"$REPO/testdata/mariadb/corpus/changes.sql"
	mdb_capture -prefix "$MDB_TOPIC_PREFIX" -wait-for "$END_MARKER" -quiet 3s -o "$dir/capture.jsonl"
	mdb_capture -topics "$MDB_HISTORY_TOPIC" -o "$dir/schema-history.jsonl"
	sleep 2 # let one offset flush (offset.flush.interval.ms=1000) pass; stop flushes once more
	"${MDB_CONNECT[@]}" stop
	grep -q 'ERROR' "$run_dir/connect.log" && log "warning: $run_dir/connect.log has ERROR lines"
	# The history also records DDL of databases the connector does not capture, e.g. those of tests that
	# ran meanwhile on the same server; such a golden is valid but not reproducible.
	grep -o '\\"databaseName\\" : \\"[^\\]*' "$dir/schema-history.jsonl" | grep -v -e '"$' -e "\"$DB\$" &&
		log "warning: $dir/schema-history.jsonl records databases other than $DB"
	cp "$run_dir/offsets.dat" "$dir/offsets.dat"
	"$CONNECT" offsets "$dir/offsets.dat" >"$dir/offsets.json"
	log "mariadb/$variant: $(wc -l <"$dir/capture.jsonl") records, $(wc -l <"$dir/schema-history.jsonl") history records, $((SECONDS - started))s"
	[[ -n ${CDCD_KEEP_RUNS:-} ]] || rm -rf "$run_dir"
}

cmd_mariadb() {
	local out=$REPO/testdata/mariadb
	if [[ ${1:-} == -o ]]; then
		out=$2
		shift 2
	fi
	local variants=("$@")
	((${#variants[@]})) || variants=("${MDB_VARIANTS[@]}")
	"${MDB_CONNECT[@]}" install
	build_tools
	mkdir -p "$out"
	trap '"${MDB_CONNECT[@]}" stop' EXIT
	local v
	for v in "${variants[@]}"; do run_mariadb_variant "$v" "$out"; done
	local version
	version=$("${MDB_CONNECT[@]}" debezium-version)
	write_manifest "$out" "$version" \
		"MariaDB goldens are Debezium $version's: 3.6.1.Final of debezium-connector-mariadb is not served by the registry" \
		mariadb_version "$(mariadb_admin -N -B -e 'SELECT VERSION()')" "${variants[@]}"
}

# Two runs at once would share the golden database, the slot, the pg1/mdb1 topics and the reference
# workers (each run stops the worker first): the second waits for the first.
mkdir -p "$STATE_DIR"
exec 9>"$STATE_DIR/goldens.lock"
flock 9

case ${1:-} in
postgres) shift && cmd_postgres "$@" ;;
mariadb) shift && cmd_mariadb "$@" ;;
*) die "usage: goldens.sh {postgres|mariadb} [-o OUT_DIR] [VARIANT...]" ;;
esac
