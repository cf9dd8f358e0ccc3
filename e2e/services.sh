#!/usr/bin/env bash
# Runs the real services the end-to-end tests need, as private processes of this machine:
# PostgreSQL 15, MariaDB 10.11, Oracle MySQL 9.7 (in a Debian sid chroot) and a single-node Kafka 4.4.0
# (KRaft), plus the secured test bed:
# a PostgreSQL 15 cluster that accepts TLS connections only (postgres_tls), a MariaDB that requires
# TLS (mariadb_tls), a SASL_SSL listener on the same Kafka broker, and the certificates they use.
#
#   e2e/services.sh {install|start|stop|crash|status} {postgres|postgres13|postgres14|postgres16|postgres17|postgres18|postgres_tls|mariadb|mariadb_tls|mysql|kafka|certs|tools|all}
#
# All state lives under ${CDCD_E2E_DIR:-/var/tmp/cdcd-e2e}; ports come from CDCD_PG_PORT,
# CDCD_PG_TLS_PORT, CDCD_MARIADB_PORT, CDCD_MARIADB_TLS_PORT, CDCD_MYSQL_PORT, CDCD_KAFKA_PORT,
# CDCD_KAFKA_CONTROLLER_PORT and CDCD_KAFKA_SASL_SSL_PORT. `start` installs what is missing, is
# idempotent and returns only once the service answers. `stop` ends each service by its recorded
# pid; `crash` kills postgres (-m immediate), mariadb, mysql or kafka (SIGKILL), for the chaos tests. The
# script must run as root (apt-get, runuser).
set -euo pipefail

STATE_DIR=${CDCD_E2E_DIR:-/var/tmp/cdcd-e2e}
PG_PORT=${CDCD_PG_PORT:-55432}
MARIADB_PORT=${CDCD_MARIADB_PORT:-53306}
KAFKA_PORT=${CDCD_KAFKA_PORT:-59092}
KAFKA_CONTROLLER_PORT=${CDCD_KAFKA_CONTROLLER_PORT:-59093}
PG_TLS_PORT=${CDCD_PG_TLS_PORT:-55433}
MARIADB_TLS_PORT=${CDCD_MARIADB_TLS_PORT:-53307}
MYSQL_PORT=${CDCD_MYSQL_PORT:-53308}
KAFKA_SASL_SSL_PORT=${CDCD_KAFKA_SASL_SSL_PORT:-59094}
KAFKA_VERSION=4.4.0
# Seconds a service gets to answer after being launched, and to exit after being asked to.
# Long enough for a JVM and five database servers starting side by side on a loaded 2-core machine;
# a service that dies is reported at once whatever this is.
START_TIMEOUT=${CDCD_SERVICE_START_TIMEOUT:-240}
STOP_TIMEOUT=${CDCD_SERVICE_STOP_TIMEOUT:-30}

PG_BIN=/usr/lib/postgresql/15/bin
PG_DIR=$STATE_DIR/postgres
PG_DATA=$PG_DIR/data
PG_LOG=$PG_DIR/postgres.log

MARIADB_DIR=$STATE_DIR/mariadb
MARIADB_CNF=$MARIADB_DIR/my.cnf
MARIADB_PID=$MARIADB_DIR/mariadbd.pid # ours, written at launch; the server keeps its own in the datadir
MARIADB_LOG=$MARIADB_DIR/mariadbd.log
MARIADB_ROOT_PASSWORD=cdcd
MARIADB_CAPTURE_USER=cdcd
MARIADB_CAPTURE_PASSWORD=cdcd

MYSQL_DIR=$STATE_DIR/mysql
MYSQL_ROOT=$MYSQL_DIR/root # the sid chroot; the instance is its /cdcd
MYSQL_PID=$MYSQL_DIR/mysqld.pid
MYSQL_LOG=$MYSQL_ROOT/cdcd/mysqld.log
MYSQL_UNAVAILABLE=$MYSQL_DIR/UNAVAILABLE # why MySQL could not be installed, while it cannot
MYSQL_ROOT_PASSWORD=cdcd
MYSQL_CAPTURE_USER=cdcd
MYSQL_CAPTURE_PASSWORD=cdcd
# What a binlog reader needs on MySQL 8.4+ (REPLICATION CLIENT runs SHOW BINARY LOG STATUS).
MYSQL_CAPTURE_GRANTS='SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE, REPLICATION CLIENT, LOCK TABLES'

KAFKA_DIR=$STATE_DIR/kafka
KAFKA_DATA=$KAFKA_DIR/data
KAFKA_PROPS=$KAFKA_DIR/server.properties
KAFKA_LOG4J=$KAFKA_DIR/log4j2.properties
KAFKA_PID=$KAFKA_DIR/kafka.pid
KAFKA_LOG=$KAFKA_DIR/server.log
KAFKA_OUT=$KAFKA_DIR/kafka.out
KAFKA_SCRAM_MARK=$KAFKA_DIR/scram-users # "<cluster id> <users>" once the SCRAM users exist
JAVA=${JAVA_HOME:+$JAVA_HOME/bin/}java
KEYTOOL=${JAVA_HOME:+$JAVA_HOME/bin/}keytool

# The secured services (postgres_tls, mariadb_tls, Kafka's SASL_SSL listener) share one account
# and one set of certificates; e2e/testenv/secure.go knows these names.
SECURE_USER=cdcd
SECURE_PASSWORD=cdcd-secret
# A PLAIN user of Kafka's SASL_SSL listener that is not a super user: the ACLs a test denies it apply.
KAFKA_RESTRICTED_USER=cdcd-restricted
KAFKA_RESTRICTED_PASSWORD=cdcd-restricted-secret
CERT_USER=cdcd_cert # authenticated by the client certificate (its CN) on postgres_tls and mariadb_tls
CERTS_DIR=$STATE_DIR/certs
STORE_PASSWORD=cdcd-store # of every PKCS12 and JKS keystore and truststore

PG_TLS_DIR=$STATE_DIR/postgres-tls
PG_TLS_DATA=$PG_TLS_DIR/data
PG_TLS_LOG=$PG_TLS_DIR/postgres.log
PG_TLS_ADMIN_PASSWORD=cdcd # of the superuser postgres over TLS; the script itself uses the socket

MARIADB_TLS_DIR=$STATE_DIR/mariadb-tls
MARIADB_TLS_CNF=$MARIADB_TLS_DIR/my.cnf
MARIADB_TLS_PID=$MARIADB_TLS_DIR/mariadbd.pid
MARIADB_TLS_LOG=$MARIADB_TLS_DIR/mariadbd.log

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
# Test certificates, made once under $CERTS_DIR and kept (delete the directory to make new ones):
#
#   ca.pem ca.key                      the CA that signed every certificate below but other-client
#   server.pem server.key              the servers' certificate: subjectAltName IP:127.0.0.1, DNS:localhost
#   wrong-host.pem wrong-host.key      signed by the CA but only for DNS:wrong.example (hostname mismatch)
#   client.pem client.key              CN=cdcd_cert, for mutual TLS (the cert-authenticated accounts)
#   other-ca.pem other-ca.key          an unrelated CA that no service trusts (untrusted-CA tests), and
#   other-client.pem other-client.key  a client certificate it signed (CN=cdcd_cert as well)
#   truststore.p12 truststore.jks      the CA, alias "ca"; other-truststore.{p12,jks}: the other CA
#   server.p12 server.jks              keystores holding the key, certificate and CA chain under
#   client.p12 client.jks              the alias of their name (server, client, wrong-host)
#   wrong-host.p12
#
# Keys are ECDSA P-256 (fast to make, taken by every client and server here); the PEM keys are
# unencrypted PKCS#8 and private to root (libpq insists), every other file is world-readable.
# Every keystore and truststore has the password $STORE_PASSWORD.

certs_install() {
	apt_ensure openssl
	[[ -x $(command -v "$KEYTOOL") ]] || die "keytool not found (looked for $KEYTOOL): the JDK's keytool writes the JKS stores"
}

certs_pid() { [[ -e $CERTS_DIR/.complete ]] && echo "$CERTS_DIR"; }

# certs_openssl_config prints the extensions of each kind of certificate.
certs_openssl_config() {
	cat <<-EOF
		[req]
		distinguished_name = dn
		[dn]
		[ca]
		basicConstraints = critical, CA:TRUE
		keyUsage = critical, keyCertSign, cRLSign
		subjectKeyIdentifier = hash
		[server]
		basicConstraints = critical, CA:FALSE
		keyUsage = critical, digitalSignature
		extendedKeyUsage = serverAuth, clientAuth
		subjectAltName = IP:127.0.0.1, DNS:localhost
		subjectKeyIdentifier = hash
		authorityKeyIdentifier = keyid
		[wrong_host]
		basicConstraints = critical, CA:FALSE
		keyUsage = critical, digitalSignature
		extendedKeyUsage = serverAuth, clientAuth
		subjectAltName = DNS:wrong.example
		subjectKeyIdentifier = hash
		authorityKeyIdentifier = keyid
		[client]
		basicConstraints = critical, CA:FALSE
		keyUsage = critical, digitalSignature
		extendedKeyUsage = clientAuth
		subjectKeyIdentifier = hash
		authorityKeyIdentifier = keyid
	EOF
}

# certs_ca DIR NAME CN makes the self-signed CA DIR/NAME.{pem,key}.
certs_ca() {
	local dir=$1 name=$2 cn=$3
	openssl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -sha256 -days 3650 -subj "/CN=$cn" \
		-config "$dir/openssl.cnf" -extensions ca -keyout "$dir/$name.key" -out "$dir/$name.pem"
}

# certs_leaf DIR NAME CA CN EXTENSIONS makes DIR/NAME.{pem,key}, signed by DIR/CA.{pem,key}.
certs_leaf() {
	local dir=$1 name=$2 ca=$3 cn=$4 ext=$5
	openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$cn" -config "$dir/openssl.cnf" \
		-keyout "$dir/$name.key" -out "$dir/$name.csr" &&
		openssl x509 -req -in "$dir/$name.csr" -CA "$dir/$ca.pem" -CAkey "$dir/$ca.key" -sha256 -days 3650 \
			-set_serial "0x$(openssl rand -hex 16)" -extfile "$dir/openssl.cnf" -extensions "$ext" -out "$dir/$name.pem" &&
		rm -f "$dir/$name.csr"
}

# A keytool run is a short JVM: the client compiler and the serial collector start it fastest.
KEYTOOL_FAST=(-J-XX:TieredStopAtLevel=1 -J-XX:+UseSerialGC -J-Xshare:auto)

# certs_make DIR writes every file of the list above into DIR. The keys are made in parallel and
# so are the keytool runs (each a JVM start): two to three seconds on two cores, once.
certs_make() {
	local dir=$1 pids=() pid name
	certs_openssl_config >"$dir/openssl.cnf"
	certs_ca "$dir" ca "cdcd test CA" & pids+=($!)
	certs_ca "$dir" other-ca "cdcd untrusted test CA" & pids+=($!)
	for pid in "${pids[@]}"; do wait "$pid" || return 1; done
	pids=()
	certs_leaf "$dir" server ca localhost server & pids+=($!)
	certs_leaf "$dir" wrong-host ca wrong.example wrong_host & pids+=($!)
	certs_leaf "$dir" client ca "$CERT_USER" client & pids+=($!)
	certs_leaf "$dir" other-client other-ca "$CERT_USER" client & pids+=($!)
	for pid in "${pids[@]}"; do wait "$pid" || return 1; done
	pids=()
	for name in server wrong-host client; do
		openssl pkcs12 -export -in "$dir/$name.pem" -inkey "$dir/$name.key" -certfile "$dir/ca.pem" -name "$name" \
			-passout "pass:$STORE_PASSWORD" -out "$dir/$name.p12" || return 1
	done
	for name in server client; do
		"$KEYTOOL" "${KEYTOOL_FAST[@]}" -importkeystore -noprompt -srckeystore "$dir/$name.p12" -srcstoretype PKCS12 \
			-srcstorepass "$STORE_PASSWORD" -destkeystore "$dir/$name.jks" -deststoretype JKS \
			-deststorepass "$STORE_PASSWORD" -destkeypass "$STORE_PASSWORD" & pids+=($!)
	done
	local ca type ext
	for ca in ca other-ca; do
		for type in PKCS12 JKS; do
			ext=p12
			[[ $type == JKS ]] && ext=jks
			"$KEYTOOL" "${KEYTOOL_FAST[@]}" -importcert -noprompt -alias ca -file "$dir/$ca.pem" -storetype "$type" \
				-keystore "$dir/${ca%ca}truststore.$ext" -storepass "$STORE_PASSWORD" & pids+=($!)
		done
	done
	for pid in "${pids[@]}"; do wait "$pid" || return 1; done
	# libpq refuses a client key others may read; the servers get copies of their own.
	chmod 644 "$dir"/*
	chmod 600 "$dir"/*.key
}

certs_start() {
	[[ -e $CERTS_DIR/.complete ]] && return 0
	certs_install
	ensure_state_dir
	# The services that need the certificates may be started in parallel (`start all`): the first
	# makes them under the lock, the others wait for it and find them made.
	(
		flock 9
		[[ -e $CERTS_DIR/.complete ]] && exit 0
		log "making test certificates in $CERTS_DIR"
		# Made in a scratch directory and renamed at the end, so an interrupted run is never
		# mistaken for a complete set.
		scratch=$CERTS_DIR.partial
		rm -rf "$scratch"
		mkdir -p "$scratch"
		certs_make "$scratch" >"$STATE_DIR/certs.log" 2>&1 || die "making the test certificates failed; see $STATE_DIR/certs.log"
		touch "$scratch/.complete"
		mv "$STATE_DIR/certs.log" "$scratch/make.log"
		rm -rf "$CERTS_DIR"
		mv "$scratch" "$CERTS_DIR"
		chmod 755 "$CERTS_DIR"
	) 9>"$STATE_DIR/.certs.lock"
}

# The certificates are files, not a process: nothing to stop, and they are kept across restarts.
certs_stop() { :; }

# ---------------------------------------------------------------------------------------------
# tools: Debian's chromium, in which the status page's test (e2e/ui_test.go) renders /ui/ headless,
# and promtool (Debian's prometheus package), which checks the alerting rules and the dashboard's
# expressions (cmd/cdcd/deploy_test.go), and iptables, with which the network partition tests
# (e2e/netpartition_test.go) cut the link to cdcd's network namespace. Nothing runs: the tests start them.

tools_install() { apt_ensure chromium prometheus iptables; }
tools_start() { tools_install; }
tools_stop() { :; }

# ---------------------------------------------------------------------------------------------
# What the database services share: a service SVC has the functions SVC_install, SVC_pid (prints
# the pid of its running server) and SVC_ready (succeeds once it answers as the tests connect).

# service_running SVC LOGFILE succeeds when SVC runs already, once it answers: a start then has
# nothing more to do. It fails, at once, when SVC is not running.
service_running() {
	local svc=$1 logfile=$2
	"${svc}_pid" >/dev/null || return 1
	log "$svc already running"
	wait_ready "$svc" "${svc}_pid" "${svc}_ready" "$logfile"
}

# service_stop SVC SIGNAL [PIDFILE] ends the running SVC with SIGNAL (stop_pid) and removes PIDFILE,
# the pid file this script wrote when it launched SVC, if it wrote one.
service_stop() {
	local svc=$1 signal=$2 pidfile=${3:-} pid
	pid=$("${svc}_pid") || return 0
	stop_pid "$svc" "$pid" "$signal"
	[[ -z $pidfile ]] || rm -f "$pidfile"
}

# ---------------------------------------------------------------------------------------------
# PostgreSQL 15
#
# Each cluster (postgres, postgres_tls) lives in a directory of its own laid out alike: DIR/data
# the cluster, DIR/postgres.log its log, DIR/initdb.log.

postgres_install() {
	apt_ensure postgresql-15
	[[ -x $PG_BIN/postgres ]] || die "$PG_BIN/postgres missing after installing postgresql-15"
}

# The clusters here are e2e/pgversions.sh's (sourced below): pg_cluster_initdb, pg_cluster_conf and
# pg_cluster_launch with Debian's binaries, PG_BIN.

# pg_prepare SVC DIR installs PostgreSQL and makes the cluster DIR/data unless it exists. The
# caller writes its cdcd.conf (pg_cluster_conf) before pg_launch.
pg_prepare() {
	local svc=$1 dir=$2
	"${svc}_install"
	service_dir postgres "$dir"
	pg_cluster_initdb "$PG_BIN" "$dir"
}

# pg_launch SVC DIR WHERE starts the cluster DIR/data of Debian's binaries (see pg_cluster_launch).
pg_launch() { pg_cluster_launch "$PG_BIN" "$2" "$1" "$3"; }

postgres_pid() { live_pid "$PG_DATA/postmaster.pid" "postgres -D $PG_DATA"; }

postgres_ready() { "$PG_BIN/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT" -d postgres -U postgres; }

postgres_start() {
	service_running postgres "$PG_LOG" && return 0
	pg_prepare postgres "$PG_DIR"
	pg_cluster_conf "$PG_DATA" "$PG_PORT"
	pg_launch postgres "$PG_DIR" "127.0.0.1:$PG_PORT"
	wait_ready postgres postgres_pid postgres_ready "$PG_LOG"
}

# SIGINT is PostgreSQL's fast shutdown; SIGTERM (smart) would wait for open walsenders forever.
postgres_stop() { service_stop postgres INT; }
# SIGQUIT is `pg_ctl stop -m immediate`: no checkpoint, every backend killed, crash recovery at the next start.
postgres_crash() { service_stop postgres QUIT; }

# ---------------------------------------------------------------------------------------------
# PostgreSQL 13, 14, 16, 17 and 18, the version matrix beside 15: e2e/pgversions.sh runs them (each a
# cluster set up as the 15 service is, on 554NN); `all` has 13 and 18, the versions `make test` runs.
# shellcheck source=e2e/pgversions.sh
source "$(dirname "${BASH_SOURCE[0]}")/pgversions.sh"
for _major in "${PGV_MAJORS[@]}"; do
	eval "postgres${_major}_install() { pgv_install $_major; }
		postgres${_major}_start() { pgv_start $_major; }
		postgres${_major}_stop() { pgv_stop $_major; }
		postgres${_major}_pid() { pg_cluster_pid \"\$(pgv_dir $_major)/data\"; }"
done
unset _major

# ---------------------------------------------------------------------------------------------
# PostgreSQL 15 that accepts TLS connections only (a second cluster of the same binaries)
#
# Over TCP only hostssl connections get in, normal and replication ones alike: $SECURE_USER
# (LOGIN REPLICATION) and the superuser postgres ($PG_TLS_ADMIN_PASSWORD) by scram-sha-256, and
# $CERT_USER by its client certificate. The script itself uses the Unix socket (trust).

postgres_tls_install() { postgres_install; }

postgres_tls_pid() { live_pid "$PG_TLS_DATA/postmaster.pid" "postgres -D $PG_TLS_DATA"; }

# The probe is a TLS login over TCP, the connection the tests make.
postgres_tls_ready() {
	PGPASSWORD=$SECURE_PASSWORD PGCONNECT_TIMEOUT=5 "$PG_BIN/psql" -XAtq -c 'SELECT 1' \
		"host=127.0.0.1 port=$PG_TLS_PORT dbname=postgres user=$SECURE_USER sslmode=verify-full sslrootcert=$CERTS_DIR/ca.pem" >/dev/null 2>&1
}

# postgres_tls_socket_ready answers once the postmaster takes connections on its socket, before
# the accounts exist.
postgres_tls_socket_ready() { "$PG_BIN/pg_isready" -q -h "$PG_TLS_DATA" -p "$PG_TLS_PORT" -d postgres -U postgres; }

postgres_tls_write_config() {
	# The server's key must belong to the server's user and be private to it.
	install -o postgres -g postgres -m 600 "$CERTS_DIR/server.key" "$PG_TLS_DATA/server.key"
	install -o postgres -g postgres -m 644 "$CERTS_DIR/server.pem" "$PG_TLS_DATA/server.crt"
	install -o postgres -g postgres -m 644 "$CERTS_DIR/ca.pem" "$PG_TLS_DATA/root.crt"
	pg_cluster_conf "$PG_TLS_DATA" "$PG_TLS_PORT" "ssl = on" "ssl_cert_file = 'server.crt'" "ssl_key_file = 'server.key'" \
		"ssl_ca_file = 'root.crt'" "password_encryption = 'scram-sha-256'"
	# The first matching line wins: TCP without TLS is rejected before any other line is read.
	# "replication" matches physical replication only; logical replication connections
	# (replication=database) name a database and match "all".
	cat >"$PG_TLS_DATA/pg_hba.conf" <<-EOF
		local     all         all                   trust
		hostnossl all         all         0.0.0.0/0 reject
		hostnossl all         all         ::/0      reject
		hostssl   all         $CERT_USER  0.0.0.0/0 cert
		hostssl   replication $CERT_USER  0.0.0.0/0 cert
		hostssl   all         all         0.0.0.0/0 scram-sha-256
		hostssl   replication all         0.0.0.0/0 scram-sha-256
	EOF
	chown postgres:postgres "$PG_TLS_DATA/pg_hba.conf"
}

# postgres_tls_users creates or updates the accounts (idempotent, a few milliseconds).
postgres_tls_users() {
	run_as postgres "$PG_BIN/psql" -XAtq -v ON_ERROR_STOP=1 -h "$PG_TLS_DATA" -p "$PG_TLS_PORT" -U postgres -d postgres <<-EOF
		SET password_encryption = 'scram-sha-256';
		SELECT 'CREATE ROLE $SECURE_USER' WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$SECURE_USER') \gexec
		SELECT 'CREATE ROLE $CERT_USER' WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$CERT_USER') \gexec
		ALTER ROLE $SECURE_USER WITH LOGIN REPLICATION PASSWORD '$SECURE_PASSWORD';
		ALTER ROLE $CERT_USER WITH LOGIN REPLICATION PASSWORD NULL;
		ALTER ROLE postgres WITH PASSWORD '$PG_TLS_ADMIN_PASSWORD';
	EOF
}

postgres_tls_start() {
	certs_start
	service_running postgres_tls "$PG_TLS_LOG" && return 0
	pg_prepare postgres_tls "$PG_TLS_DIR"
	postgres_tls_write_config
	pg_launch postgres_tls "$PG_TLS_DIR" "127.0.0.1:$PG_TLS_PORT (TLS only)"
	wait_ready postgres_tls postgres_tls_pid postgres_tls_socket_ready "$PG_TLS_LOG"
	postgres_tls_users >/dev/null || die "creating the postgres_tls accounts failed; see $PG_TLS_LOG"
	wait_ready postgres_tls postgres_tls_pid postgres_tls_ready "$PG_TLS_LOG"
}

postgres_tls_stop() { service_stop postgres_tls INT; }

# ---------------------------------------------------------------------------------------------
# MariaDB 10.11
#
# Each instance (mariadb, mariadb_tls) lives in a directory of its own laid out alike: DIR/my.cnf
# its configuration, DIR/data, DIR/mariadbd.sock, DIR/mariadbd.pid (ours, written at launch; the
# server keeps its own in the datadir), DIR/mariadbd.log, DIR/.users-created once the accounts exist.

mariadb_install() {
	apt_ensure mariadb-server
	command -v mariadbd >/dev/null || [[ -x /usr/sbin/mariadbd ]] || die "mariadbd missing after installing mariadb-server"
}

# MARIADB_CAPTURE_GRANTS are what a binlog reader needs, the grants of every capture account.
MARIADB_CAPTURE_GRANTS='SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE, BINLOG MONITOR, LOCK TABLES'

# mariadb_write_cnf_file DIR PORT [SETTING...] writes DIR/my.cnf: the [mysqld] settings every
# instance here shares (a binlog as Debezium needs it: ROW, full images and metadata, strict GTIDs),
# each SETTING as a line of its own, and a [client] section that lets the command-line tools (and
# this script) find the private server as root.
mariadb_write_cnf_file() {
	local dir=$1 port=$2
	shift 2
	{
		cat <<-EOF
			[mysqld]
			user = mysql
			datadir = $dir/data
			socket = $dir/mariadbd.sock
			pid-file = $dir/data/mariadbd.pid
			log-error = $dir/mariadbd.log
			port = $port
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
		EOF
		(($# == 0)) || printf '%s\n' "$@"
		cat <<-EOF

			[client]
			socket = $dir/mariadbd.sock
			port = $port
			user = root
			password = $MARIADB_ROOT_PASSWORD
		EOF
	} >"$dir/my.cnf"
}

# mariadb_bootstrap_users DIR ACCOUNTS gives root the password over TCP and the socket, drops the
# password-less root accounts mariadb-install-db creates for other hosts, and runs ACCOUNTS (SQL
# creating the instance's own accounts). It runs once after mariadb-install-db, while root still
# logs in over the socket without a password; that password is set last so that a failed attempt
# can simply be repeated.
mariadb_bootstrap_users() {
	local dir=$1 accounts=$2
	mariadb --no-defaults --socket="$dir/mariadbd.sock" -u root <<-EOF
		CREATE USER IF NOT EXISTS 'root'@'127.0.0.1';
		ALTER USER 'root'@'127.0.0.1' IDENTIFIED BY '$MARIADB_ROOT_PASSWORD';
		GRANT ALL PRIVILEGES ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION;
		DROP USER IF EXISTS 'root'@'::1', 'root'@'$(hostname)';
		$accounts
		ALTER USER 'root'@'localhost' IDENTIFIED BY '$MARIADB_ROOT_PASSWORD';
	EOF
}

# mariadb_instance_start SVC DIR WHERE installs and starts the instance of service SVC in DIR: it
# makes the data directory once (mariadb-install-db), launches the server from DIR/my.cnf (which
# SVC_write_cnf writes first, on every start), waits until it answers (SVC_ready) and then, the
# first time, creates the accounts that SVC_accounts prints. WHERE says, for the log, where it listens.
mariadb_instance_start() {
	local svc=$1 dir=$2 where=$3
	"${svc}_install"
	service_dir mysql "$dir"
	"${svc}_write_cnf"
	if [[ ! -d $dir/data/mysql ]]; then
		log "mariadb-install-db $dir/data"
		rm -rf "$dir/data" "$dir/.users-created"
		mariadb-install-db --defaults-file="$dir/my.cnf" --auth-root-authentication-method=normal --skip-test-db \
			>"$dir/install-db.log" 2>&1 || die "mariadb-install-db failed; see $dir/install-db.log"
	fi
	log "starting $svc on $where"
	spawn "$dir/mariadbd.pid" "$dir/mariadbd.out" /usr/sbin/mariadbd --defaults-file="$dir/my.cnf"
	wait_ready "$svc" "${svc}_pid" "${svc}_ready" "$dir/mariadbd.log"
	if [[ ! -e $dir/.users-created ]]; then
		mariadb_bootstrap_users "$dir" "$("${svc}_accounts")" || die "creating the $svc users failed; see $dir/mariadbd.log"
		touch "$dir/.users-created"
	fi
}

mariadb_pid() { live_pid "$MARIADB_PID" "mariadbd --defaults-file=$MARIADB_CNF"; }

mariadb_ready() { mariadb-admin --defaults-file="$MARIADB_CNF" ping >/dev/null 2>&1; }

mariadb_write_cnf() { mariadb_write_cnf_file "$MARIADB_DIR" "$MARIADB_PORT"; }

# mariadb_accounts prints the SQL creating the capture user.
mariadb_accounts() {
	cat <<-EOF
		CREATE USER IF NOT EXISTS '$MARIADB_CAPTURE_USER'@'%' IDENTIFIED BY '$MARIADB_CAPTURE_PASSWORD';
		GRANT $MARIADB_CAPTURE_GRANTS ON *.* TO '$MARIADB_CAPTURE_USER'@'%';
	EOF
}

mariadb_start() {
	service_running mariadb "$MARIADB_LOG" && return 0
	mariadb_instance_start mariadb "$MARIADB_DIR" "127.0.0.1:$MARIADB_PORT"
}

mariadb_stop() { service_stop mariadb TERM "$MARIADB_PID"; }
mariadb_crash() { service_stop mariadb KILL "$MARIADB_PID"; }

# ---------------------------------------------------------------------------------------------
# MariaDB 10.11 that requires TLS (a second instance, binlog set up like the first)
#
# require_secure_transport refuses TCP without TLS (the Unix socket, which the script uses, is
# exempt). Accounts: root@127.0.0.1 ($MARIADB_ROOT_PASSWORD), the capture user $SECURE_USER
# (REQUIRE SSL) and $CERT_USER (REQUIRE X509: a client certificate the CA signed), both with the
# capture grants of the first instance and the password $SECURE_PASSWORD.

mariadb_tls_install() { mariadb_install; }

mariadb_tls_pid() { live_pid "$MARIADB_TLS_PID" "mariadbd --defaults-file=$MARIADB_TLS_CNF"; }

mariadb_tls_ready() { mariadb-admin --defaults-file="$MARIADB_TLS_CNF" ping >/dev/null 2>&1; }

mariadb_tls_write_cnf() {
	# The server's own copies: the key in $CERTS_DIR is root's.
	install -o mysql -g mysql -m 600 "$CERTS_DIR/server.key" "$MARIADB_TLS_DIR/server.key"
	install -o mysql -g mysql -m 644 "$CERTS_DIR/server.pem" "$MARIADB_TLS_DIR/server.pem"
	install -o mysql -g mysql -m 644 "$CERTS_DIR/ca.pem" "$MARIADB_TLS_DIR/ca.pem"
	mariadb_write_cnf_file "$MARIADB_TLS_DIR" "$MARIADB_TLS_PORT" "ssl_cert = $MARIADB_TLS_DIR/server.pem" \
		"ssl_key = $MARIADB_TLS_DIR/server.key" "ssl_ca = $MARIADB_TLS_DIR/ca.pem" "require_secure_transport = ON"
}

# mariadb_tls_accounts prints the SQL creating the two TLS accounts.
mariadb_tls_accounts() {
	cat <<-EOF
		CREATE USER IF NOT EXISTS '$SECURE_USER'@'%';
		ALTER USER '$SECURE_USER'@'%' IDENTIFIED BY '$SECURE_PASSWORD' REQUIRE SSL;
		GRANT $MARIADB_CAPTURE_GRANTS ON *.* TO '$SECURE_USER'@'%';
		CREATE USER IF NOT EXISTS '$CERT_USER'@'%';
		ALTER USER '$CERT_USER'@'%' IDENTIFIED BY '$SECURE_PASSWORD' REQUIRE X509;
		GRANT $MARIADB_CAPTURE_GRANTS ON *.* TO '$CERT_USER'@'%';
	EOF
}

mariadb_tls_start() {
	certs_start
	service_running mariadb_tls "$MARIADB_TLS_LOG" && return 0
	mariadb_instance_start mariadb_tls "$MARIADB_TLS_DIR" "127.0.0.1:$MARIADB_TLS_PORT (TLS required)"
}

mariadb_tls_stop() { service_stop mariadb_tls TERM "$MARIADB_TLS_PID"; }

# ---------------------------------------------------------------------------------------------
# Oracle MySQL 9.7 (Debian sid's mysql-server-core), in a chroot
#
# Sid's MySQL needs a newer libc than this machine's, so it runs in a `debootstrap --variant=minbase
# sid` chroot ($MYSQL_ROOT, about 650 MB, made once from the Debian mirror apt already uses). Inside
# it, /cdcd holds the instance: /cdcd/my.cnf, /cdcd/data, /cdcd/mysqld.sock, /cdcd/mysqld.log and the
# server's copies of the test certificates (TLS is offered, not required, so caching_sha2_password is
# exercised both over TLS and over plain TCP with RSA key exchange). The binlog is as Debezium needs it
# (ROW, FULL images and metadata, GTIDs on). Accounts: root@127.0.0.1 ($MYSQL_ROOT_PASSWORD) and the
# capture user $MYSQL_CAPTURE_USER with a reader's grants, both caching_sha2_password.
#
# Sid moves daily, so the install may fail where the rest of the test bed does not: then `install` and
# `start` say so in one loud line, write the reason to $MYSQL_UNAVAILABLE (e2e/testenv skips the MySQL
# tests with it, and `make test` prints it in its summary) and succeed, so the other services still run.

mysql_install() {
	if [[ -e $MYSQL_ROOT/.cdcd-complete ]]; then
		rm -f "$MYSQL_UNAVAILABLE"
		return 0
	fi
	local reason=
	mysql_make_root || reason=$MYSQL_INSTALL_FAILURE
	if [[ -n $reason ]]; then
		log "!!!!!!!! MySQL NOT INSTALLED: $reason; the MySQL tests will be skipped !!!!!!!!"
		echo "$reason" >"$MYSQL_UNAVAILABLE"
		return 0
	fi
	rm -f "$MYSQL_UNAVAILABLE"
}

# mysql_make_root makes the chroot in a scratch directory renamed at the end, so an interrupted run is
# never mistaken for a complete one. On failure it sets MYSQL_INSTALL_FAILURE.
MYSQL_INSTALL_FAILURE=
mysql_make_root() {
	MYSQL_INSTALL_FAILURE="apt-get could not install debootstrap"
	( apt_ensure debootstrap ) || return 1
	local mirror scratch=$MYSQL_ROOT.partial
	mirror=$(apt-get indextargets --format '$(REPO_URI)' 'Label: Debian' | head -n 1)
	MYSQL_INSTALL_FAILURE="no Debian mirror in apt's sources (apt-get indextargets)"
	[[ -n $mirror ]] || return 1
	ensure_state_dir
	mkdir -p "$MYSQL_DIR"
	log "making a Debian sid chroot with mysql-server-core in $MYSQL_ROOT (from $mirror)"
	rm -rf "$scratch"
	MYSQL_INSTALL_FAILURE="debootstrap of Debian sid with mysql-server-core failed; see $MYSQL_DIR/debootstrap.log"
	debootstrap --variant=minbase --include=mysql-server-core,mysql-client sid "$scratch" "$mirror" \
		>"$MYSQL_DIR/debootstrap.log" 2>&1 || return 1
	MYSQL_INSTALL_FAILURE="the sid chroot's mysqld does not run; see $MYSQL_DIR/debootstrap.log"
	chroot "$scratch" /usr/sbin/mysqld --version >>"$MYSQL_DIR/debootstrap.log" 2>&1 || return 1
	chroot "$scratch" sh -c 'getent passwd mysql >/dev/null || useradd --system --no-create-home --home-dir /nonexistent mysql' \
		>>"$MYSQL_DIR/debootstrap.log" 2>&1 || return 1
	# The package cache is not needed once installed: a fifth of the chroot.
	rm -rf "$scratch"/var/cache/apt/archives/*.deb
	touch "$scratch/.cdcd-complete"
	rm -rf "$MYSQL_ROOT"
	mv "$scratch" "$MYSQL_ROOT"
}

# mysql_client ARGS... runs the chroot's mysql client as root over the instance's socket.
mysql_client() { chroot "$MYSQL_ROOT" mysql --defaults-file=/cdcd/my.cnf "$@"; }

mysql_pid() { live_pid "$MYSQL_PID" "mysqld --defaults-file=/cdcd/my.cnf"; }

mysql_ready() { chroot "$MYSQL_ROOT" mysqladmin --defaults-file=/cdcd/my.cnf ping >/dev/null 2>&1; }

mysql_write_cnf() {
	local home=$MYSQL_ROOT/cdcd owner
	# The server's own copies: the key in $CERTS_DIR is root's, and outside the chroot. The owner is
	# the chroot's mysql user, whose ids need not be this machine's.
	owner=$(chroot "$MYSQL_ROOT" id -u mysql):$(chroot "$MYSQL_ROOT" id -g mysql)
	install -o "${owner%:*}" -g "${owner#*:}" -m 600 "$CERTS_DIR/server.key" "$home/server.key"
	install -o "${owner%:*}" -g "${owner#*:}" -m 644 "$CERTS_DIR/server.pem" "$home/server.pem"
	install -o "${owner%:*}" -g "${owner#*:}" -m 644 "$CERTS_DIR/ca.pem" "$home/ca.pem"
	cat >"$home/my.cnf" <<-EOF
		[mysqld]
		user = mysql
		datadir = /cdcd/data
		socket = /cdcd/mysqld.sock
		pid-file = /cdcd/data/mysqld.pid
		log-error = /cdcd/mysqld.log
		port = $MYSQL_PORT
		bind-address = 127.0.0.1
		# The X protocol's own port (33060) is not this test bed's to take.
		mysqlx = OFF
		skip-name-resolve
		server_id = 1
		log_bin = mysql-bin
		binlog_row_image = FULL
		binlog_row_metadata = FULL
		gtid_mode = ON
		enforce_gtid_consistency = ON
		# MySQL 9 refuses to start while secure_file_priv names a directory that does not exist.
		secure_file_priv = ""
		innodb_redo_log_capacity = 64M
		ssl_cert = /cdcd/server.pem
		ssl_key = /cdcd/server.key
		ssl_ca = /cdcd/ca.pem
		# Disposable test state: favour speed over durability.
		innodb_flush_log_at_trx_commit = 2
		sync_binlog = 0

		[client]
		socket = /cdcd/mysqld.sock
		user = root
	EOF
}

# mysql_accounts prints the SQL creating root@127.0.0.1 and the capture user. It runs over the socket
# as root@localhost, which --initialize-insecure leaves without a password.
mysql_accounts() {
	cat <<-EOF
		CREATE USER IF NOT EXISTS 'root'@'127.0.0.1' IDENTIFIED WITH caching_sha2_password BY '$MYSQL_ROOT_PASSWORD';
		GRANT ALL PRIVILEGES ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION;
		CREATE USER IF NOT EXISTS '$MYSQL_CAPTURE_USER'@'%' IDENTIFIED WITH caching_sha2_password BY '$MYSQL_CAPTURE_PASSWORD';
		GRANT $MYSQL_CAPTURE_GRANTS ON *.* TO '$MYSQL_CAPTURE_USER'@'%';
	EOF
}

mysql_start() {
	certs_start
	mysql_install
	if [[ -e $MYSQL_UNAVAILABLE ]]; then
		log "!!!!!!!! MySQL NOT STARTED: $(<"$MYSQL_UNAVAILABLE"); the MySQL tests will be skipped !!!!!!!!"
		return 0
	fi
	if ! service_running mysql "$MYSQL_LOG"; then
		mkdir -p "$MYSQL_ROOT/cdcd"
		chroot "$MYSQL_ROOT" chown mysql:mysql /cdcd
		mysql_write_cnf
		if [[ ! -d $MYSQL_ROOT/cdcd/data/mysql ]]; then
			log "mysqld --initialize-insecure /cdcd/data (in $MYSQL_ROOT)"
			rm -rf "$MYSQL_ROOT/cdcd/data" "$MYSQL_ROOT/cdcd/.users-created"
			chroot "$MYSQL_ROOT" /usr/sbin/mysqld --defaults-file=/cdcd/my.cnf --initialize-insecure \
				>"$MYSQL_DIR/initialize.log" 2>&1 || die "mysqld --initialize-insecure failed; see $MYSQL_LOG"
		fi
		# A mysqld killed by SIGKILL (`crash mysql`) leaves its socket's lock file naming its pid; once another
		# process has that pid, the next mysqld refuses to start ("Another process with pid N is using unix
		# socket file"). No mysqld of ours runs here, so both files are stale.
		rm -f "$MYSQL_ROOT/cdcd/mysqld.sock" "$MYSQL_ROOT/cdcd/mysqld.sock.lock"
		log "starting mysql on 127.0.0.1:$MYSQL_PORT"
		spawn "$MYSQL_PID" "$MYSQL_DIR/mysqld.out" chroot "$MYSQL_ROOT" /usr/sbin/mysqld --defaults-file=/cdcd/my.cnf
		wait_ready mysql mysql_pid mysql_ready "$MYSQL_LOG"
	fi
	if [[ ! -e $MYSQL_ROOT/cdcd/.users-created ]]; then
		mysql_accounts | mysql_client || die "creating the mysql users failed; see $MYSQL_LOG"
		touch "$MYSQL_ROOT/cdcd/.users-created"
	fi
	log "mysql is $(mysql_client -N -e 'SELECT VERSION()')"
}

mysql_stop() { service_stop mysql TERM "$MYSQL_PID"; }
mysql_crash() { service_stop mysql KILL "$MYSQL_PID"; }

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

# kafka_sasl_ssl_ready logs in on the SASL_SSL listener with PLAIN (Debian's kcat fails SCRAM
# here; the tests check SCRAM with Kafka's own client and kafka-go).
kafka_sasl_ssl_ready() {
	local metadata
	# kcat waits out its timeout on a closed port: fail at once instead.
	(exec 3<>"/dev/tcp/127.0.0.1/$KAFKA_SASL_SSL_PORT") 2>/dev/null || return 1
	metadata=$(kcat -b "127.0.0.1:$KAFKA_SASL_SSL_PORT" -L -m 5 -X security.protocol=SASL_SSL -X sasl.mechanisms=PLAIN \
		-X sasl.username="$SECURE_USER" -X sasl.password="$SECURE_PASSWORD" -X ssl.ca.location="$CERTS_DIR/ca.pem" 2>/dev/null) || return 1
	[[ $metadata == *"127.0.0.1:$KAFKA_SASL_SSL_PORT"* ]]
}

kafka_cluster_id() { sed -n 's/^cluster\.id=//p' "$KAFKA_DATA/meta.properties" 2>/dev/null; }

# The SCRAM users, as `kafka-storage format --add-scram` and ConfigCommand take them.
KAFKA_SCRAM_MECHANISMS=(SCRAM-SHA-512 SCRAM-SHA-256)
kafka_scram_mark() { echo "$(kafka_cluster_id) $SECURE_USER:$SECURE_PASSWORD ${KAFKA_SCRAM_MECHANISMS[*]}"; }

# kafka_scram_users makes sure the SCRAM users exist in the running cluster. A storage formatted
# by this script has them from the start; one formatted before the SASL_SSL listener existed gets
# them here, once, through the PLAINTEXT listener. ConfigCommand sets a credential (repeated, it
# sets it again); the controller refuses two mechanisms of one user in one request, so each
# mechanism has a run of its own, side by side.
kafka_scram_users() {
	local mark mech pids=() pid
	mark=$(kafka_scram_mark)
	[[ -r $KAFKA_SCRAM_MARK && $(<"$KAFKA_SCRAM_MARK") == "$mark" ]] && return 0
	log "adding the SCRAM user $SECURE_USER (${KAFKA_SCRAM_MECHANISMS[*]}) to kafka"
	for mech in "${KAFKA_SCRAM_MECHANISMS[@]}"; do
		"$JAVA" -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Dlog4j2.configurationFile="$KAFKA_LOG4J" -cp "$KAFKA_LIBS/*" \
			org.apache.kafka.tools.ConfigCommand --bootstrap-server "127.0.0.1:$KAFKA_PORT" --alter --entity-type users \
			--entity-name "$SECURE_USER" --add-config "$mech=[password=$SECURE_PASSWORD]" >>"$KAFKA_DIR/scram.log" 2>&1 &
		pids+=($!)
	done
	for pid in "${pids[@]}"; do
		wait "$pid" || die "adding the SCRAM users failed; see $KAFKA_DIR/scram.log"
	done
	echo "$mark" >"$KAFKA_SCRAM_MARK"
}

kafka_write_config() {
	cat >"$KAFKA_PROPS" <<-EOF
		process.roles=broker,controller
		node.id=1
		controller.quorum.voters=1@127.0.0.1:$KAFKA_CONTROLLER_PORT
		listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT,CONTROLLER://127.0.0.1:$KAFKA_CONTROLLER_PORT,SASL_SSL://127.0.0.1:$KAFKA_SASL_SSL_PORT
		advertised.listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT,SASL_SSL://127.0.0.1:$KAFKA_SASL_SSL_PORT
		controller.listener.names=CONTROLLER
		inter.broker.listener.name=PLAINTEXT
		listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SASL_SSL:SASL_SSL
		# SASL_SSL, for clients only (brokers and controller talk PLAINTEXT). PLAIN users are the
		# user_<name> entries of the PLAIN line; SCRAM users live in the cluster metadata (kafka_scram_users).
		sasl.enabled.mechanisms=SCRAM-SHA-512,SCRAM-SHA-256,PLAIN
		listener.name.sasl_ssl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_$SECURE_USER="$SECURE_PASSWORD" user_$KAFKA_RESTRICTED_USER="$KAFKA_RESTRICTED_PASSWORD";
		# ACLs are enforced, but only where one exists: every principal but the restricted user is a super
		# user, and a resource without ACLs is open to all, so only what a test denies that user is denied.
		authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer
		allow.everyone.if.no.acl.found=true
		super.users=User:ANONYMOUS;User:$SECURE_USER
		listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
		listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
		listener.name.sasl_ssl.ssl.keystore.type=PKCS12
		listener.name.sasl_ssl.ssl.keystore.location=$CERTS_DIR/server.p12
		listener.name.sasl_ssl.ssl.keystore.password=$STORE_PASSWORD
		listener.name.sasl_ssl.ssl.key.password=$STORE_PASSWORD
		listener.name.sasl_ssl.ssl.truststore.type=PKCS12
		listener.name.sasl_ssl.ssl.truststore.location=$CERTS_DIR/truststore.p12
		listener.name.sasl_ssl.ssl.truststore.password=$STORE_PASSWORD
		# A client may present a certificate (it must then be the CA's); SASL still decides who it is.
		listener.name.sasl_ssl.ssl.client.auth=requested
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

# kafka_cluster_id_new prints a random cluster id as `StorageTool random-uuid` would (16 random
# bytes, unpadded base64url, not starting with "-") without the second of a JVM start.
kafka_cluster_id_new() {
	local id
	while id=$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | cut -c1-22); [[ $id == -* ]]; do :; done
	echo "$id"
}

# KAFKA_LEFTOVER_LIMIT is how many partition directories a stopped broker may keep before its
# storage is started afresh. The tests delete their topics when they end (e2e/testenv), but a run
# that was killed leaves its topics behind, and a broker that loads thousands of partitions takes
# minutes to start on a small machine. Every topic on this broker belongs to a test run that is
# over when the broker is down, so nothing of value is lost.
KAFKA_LEFTOVER_LIMIT=${CDCD_KAFKA_LEFTOVER_LIMIT:-1500}

kafka_drop_leftovers() {
	[[ -d $KAFKA_DATA ]] || return 0
	local dirs
	dirs=$(find "$KAFKA_DATA" -mindepth 1 -maxdepth 1 -type d | wc -l)
	((dirs > KAFKA_LEFTOVER_LIMIT)) || return 0
	log "kafka's storage holds $dirs partition directories left by earlier test runs (more than $KAFKA_LEFTOVER_LIMIT); starting from empty storage"
	rm -rf "$KAFKA_DATA"
}

kafka_start() {
	if service_running kafka "$KAFKA_LOG"; then
		certs_start
		kafka_sasl_ssl_ready || log "warning: kafka was started without the SASL_SSL listener on $KAFKA_SASL_SSL_PORT; restart it (stop kafka, start kafka) to get one"
		kafka_scram_users
		return 0
	fi
	kafka_install
	kafka_drop_leftovers
	mkdir -p "$KAFKA_DATA"
	kafka_write_config
	if [[ ! -s $KAFKA_DATA/meta.properties ]]; then
		local tool cluster_id scram=() mech
		tool=$(cat "$KAFKA_LIBS/.storage-tool-class")
		cluster_id=$(kafka_cluster_id_new)
		log "formatting Kafka storage $KAFKA_DATA ($tool, cluster $cluster_id)"
		for mech in "${KAFKA_SCRAM_MECHANISMS[@]}"; do
			scram+=(--add-scram "$mech=[name=$SECURE_USER,password=$SECURE_PASSWORD]")
		done
		"$JAVA" -Dlog4j2.configurationFile="$KAFKA_LOG4J" -cp "$KAFKA_LIBS/*" "$tool" format -t "$cluster_id" -c "$KAFKA_PROPS" \
			"${scram[@]}" >>"$KAFKA_DIR/format.log" 2>&1 || die "StorageTool format failed; see $KAFKA_DIR/format.log"
		kafka_scram_mark >"$KAFKA_SCRAM_MARK"
	fi
	# Only the broker reads the keystores, so formatting does not wait for them.
	certs_start
	log "starting kafka on 127.0.0.1:$KAFKA_PORT (controller $KAFKA_CONTROLLER_PORT, SASL_SSL $KAFKA_SASL_SSL_PORT)"
	spawn "$KAFKA_PID" "$KAFKA_OUT" "$JAVA" -Xmx1g -Xms256m -Dlog4j2.configurationFile="$KAFKA_LOG4J" \
		-cp "$KAFKA_LIBS/*" kafka.Kafka "$KAFKA_PROPS"
	wait_ready kafka kafka_pid kafka_ready "$KAFKA_LOG and $KAFKA_OUT"
	wait_ready kafka kafka_pid kafka_sasl_ssl_ready "$KAFKA_LOG and $KAFKA_OUT"
	kafka_scram_users
}

kafka_stop() { service_stop kafka TERM "$KAFKA_PID"; }
kafka_crash() { service_stop kafka KILL "$KAFKA_PID"; }

# ---------------------------------------------------------------------------------------------

service_status() {
	local svc=$1 pid
	if [[ $svc == tools ]]; then
		if command -v chromium >/dev/null && command -v promtool >/dev/null && command -v iptables >/dev/null; then printf '%-12s installed (chromium, promtool, iptables)\n' tools; else printf '%-12s none\n' tools; return 1; fi
		return 0
	fi
	if [[ $svc == mysql && -e $MYSQL_UNAVAILABLE ]]; then
		printf '%-12s NOT INSTALLED: %s\n' mysql "$(<"$MYSQL_UNAVAILABLE")"
		return 1
	fi
	if [[ $svc == certs ]]; then
		if certs_pid >/dev/null; then printf '%-12s made (%s)\n' certs "$CERTS_DIR"; else printf '%-12s none\n' certs; return 1; fi
		return 0
	fi
	if pid=$("${svc}_pid"); then
		printf '%-12s up   (pid %s%s)\n' "$svc" "$pid" "$(service_detail "$svc")"
	else
		printf '%-12s down\n' "$svc"
		return 1
	fi
}

# service_detail SVC prints what status adds to the pid of a running service.
service_detail() {
	case $1 in
	postgres) echo ", 127.0.0.1:$PG_PORT" ;;
	postgres_tls) echo ", 127.0.0.1:$PG_TLS_PORT, TLS only" ;;
	postgres1[3-8]) echo ", 127.0.0.1:$(pgv_port "${1#postgres}"), ${PGV_RELEASE[${1#postgres}]}" ;;
	mariadb) echo ", 127.0.0.1:$MARIADB_PORT" ;;
	mariadb_tls) echo ", 127.0.0.1:$MARIADB_TLS_PORT, TLS required" ;;
	mysql) echo ", 127.0.0.1:$MYSQL_PORT, $(mysql_client -N -e 'SELECT VERSION()' 2>/dev/null)" ;;
	kafka)
		if kafka_sasl_ssl_ready; then
			echo ", PLAINTEXT 127.0.0.1:$KAFKA_PORT, SASL_SSL 127.0.0.1:$KAFKA_SASL_SSL_PORT"
		else
			echo ", PLAINTEXT 127.0.0.1:$KAFKA_PORT, SASL_SSL 127.0.0.1:$KAFKA_SASL_SSL_PORT NOT answering: restart kafka"
		fi
		;;
	esac
}

usage() {
	echo "usage: $0 {install|start|stop|crash|status} {postgres|postgres13|postgres14|postgres16|postgres17|postgres18|postgres_tls|mariadb|mariadb_tls|mysql|kafka|certs|tools|all}" >&2
	exit 2
}

# start_parallel SVC... starts the services side by side (most of a start is waiting for a JVM
# or a server), after installing what they need one after the other (apt-get takes no company).
start_parallel() {
	local svcs=("$@") pids=() failed=() i
	for i in "${!svcs[@]}"; do "${svcs[i]}_install"; done
	for i in "${!svcs[@]}"; do
		"${svcs[i]}_start" &
		pids+=($!)
	done
	for i in "${!pids[@]}"; do
		wait "${pids[i]}" || failed+=("${svcs[i]}")
	done
	((${#failed[@]} == 0)) || die "failed to start: ${failed[*]}"
}

# TEST_BED_PORTS are the ports the test bed's servers listen on (this script's, e2e/pgversions.sh's
# 554MAJOR, 556MAJOR and 557MAJOR, e2e/registry.sh's and e2e/debezium/connect.sh's). They lie inside the
# kernel's ephemeral range, so a busy test run's outgoing connections could hold one as their local port
# when a server starts on demand (a standby pair, a restarted broker) and its bind fails "Address already in
# use"; reserve_ports takes them out of that range.
TEST_BED_PORTS=53300-53310,55400-55799,58000-58500,59090-59099

# reserve_ports adds TEST_BED_PORTS to net.ipv4.ip_local_reserved_ports (kept as they are where the kernel
# does not let this machine change it: a warning, not a failure).
reserve_ports() {
	local file=/proc/sys/net/ipv4/ip_local_reserved_ports current
	current=$(cat "$file" 2>/dev/null) || return 0
	[[ ,$current, == *",${TEST_BED_PORTS%%,*},"* ]] && return 0
	echo "${current:+$current,}$TEST_BED_PORTS" >"$file" 2>/dev/null ||
		log "warning: could not reserve the test bed's ports ($TEST_BED_PORTS) from the ephemeral range; a server started on demand may find its port taken"
}

main() {
	(($# == 2)) || usage
	local action=$1 target=${2//-/_} services svc rc=0
	case $target in
	postgres | postgres_tls | mariadb | mariadb_tls | mysql | kafka | certs | tools) services=("$target") ;;
	postgres13 | postgres14 | postgres16 | postgres17 | postgres18) services=("$target") ;;
	all) services=(certs tools postgres postgres13 postgres18 postgres_tls mariadb mariadb_tls mysql kafka) ;;
	*) usage ;;
	esac
	case $action in
	start)
		[[ $EUID -eq 0 ]] || die "run as root: services are set up with apt-get and started with runuser"
		reserve_ports
		if ((${#services[@]} > 1)); then start_parallel "${services[@]}"; else "${services[0]}_start"; fi
		;;
	install | stop | crash)
		[[ $EUID -eq 0 ]] || die "run as root: services are set up with apt-get and started with runuser"
		[[ $action != crash ]] || [[ $target =~ ^(postgres|mariadb|mysql|kafka)$ ]] || die "crash is for postgres, mariadb, mysql and kafka"
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
