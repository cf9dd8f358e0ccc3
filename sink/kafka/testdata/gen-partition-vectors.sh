#!/usr/bin/env bash
# Regenerates partition_vectors.txt from the real Java producer's partitioner.
# Needs a JDK and Maven; fetches kafka-clients into a temporary directory.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
version=${KAFKA_CLIENTS_VERSION:-4.4.0}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mvn -B -q org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy \
  -Dartifact="org.apache.kafka:kafka-clients:$version" -DoutputDirectory="$work/lib"
# Utils needs the slf4j API on the class path; without a binding slf4j prints a notice on stderr.
mvn -B -q org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy \
  -Dartifact=org.slf4j:slf4j-api:2.0.17 -DoutputDirectory="$work/lib"
javac -d "$work" -cp "$work/lib/*" "$here/GenPartitionVectors.java"
java -cp "$work:$work/lib/*" GenPartitionVectors "$version" >"$here/partition_vectors.txt"
