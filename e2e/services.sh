#!/usr/bin/env bash
# Runs the real services the end-to-end tests need, as private processes of this machine:
# PostgreSQL 15, MariaDB 10.11 and a single-node Kafka 4.4.0 (KRaft).
#
#   e2e/services.sh {install|start|stop|status} {postgres|mariadb|kafka|all}
#
# All state lives under ${CDCD_E2E_DIR:-/var/tmp/cdcd-e2e}; ports come from CDCD_PG_PORT,
# CDCD_MARIADB_PORT, CDCD_KAFKA_PORT and CDCD_KAFKA_CONTROLLER_PORT. `start` installs what is
# missing, is idempotent and returns only once the service answers. `stop` ends each service by
# its recorded pid. The script must run as root (apt-get, runuser).
set -euo pipefail

STATE_DIR=${CDCD_E2E_DIR:-/var/tmp/cdcd-e2e}
PG_PORT=${CDCD_PG_PORT:-55432}
MARIADB_PORT=${CDCD_MARIADB_PORT:-53306}
KAFKA_PORT=${CDCD_KAFKA_PORT:-59092}
KAFKA_CONTROLLER_PORT=${CDCD_KAFKA_CONTROLLER_PORT:-59093}
KAFKA_VERSION=4.4.0
# Seconds a service gets to answer after being launched, and to exit after being asked to.
START_TIMEOUT=${CDCD_SERVICE_START_TIMEOUT:-90}
STOP_TIMEOUT=${CDCD_SERVICE_STOP_TIMEOUT:-30}

PG_BIN=/usr/lib/postgresql/15/bin
PG_DIR=$STATE_DIR/postgres
PG_DATA=$PG_DIR/data
PG_LOG=$PG_DIR/postgres.log

MARIADB_DIR=$STATE_DIR/mariadb
MARIADB_CNF=$MARIADB_DIR/my.cnf
MARIADB_DATA=$MARIADB_DIR/data
MARIADB_SOCKET=$MARIADB_DIR/mariadbd.sock
MARIADB_PID=$MARIADB_DIR/mariadbd.pid # ours, written at launch; the server keeps its own in the datadir
MARIADB_LOG=$MARIADB_DIR/mariadbd.log
MARIADB_ROOT_PASSWORD=cdcd
MARIADB_CAPTURE_USER=cdcd
MARIADB_CAPTURE_PASSWORD=cdcd

KAFKA_DIR=$STATE_DIR/kafka
KAFKA_DATA=$KAFKA_DIR/data
KAFKA_PROPS=$KAFKA_DIR/server.properties
KAFKA_LOG4J=$KAFKA_DIR/log4j2.properties
KAFKA_PID=$KAFKA_DIR/kafka.pid
KAFKA_LOG=$KAFKA_DIR/server.log
KAFKA_OUT=$KAFKA_DIR/kafka.out
JAVA=${JAVA_HOME:+$JAVA_HOME/bin/}java

log() { printf '[services] %s\n' "$*" >&2; }
die() { printf '[services] error: %s\n' "$*" >&2; exit 1; }

# ---------------------------------------------------------------------------------------------
# Shared helpers

# apt_ensure PKG... installs the Debian packages that are not installed yet, refreshing the
# package index once per run and only when something is missing.
APT_UPDATED=
apt_ensure() {
	local missing=() pkg
	for pkg in "$@"; do
		[[ $(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null) == 'install ok installed' ]] || missing+=("$pkg")
	done
	((${#missing[@]} == 0)) && return 0
	log "installing ${missing[*]}"
	# Debian's postinst scripts would start the packaged services on their default ports; the
	# policy file tells invoke-rc.d not to. Only remove it if this run created it.
	local policy=/usr/sbin/policy-rc.d created_policy=
	if [[ ! -e $policy ]]; then
		printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod 755 "$policy" && created_policy=1
	fi
	if [[ -z $APT_UPDATED ]]; then
		DEBIAN_FRONTEND=noninteractive apt-get update -qq || die "apt-get update failed"
		APT_UPDATED=1
	fi
	local rc=0
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null || rc=$?
	[[ -n $created_policy ]] && rm -f "$policy"
	((rc == 0)) || die "apt-get install ${missing[*]} failed (exit $rc)"
}

# alive PID succeeds while the process exists and is not a zombie.
alive() {
	local stat
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	[[ ${stat##*) } != Z* ]]
}

# live_pid PIDFILE REGEX prints the pid recorded in PIDFILE (first line) when that process is
# alive and its command line matches REGEX, so a recycled pid is never mistaken for ours.
live_pid() {
	local pidfile=$1 regex=$2 pid cmdline
	[[ -r $pidfile ]] || return 1
	read -r pid <"$pidfile" || return 1
	[[ $pid =~ ^[0-9]+$ ]] && alive "$pid" || return 1
	cmdline=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) || return 1
	[[ $cmdline =~ $regex ]] || return 1
	echo "$pid"
}

# stop_pid NAME PID SIGNAL asks the process to exit with SIGNAL, waits STOP_TIMEOUT seconds,
# then kills it.
stop_pid() {
	local name=$1 pid=$2 signal=$3 waited=0
	log "stopping $name (pid $pid)"
	kill "-$signal" "$pid" 2>/dev/null || return 0
	while alive "$pid"; do
		if ((waited == STOP_TIMEOUT * 10)); then
			log "$name did not exit within ${STOP_TIMEOUT}s; sending KILL"
			kill -KILL "$pid" 2>/dev/null || true
		fi
		((waited < STOP_TIMEOUT * 20)) || die "$name (pid $pid) survived KILL"
		sleep 0.1
		waited=$((waited + 1))
	done
}

# wait_ready NAME PIDFUNC PROBEFUNC LOGFILE polls PROBEFUNC until it succeeds, failing early when
# the process (found by PIDFUNC) has died and after START_TIMEOUT seconds otherwise.
wait_ready() {
	local name=$1 pidfunc=$2 probe=$3 logfile=$4 deadline=$((SECONDS + START_TIMEOUT))
	until "$probe"; do
		"$pidfunc" >/dev/null || die "$name exited during startup; see $logfile"
		((SECONDS < deadline)) || die "$name did not answer within ${START_TIMEOUT}s; see $logfile"
		sleep 0.2
	done
}

# spawn PIDFILE LOGFILE CMD... starts CMD detached from this script's session (so an interrupted
# `make` does not take the service down) and records its pid.
spawn() {
	local pidfile=$1 logfile=$2 program=$3
	shift 2
	# A pid file left by a crashed run must not pass for the new process's.
	rm -f "$pidfile"
	# The inner shell writes its own pid and then becomes CMD, so the recorded pid is CMD's.
	setsid bash -c 'echo $$ >"$0"; exec "$@"' "$pidfile" "$@" >>"$logfile" 2>&1 </dev/null &
	# Wait for the pid file so callers can rely on it at once.
	local i
	for ((i = 0; i < 50; i++)); do
		[[ -s $pidfile ]] && return 0
		sleep 0.1
	done
	die "could not launch $program; see $logfile"
}

# run_as USER CMD... runs CMD as USER from a directory that user can read (not root's home).
run_as() {
	local user=$1
	shift
	(cd / && runuser -u "$user" -- "$@")
}

ensure_state_dir() {
	mkdir -p "$STATE_DIR"
	chmod 755 "$STATE_DIR"
}

# service_dir USER DIR creates DIR for a service that runs as USER, who must be able to reach it.
service_dir() {
	local user=$1 dir=$2
	ensure_state_dir
	mkdir -p "$dir"
	chown "$user:$user" "$dir"
	run_as "$user" test -w "$dir" ||
		die "user $user cannot write $dir: choose a CDCD_E2E_DIR whose parents others may enter (not under /root)"
}

# ---------------------------------------------------------------------------------------------
# PostgreSQL 15

postgres_install() {
	apt_ensure postgresql-15
	[[ -x $PG_BIN/postgres ]] || die "$PG_BIN/postgres missing after installing postgresql-15"
}

postgres_pid() { live_pid "$PG_DATA/postmaster.pid" "postgres -D $PG_DATA"; }

postgres_ready() { "$PG_BIN/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT" -d postgres -U postgres; }

postgres_start() {
	if postgres_pid >/dev/null; then
		log "postgres already running"
		wait_ready postgres postgres_pid postgres_ready "$PG_LOG"
		return 0
	fi
	postgres_install
	service_dir postgres "$PG_DIR"
	if [[ ! -s $PG_DATA/PG_VERSION ]]; then
		log "initdb $PG_DATA"
		rm -rf "$PG_DATA"
		run_as postgres "$PG_BIN/initdb" -D "$PG_DATA" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >"$PG_DIR/initdb.log" 2>&1 ||
			die "initdb failed; see $PG_DIR/initdb.log"
		echo "include 'cdcd.conf'" >>"$PG_DATA/postgresql.conf"
	fi
	# Rewritten on every start, so a changed port or setting takes effect without a new cluster.
	# Durability is traded for speed (fsync etc. off): the cluster is disposable test state.
	cat >"$PG_DATA/cdcd.conf" <<-EOF
		listen_addresses = '127.0.0.1'
		port = $PG_PORT
		unix_socket_directories = '$PG_DATA'
		wal_level = logical
		max_replication_slots = 20
		max_wal_senders = 20
		fsync = off
		synchronous_commit = off
		full_page_writes = off
	EOF
	chown postgres:postgres "$PG_DATA/cdcd.conf"
	log "starting postgres on 127.0.0.1:$PG_PORT"
	# setsid: the postmaster must not share our session, or an interrupt of the caller reaches it.
	setsid -w runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$PG_DATA" -l "$PG_LOG" -w -t "$START_TIMEOUT" start >/dev/null </dev/null ||
		die "postgres did not start; see $PG_LOG"
	wait_ready postgres postgres_pid postgres_ready "$PG_LOG"
}

postgres_stop() {
	local pid
	pid=$(postgres_pid) || return 0
	# SIGINT is PostgreSQL's fast shutdown; SIGTERM (smart) would wait for open walsenders forever.
	stop_pid postgres "$pid" INT
}

# ---------------------------------------------------------------------------------------------
# MariaDB 10.11

mariadb_install() {
	apt_ensure mariadb-server
	command -v mariadbd >/dev/null || [[ -x /usr/sbin/mariadbd ]] || die "mariadbd missing after installing mariadb-server"
}

mariadb_pid() { live_pid "$MARIADB_PID" "mariadbd --defaults-file=$MARIADB_CNF"; }

mariadb_ready() { mariadb-admin --defaults-file="$MARIADB_CNF" ping >/dev/null 2>&1; }

mariadb_write_cnf() {
	# The [client] section lets the command-line tools (and this script) find the private server.
	cat >"$MARIADB_CNF" <<-EOF
		[mysqld]
		user = mysql
		datadir = $MARIADB_DATA
		socket = $MARIADB_SOCKET
		pid-file = $MARIADB_DATA/mariadbd.pid
		log-error = $MARIADB_LOG
		port = $MARIADB_PORT
		bind-address = 127.0.0.1
		skip-name-resolve
		server_id = 1
		log_bin = mariadb-bin
		binlog_format = ROW
		binlog_row_image = FULL
		binlog_row_metadata = FULL
		binlog_annotate_row_events = ON
		gtid_strict_mode = ON
		# Disposable test state: favour speed over durability.
		innodb_flush_log_at_trx_commit = 2

		[client]
		socket = $MARIADB_SOCKET
		port = $MARIADB_PORT
		user = root
		password = $MARIADB_ROOT_PASSWORD
	EOF
}

# mariadb_bootstrap_users gives root the password over TCP and the socket, drops the
# password-less root accounts mariadb-install-db creates for other hosts, and creates the capture
# user. It runs once after mariadb-install-db, while root still logs in over the socket without a
# password; that password is set last so that a failed attempt can simply be repeated.
mariadb_bootstrap_users() {
	mariadb --no-defaults --socket="$MARIADB_SOCKET" -u root <<-EOF
		CREATE USER IF NOT EXISTS 'root'@'127.0.0.1';
		ALTER USER 'root'@'127.0.0.1' IDENTIFIED BY '$MARIADB_ROOT_PASSWORD';
		GRANT ALL PRIVILEGES ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION;
		DROP USER IF EXISTS 'root'@'::1', 'root'@'$(hostname)';
		CREATE USER IF NOT EXISTS '$MARIADB_CAPTURE_USER'@'%' IDENTIFIED BY '$MARIADB_CAPTURE_PASSWORD';
		GRANT SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE, BINLOG MONITOR, LOCK TABLES ON *.* TO '$MARIADB_CAPTURE_USER'@'%';
		ALTER USER 'root'@'localhost' IDENTIFIED BY '$MARIADB_ROOT_PASSWORD';
	EOF
}

mariadb_start() {
	if mariadb_pid >/dev/null; then
		log "mariadb already running"
		wait_ready mariadb mariadb_pid mariadb_ready "$MARIADB_LOG"
		return 0
	fi
	mariadb_install
	service_dir mysql "$MARIADB_DIR"
	mariadb_write_cnf
	if [[ ! -d $MARIADB_DATA/mysql ]]; then
		log "mariadb-install-db $MARIADB_DATA"
		rm -rf "$MARIADB_DATA" "$MARIADB_DIR/.users-created"
		mariadb-install-db --defaults-file="$MARIADB_CNF" --auth-root-authentication-method=normal --skip-test-db \
			>"$MARIADB_DIR/install-db.log" 2>&1 || die "mariadb-install-db failed; see $MARIADB_DIR/install-db.log"
	fi
	log "starting mariadb on 127.0.0.1:$MARIADB_PORT"
	spawn "$MARIADB_PID" "$MARIADB_DIR/mariadbd.out" /usr/sbin/mariadbd --defaults-file="$MARIADB_CNF"
	wait_ready mariadb mariadb_pid mariadb_ready "$MARIADB_LOG"
	if [[ ! -e $MARIADB_DIR/.users-created ]]; then
		mariadb_bootstrap_users || die "creating the MariaDB users failed; see $MARIADB_LOG"
		touch "$MARIADB_DIR/.users-created"
	fi
}

mariadb_stop() {
	local pid
	pid=$(mariadb_pid) || return 0
	stop_pid mariadb "$pid" TERM
	rm -f "$MARIADB_PID"
}

# ---------------------------------------------------------------------------------------------
# Kafka 4.4.0 (KRaft, one node that is both broker and controller)

# kafka_pom prints the throwaway Maven project whose runtime dependencies are the broker's jars.
kafka_pom() {
	# Kafka's own poms ask for slf4j-api 1.7, which cannot see log4j's slf4j2 binding (the broker
	# would log nothing); naming slf4j-api 2 here makes it win Maven's nearest-first resolution.
	cat <<-EOF
		<project xmlns="http://maven.apache.org/POM/4.0.0">
		  <modelVersion>4.0.0</modelVersion>
		  <groupId>cdcd.e2e</groupId>
		  <artifactId>kafka-broker-libs</artifactId>
		  <version>1</version>
		  <packaging>pom</packaging>
		  <dependencies>
		    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka_2.13</artifactId><version>$KAFKA_VERSION</version></dependency>
		    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka-tools</artifactId><version>$KAFKA_VERSION</version></dependency>
		    <dependency><groupId>org.apache.logging.log4j</groupId><artifactId>log4j-core</artifactId><version>2.24.3</version></dependency>
		    <dependency><groupId>org.apache.logging.log4j</groupId><artifactId>log4j-slf4j2-impl</artifactId><version>2.24.3</version></dependency>
		    <dependency><groupId>org.slf4j</groupId><artifactId>slf4j-api</artifactId><version>2.0.17</version></dependency>
		  </dependencies>
		</project>
	EOF
}

# The jar cache is keyed by the pom, so editing the pom above resolves the jars again.
KAFKA_LIBS=$KAFKA_DIR/libs-$KAFKA_VERSION-$(kafka_pom | sha256sum | cut -c1-12)

kafka_install() {
	apt_ensure kcat unzip
	if [[ -e $KAFKA_LIBS/.complete ]]; then
		return 0
	fi
	command -v mvn >/dev/null || die "mvn not found: Maven resolves the Kafka jars"
	log "resolving Kafka $KAFKA_VERSION jars with Maven into $KAFKA_LIBS"
	ensure_state_dir
	mkdir -p "$KAFKA_DIR/pom"
	kafka_pom >"$KAFKA_DIR/pom/pom.xml"
	# Copy into a scratch directory and rename at the end, so an interrupted run is never
	# mistaken for a complete cache.
	local scratch=$KAFKA_LIBS.partial
	rm -rf "$scratch"
	mvn -B -q -f "$KAFKA_DIR/pom/pom.xml" org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy-dependencies \
		-DoutputDirectory="$scratch" -DincludeScope=runtime >"$KAFKA_DIR/maven.log" 2>&1 ||
		die "Maven could not resolve the Kafka jars; see $KAFKA_DIR/maven.log"
	kafka_storage_tool_class "$scratch" >"$scratch/.storage-tool-class"
	touch "$scratch/.complete"
	# Caches resolved from other poms are stale now.
	local old
	for old in "$KAFKA_DIR"/libs-*; do
		[[ $old == "$scratch" ]] || rm -rf "$old"
	done
	mv "$scratch" "$KAFKA_LIBS"
}

# kafka_storage_tool_class LIBS prints the StorageTool main class of the resolved jars: Kafka has
# been moving its tools from the Scala `kafka.tools` package to `org.apache.kafka.tools`.
kafka_storage_tool_class() {
	local libs=$1 jar class
	for class in org.apache.kafka.tools.StorageTool kafka.tools.StorageTool; do
		for jar in "$libs"/*.jar; do
			if unzip -l "$jar" "${class//.//}.class" >/dev/null 2>&1; then
				echo "$class"
				return 0
			fi
		done
	done
	die "no StorageTool class in the jars of $libs"
}

kafka_pid() { live_pid "$KAFKA_PID" "kafka\.Kafka $KAFKA_PROPS"; }

kafka_ready() {
	# Metadata that lists our broker proves the broker and the KRaft controller are both up.
	local metadata
	metadata=$(kcat -b "127.0.0.1:$KAFKA_PORT" -L -m 2 2>/dev/null) || return 1
	[[ $metadata == *" 1 brokers:"* ]]
}

kafka_write_config() {
	cat >"$KAFKA_PROPS" <<-EOF
		process.roles=broker,controller
		node.id=1
		controller.quorum.voters=1@127.0.0.1:$KAFKA_CONTROLLER_PORT
		listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT,CONTROLLER://127.0.0.1:$KAFKA_CONTROLLER_PORT
		advertised.listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT
		controller.listener.names=CONTROLLER
		inter.broker.listener.name=PLAINTEXT
		listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
		log.dirs=$KAFKA_DATA
		num.partitions=1
		auto.create.topics.enable=true
		offsets.topic.replication.factor=1
		transaction.state.log.replication.factor=1
		transaction.state.log.min.isr=1
		share.coordinator.state.topic.replication.factor=1
		share.coordinator.state.topic.min.isr=1
		group.initial.rebalance.delay.ms=0
	EOF
	# Quiet: warnings and errors only, plus the line that says the server has started.
	cat >"$KAFKA_LOG4J" <<-EOF
		status = warn
		appender.file.type = File
		appender.file.name = FILE
		appender.file.fileName = $KAFKA_LOG
		appender.file.layout.type = PatternLayout
		appender.file.layout.pattern = [%d] %p %m (%c)%n
		rootLogger.level = WARN
		rootLogger.appenderRef.file.ref = FILE
		logger.started.name = kafka.server.KafkaRaftServer
		logger.started.level = INFO
	EOF
}

kafka_start() {
	if kafka_pid >/dev/null; then
		log "kafka already running"
		wait_ready kafka kafka_pid kafka_ready "$KAFKA_LOG"
		return 0
	fi
	kafka_install
	mkdir -p "$KAFKA_DATA"
	kafka_write_config
	if [[ ! -s $KAFKA_DATA/meta.properties ]]; then
		local tool cluster_id
		tool=$(cat "$KAFKA_LIBS/.storage-tool-class")
		log "formatting Kafka storage $KAFKA_DATA ($tool)"
		cluster_id=$("$JAVA" -cp "$KAFKA_LIBS/*" "$tool" random-uuid 2>>"$KAFKA_DIR/format.log") ||
			die "StorageTool random-uuid failed; see $KAFKA_DIR/format.log"
		"$JAVA" -Dlog4j2.configurationFile="$KAFKA_LOG4J" -cp "$KAFKA_LIBS/*" "$tool" format -t "$cluster_id" -c "$KAFKA_PROPS" \
			>>"$KAFKA_DIR/format.log" 2>&1 || die "StorageTool format failed; see $KAFKA_DIR/format.log"
	fi
	log "starting kafka on 127.0.0.1:$KAFKA_PORT (controller $KAFKA_CONTROLLER_PORT)"
	spawn "$KAFKA_PID" "$KAFKA_OUT" "$JAVA" -Xmx1g -Xms256m -Dlog4j2.configurationFile="$KAFKA_LOG4J" \
		-cp "$KAFKA_LIBS/*" kafka.Kafka "$KAFKA_PROPS"
	wait_ready kafka kafka_pid kafka_ready "$KAFKA_LOG and $KAFKA_OUT"
}

kafka_stop() {
	local pid
	pid=$(kafka_pid) || return 0
	stop_pid kafka "$pid" TERM
	rm -f "$KAFKA_PID"
}

# ---------------------------------------------------------------------------------------------

service_status() {
	local svc=$1 pid
	if pid=$("${svc}_pid"); then
		printf '%-8s up   (pid %s)\n' "$svc" "$pid"
	else
		printf '%-8s down\n' "$svc"
		return 1
	fi
}

usage() {
	echo "usage: $0 {install|start|stop|status} {postgres|mariadb|kafka|all}" >&2
	exit 2
}

main() {
	(($# == 2)) || usage
	local action=$1 target=$2 services svc rc=0
	case $target in
	postgres | mariadb | kafka) services=("$target") ;;
	all) services=(postgres mariadb kafka) ;;
	*) usage ;;
	esac
	case $action in
	install | start | stop)
		[[ $EUID -eq 0 ]] || die "run as root: services are set up with apt-get and started with runuser"
		for svc in "${services[@]}"; do "${svc}_${action}"; done
		;;
	status)
		for svc in "${services[@]}"; do service_status "$svc" || rc=1; done
		return "$rc"
		;;
	*) usage ;;
	esac
}

main "$@"
