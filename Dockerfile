# cdcd's container image: a static binary on an empty base, run as an unprivileged user, with the LICENSE.
#
#   docker build -t cdcd --build-arg VERSION=0.1.0 --build-arg COMMIT=$(git rev-parse HEAD) .
#   docker run -v $PWD/e2e/compose:/etc/cdcd:ro -p 8083:8083 cdcd
#
# Health: the image has no shell or curl, so its HEALTHCHECK is the binary itself: `cdcd health` GETs /health
# at the listener the worker properties name (with their TLS and basic-auth settings) and exits 0 once the
# worker is serving. Orchestrators without Docker's health checks probe GET /health on port 8083 instead.
ARG GO_VERSION=1.26

FROM golang:${GO_VERSION} AS build
WORKDIR /src
# Modules first, so a source change does not download them again.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# .git is not in the build context (.dockerignore), so the version and commit come from the build arguments.
ARG VERSION=0.1.0-dev
ARG COMMIT=unknown
RUN CGO_ENABLED=0 GOOS=linux go build -trimpath \
	-ldflags "-s -w -X github.com/cdcd/cdcd/source.Version=${VERSION} -X main.commit=${COMMIT}" \
	-o /out/cdcd ./cmd/cdcd \
	&& mkdir -p /out/var/lib/cdcd

FROM scratch
# TLS to Kafka, PostgreSQL or a schema registry needs the CA bundle; scratch has none of its own.
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/cdcd /cdcd
COPY LICENSE /LICENSE
# The standalone offsets file lives here; owned by the runtime user so a named volume mounted on it is
# writable (Docker copies the ownership into a new volume).
COPY --from=build --chown=65532:65532 /out/var/lib/cdcd /var/lib/cdcd
USER 65532:65532
EXPOSE 8083
# The start period covers the connectors' validation, which connects to their databases before the REST API
# reports ready.
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
	CMD ["/cdcd", "health", "/etc/cdcd/worker.properties"]
ENTRYPOINT ["/cdcd"]
CMD ["standalone", "/etc/cdcd/worker.properties", "/etc/cdcd/connector.properties"]
