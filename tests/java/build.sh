#!/usr/bin/env bash
# Compiles tests/java/SchemaVectors.java against the Kafka 4.3.1 classpath (.cache/kafka/cp.txt,
# made by scripts/setup-kafka.sh) into .cache/java/. Does nothing when the class is up to date.
# Run it:  java -cp "$(cat .cache/kafka/cp.txt):.cache/java" SchemaVectors --help
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
SRC="$ROOT/tests/java/SchemaVectors.java"
OUT="$ROOT/.cache/java"
CPFILE="$ROOT/.cache/kafka/cp.txt"
[ -f "$CPFILE" ] || { echo "build.sh: $CPFILE missing; run scripts/setup-kafka.sh first" >&2; exit 1; }
command -v javac >/dev/null || { echo "build.sh: javac not found (needs a JDK 17+)" >&2; exit 1; }
if [ -f "$OUT/SchemaVectors.class" ] && [ "$OUT/SchemaVectors.class" -nt "$SRC" ] && [ "$OUT/SchemaVectors.class" -nt "$CPFILE" ]; then
  exit 0
fi
mkdir -p "$OUT"
javac -nowarn -encoding UTF-8 --release 17 -cp "$(cat "$CPFILE")" -d "$OUT" "$SRC"
