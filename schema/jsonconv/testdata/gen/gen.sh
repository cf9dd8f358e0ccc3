#!/usr/bin/env bash
# Regenerates the test vectors of schema/jsonconv, schema/javacompat and schema from the real JDK, Kafka
# Connect's real JsonConverter and Debezium itself. A one-off: tests read the committed output and never run this.
# Needs JDK 19+ (JAVA_HOME, default Temurin 25) and Maven.
set -euo pipefail
cd "$(dirname "$0")"
JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# fetch_libs DIR GROUP:ARTIFACT:VERSION... copies the artifacts and their dependencies into DIR.
fetch_libs() {
  local dir=$1; shift
  mkdir -p "$dir"
  {
    echo '<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>'
    echo '<groupId>cdcd</groupId><artifactId>golden</artifactId><version>1</version><dependencies>'
    for gav in "$@"; do
      IFS=: read -r g a v <<<"$gav"
      echo "<dependency><groupId>$g</groupId><artifactId>$a</artifactId><version>$v</version></dependency>"
    done
    echo '</dependencies></project>'
  } >"$dir/pom.xml"
  mvn -q -f "$dir/pom.xml" dependency:copy-dependencies -DoutputDirectory="$dir/lib"
}

fetch_libs "$work/connect" org.apache.kafka:connect-json:4.4.0
fetch_libs "$work/debezium" io.debezium:debezium-connector-postgres:3.6.1.Final org.apache.kafka:connect-json:4.4.0

compat=../../../javacompat/testdata
"$JAVA_HOME/bin/java" "$compat/java/FloatVectors.java" "$compat/doubles.txt" "$compat/floats.txt"
"$JAVA_HOME/bin/java" -cp "$work/connect/lib/*" ConverterGolden.java ../converter_golden.tsv 2>/dev/null
"$JAVA_HOME/bin/java" -cp "$work/debezium/lib/*" DebeziumGolden.java ../debezium_golden.tsv ../../../testdata/debezium_names.tsv 2>/dev/null
