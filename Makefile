# Developer and CI entry points. `make test` is the gate .ci/run runs (`make lint` first); `make unit` needs no services.
GO ?= go
SERVICES := e2e/services.sh

# require,PATH stops the target with a clear message while PATH (written by someone else) is missing.
require = @test -e $(1) || { echo "make $@: $(1) does not exist yet" >&2; exit 1; }

.PHONY: build lint services services-stop test unit conformance bench demo

build:
	CGO_ENABLED=0 $(GO) build -o bin/cdcd ./cmd/cdcd

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

services-stop:
	e2e/registry.sh stop
	$(SERVICES) stop all

# -p 1: packages share the real services (and the topics and slots on them), so they take turns.
test: lint services
	CDCD_E2E=1 $(GO) test -count=1 -p 1 -timeout 45m ./...

unit:
	env -u CDCD_E2E $(GO) test ./...

conformance:
	$(call require,e2e/debezium/conformance.sh)
	python3 -m unittest discover -s e2e/debezium -p '*_test.py'
	bash e2e/debezium/conformance.sh

# PostgreSQL, then MariaDB; BENCH_DB=postgres or BENCH_DB=mariadb runs one, CDCD_BENCH_FLAGS adds flags of e2e/bench.
bench:
	$(call require,e2e/bench.sh)
	bash e2e/bench.sh

demo:
	$(call require,e2e/demo)
	$(GO) run ./e2e/demo
