#!/usr/bin/env bash
# The reference: a real Kafka Connect 4.4.0 standalone worker running Debezium 3.6.1.Final.
#
#   [CDCD_CONNECT_INSTANCE=mariadb] e2e/debezium/connect.sh COMMAND ...
#
#   e2e/debezium/connect.sh install                    resolve the worker and the plugins (cached)
#   e2e/debezium/connect.sh run WORKER CONNECTOR [DIR] start ConnectStandalone in the background in DIR
#   e2e/debezium/connect.sh wait-running NAME          wait until connector NAME and its task are RUNNING
#   e2e/debezium/connect.sh stop                       stop the worker by its pid (graceful, flushes offsets)
#   e2e/debezium/connect.sh java-version               print the pinned JDK's `java -version`
#   e2e/debezium/connect.sh debezium-version           print the instance's Debezium version
#   e2e/debezium/connect.sh offsets FILE               print a standalone offsets file as JSON
#
# State lives under ${CDCD_E2E_DIR:-/var/tmp/cdcd-e2e}/debezium: lib/ (worker jars), plugins/ (unpacked
# Debezium plugins), run/ (default run dir: worker.properties as run, offsets, connect.log, connect.pid).
#
# CDCD_CONNECT_INSTANCE picks the worker: `postgres` (the default) runs Debezium 3.6.1.Final's PostgreSQL
# plugin with REST on 58083; `mariadb` is a second, independent worker (its own pid file, REST port 58084,
# plugin dir plugins-mariadb/, default run dir run-mariadb/) running Debezium 3.5.0.Final's MariaDB
# connector, because the registry serves no 3.6.1.Final of it (see mariadb-plugin.pom.xml). The two can run
# at the same time; their WORKER files must name the instance's REST port in `listeners`.
# WORKER may omit plugin.path (and, for the mariadb instance, plugin.discovery); the run copy gets the
# plugins dir (and service_load discovery) appended. A relative
# offset.storage.file.filename resolves inside the run dir, so the golden worker files stay machine-neutral.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
STATE_DIR=${CDCD_E2E_DIR:-/var/tmp/cdcd-e2e}/debezium
LIB_DIR=$STATE_DIR/lib
DOWNLOAD_DIR=$STATE_DIR/dl
INSTANCE=${CDCD_CONNECT_INSTANCE:-postgres}
case $INSTANCE in
postgres)
	PLUGIN_DIR=$STATE_DIR/plugins
	RUN_DIR_DEFAULT=$STATE_DIR/run
	PID_FILE=$STATE_DIR/connect.pid
	REST_PORT=58083
	PLUGIN_DISCOVERY=
	;;
mariadb)
	PLUGIN_DIR=$STATE_DIR/plugins-mariadb
	RUN_DIR_DEFAULT=$STATE_DIR/run-mariadb
	PID_FILE=$STATE_DIR/connect-mariadb.pid
	REST_PORT=58084
	# Every jar of this worker and plugin ships ServiceLoader manifests: reading them instead of scanning
	# all classes cuts the worker's start from about a minute to seconds on two busy cores.
	PLUGIN_DISCOVERY=service_load
	;;
*) printf '[connect] error: unknown CDCD_CONNECT_INSTANCE %s (postgres or mariadb)\n' "$INSTANCE" >&2 && exit 1 ;;
esac

KAFKA_VERSION=4.4.0
DEBEZIUM_VERSION=3.6.1.Final
# JDK 19+ prints doubles in their shortest form (like Go's strconv); pin one JDK and record it.
JAVA_HOME_PINNED=${CDCD_DEBEZIUM_JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
JAVA=$JAVA_HOME_PINNED/bin/java
DEPENDENCY_PLUGIN=org.apache.maven.plugins:maven-dependency-plugin:3.8.1
# The MariaDB reference's version, pinned in mariadb-plugin.pom.xml (read by goldens.sh for its manifest).
MARIADB_DEBEZIUM_VERSION=3.5.0.Final
STOP_TIMEOUT=${CDCD_CONNECT_STOP_TIMEOUT:-60}
START_TIMEOUT=${CDCD_CONNECT_START_TIMEOUT:-180}

log() { printf '[connect] %s\n' "$*" >&2; }
die() { printf '[connect] error: %s\n' "$*" >&2; exit 1; }

require_tools() {
	[[ -x $JAVA ]] || die "pinned JDK missing: $JAVA (set CDCD_DEBEZIUM_JAVA_HOME)"
	command -v mvn >/dev/null || {
		log "installing maven"
		DEBIAN_FRONTEND=noninteractive apt-get update -qq
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends maven >/dev/null
	}
}

install_worker() {
	local marker=$LIB_DIR/.complete-$KAFKA_VERSION
	[[ -e $marker ]] && return 0
	log "resolving Kafka Connect $KAFKA_VERSION into $LIB_DIR"
	rm -rf "$LIB_DIR" && mkdir -p "$LIB_DIR"
	mvn -B -q -f "$HERE/pom.xml" "$DEPENDENCY_PLUGIN:copy-dependencies" \
		-DoutputDirectory="$LIB_DIR" -DincludeScope=runtime
	touch "$marker"
}

# install_plugin NAME unpacks debezium-connector-NAME's plugin archive into PLUGIN_DIR; a plugin the
# registry does not serve is reported and skipped.
install_plugin() {
	local name=$1 artifact=debezium-connector-$1
	local marker=$PLUGIN_DIR/.complete-$artifact-$DEBEZIUM_VERSION
	[[ -e $marker ]] && return 0
	local archive=$DOWNLOAD_DIR/$artifact-$DEBEZIUM_VERSION-plugin.tar.gz
	# Remembered so every run does not ask the registry again; delete the file to retry.
	local unavailable=$DOWNLOAD_DIR/.unavailable-$artifact-$DEBEZIUM_VERSION
	[[ -e $unavailable ]] && return 0
	if [[ ! -s $archive ]]; then
		mkdir -p "$DOWNLOAD_DIR"
		if ! (cd "$DOWNLOAD_DIR" && mvn -B -q "$DEPENDENCY_PLUGIN:copy" \
			-Dartifact="io.debezium:$artifact:$DEBEZIUM_VERSION:tar.gz:plugin" \
			-DoutputDirectory="$DOWNLOAD_DIR" >"$DOWNLOAD_DIR/$artifact.mvn.log" 2>&1); then
			log "warning: $artifact $DEBEZIUM_VERSION could not be resolved (see $DOWNLOAD_DIR/$artifact.mvn.log); skipping $name"
			touch "$unavailable"
			return 0
		fi
	fi
	mkdir -p "$PLUGIN_DIR"
	rm -rf "${PLUGIN_DIR:?}/$artifact"
	tar -xzf "$archive" -C "$PLUGIN_DIR"
	touch "$marker"
}

# install_mariadb_plugin resolves mariadb-plugin.pom.xml's dependencies into PLUGIN_DIR: the jars Debezium's
# plugin archive would hold, as no archive of the pinned version is published.
install_mariadb_plugin() {
	local dir=$PLUGIN_DIR/debezium-connector-mariadb
	local marker=$PLUGIN_DIR/.complete-debezium-connector-mariadb-$MARIADB_DEBEZIUM_VERSION
	[[ -e $marker ]] && return 0
	log "resolving debezium-connector-mariadb $MARIADB_DEBEZIUM_VERSION into $dir"
	rm -rf "$dir" && mkdir -p "$dir"
	mvn -B -q -f "$HERE/mariadb-plugin.pom.xml" "$DEPENDENCY_PLUGIN:copy-dependencies" \
		-DoutputDirectory="$dir" -DincludeScope=runtime
	[[ -e $dir/debezium-connector-mariadb-$MARIADB_DEBEZIUM_VERSION.jar ]] ||
		die "mariadb-plugin.pom.xml does not resolve debezium-connector-mariadb $MARIADB_DEBEZIUM_VERSION"
	touch "$marker"
}

cmd_install() {
	require_tools
	install_worker
	case $INSTANCE in
	postgres) install_plugin postgres ;;
	mariadb) install_mariadb_plugin ;;
	esac
}

live_pid() {
	[[ -s $PID_FILE ]] || return 1
	local pid
	pid=$(<"$PID_FILE")
	kill -0 "$pid" 2>/dev/null && grep -q ConnectStandalone "/proc/$pid/cmdline" 2>/dev/null && echo "$pid"
}

cmd_run() {
	(($# >= 2)) || die "usage: connect.sh run WORKER CONNECTOR [RUN_DIR]"
	local worker=$1 connector=$2 run_dir=${3:-$RUN_DIR_DEFAULT}
	[[ -r $worker && -r $connector ]] || die "cannot read $worker or $connector"
	live_pid >/dev/null && die "a reference worker is already running (pid $(live_pid)); run 'connect.sh stop' first"
	cmd_install
	mkdir -p "$run_dir"
	run_dir=$(cd "$run_dir" && pwd)
	cp "$worker" "$run_dir/worker.run.properties"
	grep -q '^plugin.path=' "$worker" || printf '\nplugin.path=%s\n' "$PLUGIN_DIR" >>"$run_dir/worker.run.properties"
	if [[ -n $PLUGIN_DISCOVERY ]] && ! grep -q '^plugin.discovery=' "$worker"; then
		printf 'plugin.discovery=%s\n' "$PLUGIN_DISCOVERY" >>"$run_dir/worker.run.properties"
	fi
	cp "$connector" "$run_dir/connector.run.properties"
	log "starting ConnectStandalone in $run_dir (log $run_dir/connect.log)"
	(
		cd "$run_dir"
		exec setsid "$JAVA" -Xmx1g -Duser.timezone=UTC -Dfile.encoding=UTF-8 \
			-Dlog4j2.configurationFile="$HERE/log4j2.properties" \
			-cp "$LIB_DIR/*" org.apache.kafka.connect.cli.ConnectStandalone \
			worker.run.properties connector.run.properties
	) >"$run_dir/connect.log" 2>&1 &
	echo $! >"$PID_FILE"
}

cmd_wait_running() {
	(($# == 1)) || die "usage: connect.sh wait-running CONNECTOR_NAME"
	local name=$1 deadline=$((SECONDS + START_TIMEOUT)) status=
	while ((SECONDS < deadline)); do
		live_pid >/dev/null || die "the reference worker exited; see its connect.log"
		status=$(curl -fsS "http://127.0.0.1:$REST_PORT/connectors/$name/status" 2>/dev/null || true)
		if [[ $status == *'"tasks":[{"id":0,"state":"RUNNING"'* && $status == *'"connector":{"state":"RUNNING"'* ]]; then
			return 0
		fi
		[[ $status == *'"state":"FAILED"'* ]] && die "connector $name failed: $status"
		sleep 1
	done
	die "connector $name not RUNNING after ${START_TIMEOUT}s: $status"
}

cmd_stop() {
	local pid
	pid=$(live_pid) || { rm -f "$PID_FILE"; return 0; }
	log "stopping reference worker (pid $pid)"
	kill -TERM "$pid"
	local deadline=$((SECONDS + STOP_TIMEOUT))
	while kill -0 "$pid" 2>/dev/null; do
		((SECONDS < deadline)) || { log "pid $pid ignored SIGTERM; killing"; kill -KILL "$pid"; break; }
		sleep 0.5
	done
	rm -f "$PID_FILE"
}

cmd_java_version() { "$JAVA" -version 2>&1; }

cmd_debezium_version() {
	case $INSTANCE in
	postgres) echo "$DEBEZIUM_VERSION" ;;
	mariadb) echo "$MARIADB_DEBEZIUM_VERSION" ;;
	esac
}

cmd_offsets() {
	(($# == 1)) || die "usage: connect.sh offsets OFFSETS_FILE"
	"$JAVA" "$HERE/OffsetsDump.java" "$1"
}

case ${1:-} in
install) cmd_install ;;
run) shift && cmd_run "$@" ;;
wait-running) shift && cmd_wait_running "$@" ;;
stop) cmd_stop ;;
java-version) cmd_java_version ;;
debezium-version) cmd_debezium_version ;;
offsets) shift && cmd_offsets "$@" ;;
*) die "usage: connect.sh {install|run WORKER CONNECTOR [DIR]|wait-running NAME|stop|java-version|debezium-version|offsets FILE}" ;;
esac
