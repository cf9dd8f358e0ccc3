# cdcd's container image: a static binary on an empty base, run as an unprivileged user.
#
#   docker build -t cdcd .
#   docker run -v $PWD/e2e/compose:/etc/cdcd:ro -p 8083:8083 cdcd
#
# Readiness: the image has no shell, so it carries no HEALTHCHECK; probe GET /health on port 8083 from the
# orchestrator instead (an HTTP readiness probe, or a sidecar); it answers 200 once the worker is serving.
ARG GO_VERSION=1.26

FROM golang:${GO_VERSION} AS build
WORKDIR /src
# Modules first, so a source change does not download them again.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=0.1.0-dev
RUN CGO_ENABLED=0 GOOS=linux go build -trimpath \
	-ldflags "-s -w -X github.com/cdcd/cdcd/source.Version=${VERSION}" \
	-o /out/cdcd ./cmd/cdcd \
	&& mkdir -p /out/var/lib/cdcd

FROM scratch
# TLS to Kafka, PostgreSQL or a schema registry needs the CA bundle; scratch has none of its own.
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/cdcd /cdcd
# The standalone offsets file lives here; owned by the runtime user so a named volume mounted on it is
# writable (Docker copies the ownership into a new volume).
COPY --from=build --chown=65532:65532 /out/var/lib/cdcd /var/lib/cdcd
USER 65532:65532
EXPOSE 8083
ENTRYPOINT ["/cdcd"]
CMD ["standalone", "/etc/cdcd/worker.properties", "/etc/cdcd/connector.properties"]
