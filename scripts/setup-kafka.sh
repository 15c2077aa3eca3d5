#!/usr/bin/env bash
# Resolves Apache Kafka's broker and CLI tools (tests/kafka/pom.xml) from Maven Central into
# .cache/kafka/cp.txt, a classpath usable as `java -cp "$(cat cp.txt)" CLASS args`.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="$ROOT/.cache/kafka"
POM="$ROOT/tests/kafka/pom.xml"
mkdir -p "$OUT"
want="$(sha256sum "$POM" | cut -d' ' -f1)"
if [ -f "$OUT/cp.txt" ] && [ -f "$OUT/.pom.sha" ] && [ "$(cat "$OUT/.pom.sha")" = "$want" ]; then
  # verify every jar is still present
  ok=1; IFS=: read -ra jars < "$OUT/cp.txt" || true; for j in "${jars[@]}"; do [ -f "$j" ] || ok=0; done
  [ "$ok" = 1 ] && exit 0
fi
mvn -q -B -f "$POM" dependency:build-classpath -Dmdep.outputFile="$OUT/cp.txt" >/dev/null
echo "$want" > "$OUT/.pom.sha"
