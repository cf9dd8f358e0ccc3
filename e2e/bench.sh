#!/usr/bin/env bash
# make bench: cdcd against Debezium on Kafka Connect 4.4, same database, same Kafka broker: PostgreSQL
# (Debezium 3.6.1), then MariaDB (Debezium 3.5.0.Final, the newest MariaDB connector served).
#
#   [BENCH_DB=postgres|mariadb] bash e2e/bench.sh [FLAGS]
#                                    BENCH_DB picks one database (default: both, one after the other);
#                                    flags of e2e/bench (e.g. -rounds 3 -rows 100000 -rate 2000 -profile);
#                                    CDCD_BENCH_FLAGS adds flags when called through make
#
# Starts the databases and Kafka if they are not running (never stops them: others share them), builds
# cdcd, installs the reference workers (cached), runs the alternating rounds and prints one table per
# database. Results go to ${CDCD_E2E_DIR:-/var/tmp/cdcd-e2e}/bench/<time>/: table.txt, results.json,
# logs and profiles for PostgreSQL, the same names with -mariadb (table-mariadb.txt…) for MariaDB.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
E2E_DIR=${CDCD_E2E_DIR:-/var/tmp/cdcd-e2e}
OUT=$E2E_DIR/bench/$(date -u +%Y%m%dT%H%M%SZ)

DATABASES=${BENCH_DB:-postgres,mariadb}
e2e/services.sh start kafka >&2
# The benchmark's workers get a connect.sh home of their own (their own pid files), sharing the installed
# jars, so they run beside the reference workers someone else may be running.
CONNECT_HOME=$E2E_DIR/bench/connect
mkdir -p "$CONNECT_HOME/debezium"
ln -sfn "$E2E_DIR/debezium/lib" "$CONNECT_HOME/debezium/lib"
for db in ${DATABASES//,/ }; do
	case $db in
	postgres) plugins=plugins ;;
	mariadb) plugins=plugins-mariadb ;;
	*) echo "bench.sh: BENCH_DB names $db; want postgres, mariadb or both (comma separated)" >&2 && exit 2 ;;
	esac
	e2e/services.sh start "$db" >&2
	CDCD_CONNECT_INSTANCE=$db bash e2e/debezium/connect.sh install
	ln -sfn "$E2E_DIR/debezium/$plugins" "$CONNECT_HOME/debezium/$plugins"
done
CGO_ENABLED=0 go build -o bin/cdcd ./cmd/cdcd
mkdir -p "$OUT"
go build -o "$OUT/bench" ./e2e/bench

# shellcheck disable=SC2086 # CDCD_BENCH_FLAGS is a list of flags
"$OUT/bench" -out "$OUT" -cdcd "$ROOT/bin/cdcd" -connect "$ROOT/e2e/debezium/connect.sh" -connect-home "$CONNECT_HOME" \
	-databases "$DATABASES" ${CDCD_BENCH_FLAGS:-} "$@"
echo "results: $OUT"
