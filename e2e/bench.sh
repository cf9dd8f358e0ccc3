#!/usr/bin/env bash
# make bench: cdcd against Debezium 3.6.1 on Kafka Connect 4.4, same PostgreSQL, same Kafka broker.
#
#   bash e2e/bench.sh [FLAGS]        flags of e2e/bench (e.g. -rounds 3 -rows 100000 -rate 2000 -profile);
#                                    CDCD_BENCH_FLAGS adds flags when called through make
#
# Starts PostgreSQL and Kafka if they are not running (never stops them: others share them), builds
# cdcd, installs the reference worker (cached), runs the alternating rounds and prints the table.
# Results (table.txt, results.json, logs, profiles) go to ${CDCD_E2E_DIR:-/var/tmp/cdcd-e2e}/bench/<time>/.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
E2E_DIR=${CDCD_E2E_DIR:-/var/tmp/cdcd-e2e}
OUT=$E2E_DIR/bench/$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$OUT"

e2e/services.sh start postgres >&2
e2e/services.sh start kafka >&2
bash e2e/debezium/connect.sh install
# The benchmark's worker gets a connect.sh home of its own (its own pid file), sharing the installed jars,
# so it runs beside a reference worker someone else may be running.
CONNECT_HOME=$E2E_DIR/bench/connect
mkdir -p "$CONNECT_HOME/debezium"
for d in lib plugins; do ln -sfn "$E2E_DIR/debezium/$d" "$CONNECT_HOME/debezium/$d"; done
CGO_ENABLED=0 go build -o bin/cdcd ./cmd/cdcd
go build -o "$OUT/bench" ./e2e/bench

# shellcheck disable=SC2086 # CDCD_BENCH_FLAGS is a list of flags
"$OUT/bench" -out "$OUT" -cdcd "$ROOT/bin/cdcd" -connect "$ROOT/e2e/debezium/connect.sh" -connect-home "$CONNECT_HOME" ${CDCD_BENCH_FLAGS:-} "$@"
echo "results: $OUT"
