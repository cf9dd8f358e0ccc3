#!/usr/bin/env bash
# Runs a real Confluent-compatible schema registry for the Avro end-to-end test: Apicurio Registry,
# whose ccompat API (under /apis/ccompat/v7) speaks Confluent's REST protocol. Confluent's own
# registry is not published to the package registries this project may use, and Karapace is not on
# PyPI; Apicurio's server distribution is a Maven artifact, resolved here with Maven.
#
#   e2e/registry.sh {install|installed|start [plain|tls]|stop [plain|tls]|status|url|tls-url}
#
# State lives under ${CDCD_E2E_DIR:-/var/tmp/cdcd-e2e}/registry; the port is CDCD_REGISTRY_PORT
# (58081) and the management port CDCD_REGISTRY_MANAGEMENT_PORT (58082). A second instance serves
# the same API over HTTPS only, for the registry client's TLS tests: on CDCD_REGISTRY_TLS_PORT
# (58443, management on CDCD_REGISTRY_TLS_MANAGEMENT_PORT, 58444) with e2e/services.sh's server
# certificate (IP:127.0.0.1, DNS:localhost, signed by its CA). It asks for no client certificate:
# Apicurio's build fixes quarkus.http.ssl.client-auth to NONE. It starts only once e2e/services.sh has
# made the certificates. Without an argument, start and stop act on both instances. Schemas are kept in the
# registry's in-memory database: a restart forgets them, which the tests never rely on. The registry
# is set up as Confluent's behaves by default: every schema is validated in full, each new version
# must be BACKWARD compatible, and there is no practical cap on the number of subjects. `start`
# installs what is missing, is idempotent and returns only once the API answers; `stop` ends the
# registry by its recorded pid. `installed` succeeds when the distribution is in place (tests start
# the registry then, and skip otherwise). `url` prints the schema.registry.url to give converters.
set -euo pipefail

STATE_DIR=${CDCD_E2E_DIR:-/var/tmp/cdcd-e2e}
REGISTRY_DIR=$STATE_DIR/registry
REGISTRY_PORT=${CDCD_REGISTRY_PORT:-58081}
MANAGEMENT_PORT=${CDCD_REGISTRY_MANAGEMENT_PORT:-58082}
APICURIO_VERSION=3.3.3
APP_DIR=$REGISTRY_DIR/apicurio-$APICURIO_VERSION
START_TIMEOUT=${CDCD_SERVICE_START_TIMEOUT:-240}
STOP_TIMEOUT=${CDCD_SERVICE_STOP_TIMEOUT:-30}
URL=http://127.0.0.1:$REGISTRY_PORT/apis/ccompat/v7
TLS_PORT=${CDCD_REGISTRY_TLS_PORT:-58443}
TLS_MANAGEMENT_PORT=${CDCD_REGISTRY_TLS_MANAGEMENT_PORT:-58444}
TLS_URL=https://127.0.0.1:$TLS_PORT/apis/ccompat/v7
CERTS_DIR=$STATE_DIR/certs

log() { printf '[registry] %s\n' "$*" >&2; }
die() { printf '[registry] error: %s\n' "$*" >&2; exit 1; }

# java_major JAVA prints the feature release of a java binary (17, 21, 25...).
java_major() {
	"$1" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java\.specification\.version = //p'
}

# find_java prints a java of release 21 or later: Apicurio 3 is compiled for 21. CDCD_REGISTRY_JAVA
# wins, then JAVA_HOME, then the JDKs installed under /usr/lib/jvm.
find_java() {
	local candidate
	for candidate in ${CDCD_REGISTRY_JAVA:-} ${JAVA_HOME:+$JAVA_HOME/bin/java} /usr/lib/jvm/*/bin/java "$(command -v java || true)"; do
		[[ -x $candidate ]] || continue
		if (($(java_major "$candidate") >= 21)); then
			echo "$candidate"
			return 0
		fi
	done
	die "no Java 21 or later found (set CDCD_REGISTRY_JAVA)"
}

install() {
	[[ -e $APP_DIR/.complete ]] && return 0
	command -v mvn >/dev/null || die "mvn not found: Maven resolves the Apicurio Registry distribution"
	log "resolving Apicurio Registry $APICURIO_VERSION with Maven into $APP_DIR"
	mkdir -p "$REGISTRY_DIR"
	# Unpack into a scratch directory and rename at the end, so an interrupted run is never mistaken
	# for a complete install.
	local scratch=$APP_DIR.partial
	rm -rf "$scratch"
	mkdir -p "$scratch"
	# Without a project, Maven's unpack goal writes its "already unpacked" markers under a literal
	# "${project.basedir}" in the working directory: run it in the state directory, always unpack.
	(cd "$REGISTRY_DIR" && mvn -B -q org.apache.maven.plugins:maven-dependency-plugin:3.8.1:unpack \
		-Dartifact="io.apicurio:apicurio-registry-app:$APICURIO_VERSION:tar.gz:all" \
		-DoutputDirectory="$scratch" -Dmdep.overWriteReleases=true) >"$REGISTRY_DIR/maven.log" 2>&1 ||
		die "Maven could not resolve Apicurio Registry; see $REGISTRY_DIR/maven.log"
	[[ -f $scratch/quarkus-run.jar ]] || die "the Apicurio distribution has no quarkus-run.jar"
	touch "$scratch/.complete"
	rm -rf "$APP_DIR" "$REGISTRY_DIR/\${project.basedir}"
	mv "$scratch" "$APP_DIR"
}

alive() {
	local stat
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	[[ ${stat##*) } != Z* ]]
}

# instance NAME sets what differs between the two instances: PID_FILE, LOG_FILE, the ready check
# (INSTANCE_URL, INSTANCE_CURL) and the settings the registry starts with (INSTANCE_ENV, INSTANCE_PROPS).
instance() {
	case $1 in
	plain)
		PID_FILE=$REGISTRY_DIR/registry.pid LOG_FILE=$REGISTRY_DIR/registry.log INSTANCE_URL=$URL
		INSTANCE_ENV=(QUARKUS_HTTP_PORT="$REGISTRY_PORT" QUARKUS_MANAGEMENT_PORT="$MANAGEMENT_PORT")
		INSTANCE_PROPS=() INSTANCE_CURL=()
		;;
	tls)
		PID_FILE=$REGISTRY_DIR/registry-tls.pid LOG_FILE=$REGISTRY_DIR/registry-tls.log INSTANCE_URL=$TLS_URL
		INSTANCE_ENV=(QUARKUS_HTTP_SSL_PORT="$TLS_PORT" QUARKUS_MANAGEMENT_PORT="$TLS_MANAGEMENT_PORT"
			QUARKUS_HTTP_INSECURE_REQUESTS=disabled)
		# Quarkus's TLS registry: the server's PEM certificate and key.
		INSTANCE_PROPS=(-Dquarkus.tls.key-store.pem.0.cert="$CERTS_DIR/server.pem"
			-Dquarkus.tls.key-store.pem.0.key="$CERTS_DIR/server.key")
		INSTANCE_CURL=(--cacert "$CERTS_DIR/ca.pem")
		;;
	*) die "unknown instance $1 (plain or tls)" ;;
	esac
}

# registry_pid prints the recorded pid while that process is alive and is our registry, so a
# recycled pid is never mistaken for it.
registry_pid() {
	local pid cmdline
	[[ -r $PID_FILE ]] || return 1
	read -r pid <"$PID_FILE" || return 1
	[[ $pid =~ ^[0-9]+$ ]] && alive "$pid" || return 1
	cmdline=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) || return 1
	[[ $cmdline == *"$APP_DIR/quarkus-run.jar"* ]] || return 1
	echo "$pid"
}

ready() { curl -sf "${INSTANCE_CURL[@]}" -o /dev/null "$INSTANCE_URL/subjects"; }

# start_instance NAME starts one instance unless it runs, and returns once its API answers.
start_instance() {
	instance "$1"
	if [[ $1 == tls && ! -e $CERTS_DIR/.complete ]]; then
		log "no certificates in $CERTS_DIR yet (e2e/services.sh start makes them): the TLS registry is not started"
		return 0
	fi
	install
	if registry_pid >/dev/null; then
		ready && return 0
	else
		local java
		java=$(find_java)
		log "starting Apicurio Registry ($1) for $INSTANCE_URL"
		rm -f "$PID_FILE"
		# The inner shell records its own pid and then becomes java, so the recorded pid is java's;
		# setsid keeps an interrupted caller from taking the registry down.
		env QUARKUS_HTTP_HOST=127.0.0.1 QUARKUS_MANAGEMENT_HOST=127.0.0.1 "${INSTANCE_ENV[@]}" \
			APICURIO_RULES_GLOBAL_VALIDITY=FULL APICURIO_RULES_GLOBAL_COMPATIBILITY=BACKWARD \
			APICURIO_CCOMPAT_MAX_SUBJECTS=1000000 \
			setsid bash -c 'echo $$ >"$0"; exec "$@"' "$PID_FILE" \
			"$java" -Xmx512m "${INSTANCE_PROPS[@]}" -jar "$APP_DIR/quarkus-run.jar" >>"$LOG_FILE" 2>&1 </dev/null &
		local i
		for ((i = 0; i < 50; i++)); do
			[[ -s $PID_FILE ]] && break
			sleep 0.1
		done
	fi
	local deadline=$((SECONDS + START_TIMEOUT))
	until ready; do
		registry_pid >/dev/null || die "the registry ($1) exited during startup; see $LOG_FILE"
		((SECONDS < deadline)) || die "the registry ($1) did not answer within ${START_TIMEOUT}s; see $LOG_FILE"
		sleep 0.2
	done
	log "registry ready at $INSTANCE_URL"
}

start() {
	local name
	for name in ${1:-plain tls}; do
		start_instance "$name"
	done
}

stop() {
	local name
	for name in ${1:-tls plain}; do
		stop_instance "$name"
	done
}

stop_instance() {
	instance "$1"
	local pid waited=0
	pid=$(registry_pid) || return 0
	log "stopping the registry ($1, pid $pid)"
	kill -TERM "$pid" 2>/dev/null || return 0
	while alive "$pid"; do
		if ((waited == STOP_TIMEOUT * 10)); then
			log "the registry did not exit within ${STOP_TIMEOUT}s; sending KILL"
			kill -KILL "$pid" 2>/dev/null || true
		fi
		sleep 0.1
		waited=$((waited + 1))
	done
	rm -f "$PID_FILE"
}

case ${1:-} in
install) install ;;
installed) [[ -e $APP_DIR/.complete ]] ;;
start) start "${2:-}" ;;
stop) stop "${2:-}" ;;
status)
	instance plain
	registry_pid >/dev/null && ready && echo "registry: running at $URL" || { echo "registry: stopped"; exit 3; }
	instance tls
	registry_pid >/dev/null && ready && echo "registry (tls): running at $TLS_URL" || echo "registry (tls): stopped"
	;;
url) echo "$URL" ;;
tls-url) echo "$TLS_URL" ;;
*) die "usage: $0 {install|installed|start [plain|tls]|stop [plain|tls]|status|url|tls-url}" ;;
esac
