#!/usr/bin/env bash
# Runs Debezium's own DDL parsers over parser-input.jsonl and writes what they record: parser-cases.jsonl
# from the MariaDB connector (the 3.5.0.Final plugin e2e/debezium/connect.sh installs; 3.6.1 is not served
# for MariaDB) and parser-cases-mysql.jsonl from the MySQL connector 3.6.1.Final (the plugin archive
# connect.sh downloads). parser_cases_test.go compares Catalog.Apply with them. Never edit them by hand.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
e2e=${CDCD_E2E_DIR:-/var/tmp/cdcd-e2e}
mariadb=$e2e/debezium/plugins-mariadb/debezium-connector-mariadb
mysql_archive=$e2e/debezium/dl/debezium-connector-mysql-3.6.1.Final-plugin.tar.gz
lib=$e2e/debezium/lib
[ -d "$mariadb" ] || { echo "no Debezium MariaDB plugin at $mariadb: run e2e/debezium/connect.sh first" >&2; exit 1; }
[ -f "$mysql_archive" ] || { echo "no Debezium MySQL plugin archive at $mysql_archive" >&2; exit 1; }
jdk=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tar -xzf "$mysql_archive" -C "$work"
probe() { # flavour plugin-dir output
	mkdir -p "$work/$1"
	"$jdk/bin/javac" -nowarn -cp "$2/*:$lib/*" -d "$work/$1" "$here/DdlProbe.java"
	"$jdk/bin/java" -cp "$work/$1:$2/*:$lib/*" DdlProbe "$1" < "$here/parser-input.jsonl" 2>/dev/null > "$here/$3"
	echo "wrote $here/$3 ($(wc -l < "$here/$3") statements)"
}
probe mariadb "$mariadb" parser-cases.jsonl
probe mysql "$work/debezium-connector-mysql" parser-cases-mysql.jsonl
