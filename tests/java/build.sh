#!/usr/bin/env bash
# Compiles the Java programs in tests/java (SchemaVectors.java, ConfigParity.java,
# AssignorVectors.java, HashVectors.java) against the Kafka 4.3.1 classpath
# (.cache/kafka/cp.txt, made by scripts/setup-kafka.sh) into .cache/java/. Does nothing for a class that is up to date.
# Run them:  java -cp "$(cat .cache/kafka/cp.txt):.cache/java" SchemaVectors --help
#            java -cp "$(cat .cache/kafka/cp.txt):.cache/java" ConfigParity defs
#            java -cp "$(cat .cache/kafka/cp.txt):.cache/java" AssignorVectors CASES OUT
#            java -cp "$(cat .cache/kafka/cp.txt):.cache/java" HashVectors CASES OUT
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
OUT="$ROOT/.cache/java"
CPFILE="$ROOT/.cache/kafka/cp.txt"
[ -f "$CPFILE" ] || { echo "build.sh: $CPFILE missing; run scripts/setup-kafka.sh first" >&2; exit 1; }
command -v javac >/dev/null || { echo "build.sh: javac not found (needs a JDK 17+)" >&2; exit 1; }
mkdir -p "$OUT"
for name in SchemaVectors ConfigParity AssignorVectors HashVectors; do
  SRC="$ROOT/tests/java/$name.java"
  if [ -f "$OUT/$name.class" ] && [ "$OUT/$name.class" -nt "$SRC" ] && [ "$OUT/$name.class" -nt "$CPFILE" ]; then
    continue
  fi
  javac -nowarn -encoding UTF-8 --release 17 -cp "$(cat "$CPFILE")" -d "$OUT" "$SRC"
done
