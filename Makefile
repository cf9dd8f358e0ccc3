# Developer and CI entry points. `make test` is the gate .ci/run runs (`make lint` first); `make unit` needs no services.
GO ?= go
SERVICES := e2e/services.sh

# require,PATH stops the target with a clear message while PATH (written by someone else) is missing.
require = @test -e $(1) || { echo "make $@: $(1) does not exist yet" >&2; exit 1; }

.PHONY: bench-incremental bench-eos chaos soak build lint services services-stop test unit fuzz conformance bench demo pg-versions matrix

# The version, stamped into the binary (`cdcd version`, and source.version in every event): the nearest v* tag
# without its v (1.2.0; 1.2.0-3-gabc1234 after it; -dirty with uncommitted changes), before the first tag
# 0.1.0-dev+<abbreviated commit>. The commit is the full hash (-dirty likewise). Both may be given:
# make build VERSION=1.2.0 COMMIT=….
VERSION ?= $(shell git describe --tags --match 'v[0-9]*' --dirty 2>/dev/null | sed 's/^v//')
ifeq ($(VERSION),)
VERSION := 0.1.0-dev+$(shell git describe --always --dirty 2>/dev/null || echo unknown)
endif
COMMIT ?= $(shell git describe --always --abbrev=40 --dirty --exclude='*' 2>/dev/null)
LDFLAGS := -X github.com/cdcd/cdcd/source.Version=$(VERSION) -X main.commit=$(COMMIT)

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o bin/cdcd ./cmd/cdcd

# go vet, staticcheck (a tool of go.mod: `go tool` builds it, nothing to install) and a go.mod and go.sum that
# `go mod tidy` would leave as they are; each must be clean.
lint:
	$(GO) vet ./...
	$(GO) tool staticcheck ./...
	$(GO) mod tidy -diff

# The schema registry (Apicurio, for the Avro tests) needs Java 21+; where it cannot start, its tests skip.
services:
	$(SERVICES) start all
	e2e/registry.sh start || echo "make: the schema registry did not start; the Avro registry test will skip" >&2
	e2e/debezium/connect.sh install || echo "make: the reference Kafka Connect worker did not install; the tests beside Kafka Connect and Debezium will skip" >&2
	CDCD_CONNECT_INSTANCE=mariadb e2e/debezium/connect.sh install || echo "make: Debezium's MariaDB plugin did not install; the MariaDB hand-over test will skip" >&2

services-stop:
	e2e/registry.sh stop
	$(SERVICES) stop all

# -p 1: packages share the real services (and the topics and slots on them), so they take turns.
# Then the PostgreSQL subset on the oldest and the newest supported versions (pg-versions).
# MySQL comes from Debian's unstable suite: where e2e/services.sh could not install it, its tests skip
# naming the reason, and the summary says so before and after the run.
MYSQL_UNAVAILABLE := $${CDCD_E2E_DIR:-/var/tmp/cdcd-e2e}/mysql/UNAVAILABLE
mysql-skipped = @! test -e $(MYSQL_UNAVAILABLE) || echo "make $@: SKIPPED the MySQL tests: MySQL is not installed: $$(cat $(MYSQL_UNAVAILABLE))" >&2

test: lint services
	$(mysql-skipped)
	CDCD_E2E=1 $(GO) test -count=1 -p 1 -timeout 45m ./...
	$(MAKE) --no-print-directory pg-versions PG_VERSIONS="$(PG_TEST_VERSIONS)"
	$(mysql-skipped)

# PostgreSQL versions beside the test bed's 15 (e2e/pgversions.sh runs them, on 554NN; e2e/testenv picks one
# by CDCD_PG_VERSION and skips its tests when that server is down). `make test` runs PG_SUBSET on 13 and 18:
# the reader's tests, the catalog and the slot guardian, and end to end crash safety, every snapshot test,
# the Debezium goldens and the slots subcommand — about 3 minutes a version here (the large-transaction test
# alone would add 1.5). `make matrix` runs the whole PostgreSQL suite (every package but MariaDB's tests) on
# each version from 13 to 18, 15 included.
PG_TEST_VERSIONS := 13 18
PG_MATRIX_VERSIONS := 13 14 15 16 17 18
PG_SUBSET_PKGS := ./source/postgres/... ./e2e/
PG_SUBSET := ^(TestReader|TestInspect|TestLoad|TestDecode|TestNameIsNull|TestDefaults|TestEnum|TestHStore|TestOrphaned|TestDryRun|TestPolicy|TestActiveSlot|TestDropConnector|TestRunAlerts|TestPostgresGoldens|TestSnapshot|TestCrashSafety|TestSlotsThroughTheBinary)
PG_MATRIX_PKGS := ./source/postgres/... ./cmd/cdcd/ ./e2e/testenv/ ./e2e/
PG_VERSIONS ?= $(PG_TEST_VERSIONS)

pg-versions:
	@set -e; for v in $(PG_VERSIONS); do \
		[ $$v = 15 ] || e2e/pgversions.sh start $$v; \
		echo "PostgreSQL $$v: $(PG_SUBSET_PKGS) -run '$(PG_SUBSET)'"; \
		CDCD_E2E=1 CDCD_PG_VERSION=$$v $(GO) test -count=1 -p 1 -timeout 15m -run '$(PG_SUBSET)' $(PG_SUBSET_PKGS); \
	done

matrix: lint services
	@set -e; for v in $(PG_MATRIX_VERSIONS); do \
		[ $$v = 15 ] || e2e/pgversions.sh start $$v; \
		echo "PostgreSQL $$v: the PostgreSQL suite"; \
		CDCD_E2E=1 CDCD_PG_VERSION=$$v $(GO) test -count=1 -p 1 -timeout 45m -skip '^TestMariaDB' $(PG_MATRIX_PKGS); \
	done

# chaos: each fault of e2e/chaos_test.go (PostgreSQL -m immediate, MariaDB, MySQL and Kafka SIGKILL) strikes
# CDCD_CHAOS_FAULTS times (default 3) under load, and cdcd's kill -9 crash tests run too; each reports rows lost,
# duplicates and recovery time. `make test` runs each fault once.
chaos: services
	CDCD_E2E=1 CDCD_CHAOS_FAULTS=$${CDCD_CHAOS_FAULTS:-3} $(GO) test ./e2e -run '^(TestChaos|TestCrashSafety$$|TestMariaDBCrashSafety$$|TestMySQLCrashSafety$$|TestKafkaOutage)' -count=1 -v -timeout 60m

# soak: 100 kill -9 cycles of cdcd under load (CDCD_SOAK_KILLS), then every committed change must be in Kafka.
soak: services
	CDCD_E2E=1 CDCD_SOAK_KILLS=$${CDCD_SOAK_KILLS:-100} $(GO) test ./e2e -run '^TestCrashSafety$$' -count=1 -v -timeout 60m

unit:
	env -u CDCD_E2E $(GO) test ./...

# Each fuzz target for FUZZTIME (their seed corpora already run as tests in `make test`). Go fuzzes one
# target per invocation; -parallel 1 leaves the machine's other cores to everything else. A failure is
# written under the package's testdata/fuzz/, where it becomes a seed.
FUZZTIME ?= 30s
FUZZ_TARGETS := \
	FuzzPgoutputMessage:./source/postgres \
	FuzzDecodeMap:./connect/offsets \
	FuzzParseProperties:./connect/config \
	FuzzRequestBody:./connect/rest \
	FuzzJAASFileEntry:./sink/kafka \
	FuzzChainConfig:./connect/transforms \
	FuzzEncode:./schema/jsonconv \
	FuzzConversionsNeverPanic:./source/mysql/types \
	FuzzBinlogRowsEvent:./source/mysql \
	FuzzRegistrySchema:./schema/avro \
	FuzzRender:./source/signal/sqlfilter

fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		echo "fuzz $${t%%:*} ($(FUZZTIME))"; \
		$(GO) test -run '^$$' -fuzz "^$${t%%:*}$$" -fuzztime $(FUZZTIME) -parallel 1 $${t#*:}; \
	done

conformance:
	$(call require,e2e/debezium/conformance.sh)
	python3 -m unittest discover -s e2e/debezium -p '*_test.py'
	bash e2e/debezium/conformance.sh

# PostgreSQL, then MariaDB; BENCH_DB=postgres or BENCH_DB=mariadb runs one, CDCD_BENCH_FLAGS adds flags of e2e/bench.
bench:
	$(call require,e2e/bench.sh)
	bash e2e/bench.sh

# bench-incremental: an incremental snapshot of the same table by cdcd and by Debezium 3.6.1, side by side
# (CDCD_MEASURE_INCREMENTAL rows, default 100000); reports rows/s, asserts nothing.
bench-incremental: services
	CDCD_E2E=1 CDCD_MEASURE_INCREMENTAL=$${CDCD_MEASURE_INCREMENTAL:-100000} $(GO) test ./e2e -run TestMeasureIncrementalSnapshot -count=1 -v -timeout 60m

# bench-eos: the same PostgreSQL backlog (CDCD_MEASURE_EOS rows, default 200000) drained at-least-once and
# exactly-once by a distributed worker, two rounds; reports rows/s and the ratio, asserts nothing.
bench-eos: services
	CDCD_E2E=1 CDCD_MEASURE_EOS=$${CDCD_MEASURE_EOS:-200000} $(GO) test ./e2e -run TestMeasureExactlyOnceCost -count=1 -v -timeout 60m

demo:
	$(call require,e2e/demo)
	$(GO) run ./e2e/demo
