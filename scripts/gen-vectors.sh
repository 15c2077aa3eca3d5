#!/usr/bin/env bash
# Writes golden protocol vectors from two implementations that are independent of weir:
#   OUTDIR/kmsg.txt  franz-go's kmsg (tests/go/kmsgvectors)
#   OUTDIR/java.txt  Apache Kafka 4.3.1's schema machinery (tests/java/SchemaVectors.java),
#                    plus "data" lines for coordinator and KRaft metadata records
# Line format: `req|resp <api_key> <version> <hex body>` / `data <MessageName> <version> <hex>`;
# lines starting with '#' are comments.
#
# Every kmsg sample is also parsed by Kafka's generated message classes and must re-encode to the
# same bytes (Java samples are checked that way as they are made). Rejected kmsg lines are turned
# into comments and the script fails. A per-source coverage summary against the version ranges in
# protocol/schema/api/*Request.wsc goes to stderr.
#
# usage: scripts/gen-vectors.sh OUTDIR     env: VECTOR_SEED (default 1), VECTOR_SAMPLES (default 4)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
[ $# -eq 1 ] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
OUTDIR="$1"
SEED="${VECTOR_SEED:-1}"
SAMPLES="${VECTOR_SAMPLES:-4}"
mkdir -p "$OUTDIR"

"$ROOT/scripts/setup-kafka.sh"
"$ROOT/scripts/setup-go.sh"
"$ROOT/tests/java/build.sh"

JCP="$(cat "$ROOT/.cache/kafka/cp.txt"):$ROOT/.cache/java"
errlog="$(mktemp)"; expected="$(mktemp)"; trap 'rm -f "$errlog" "$expected"' EXIT
# Runs SchemaVectors; slf4j 1.x prints a three-line "no binding" notice on stderr, which is dropped.
schema_vectors() {
  local rc=0
  java -cp "$JCP" SchemaVectors "$@" 2>"$errlog" || rc=$?
  grep -v '^SLF4J: ' "$errlog" >&2 || true
  return "$rc"
}

"$ROOT/.cache/bin/kmsgvectors" --seed "$SEED" --samples "$SAMPLES" --out "$OUTDIR/kmsg.txt"
schema_vectors --seed "$SEED" --samples "$SAMPLES" --out "$OUTDIR/java.txt"

status=0
schema_vectors --check "$OUTDIR/kmsg.txt" --out "$OUTDIR/kmsg.checked" || status=$?
mv "$OUTDIR/kmsg.checked" "$OUTDIR/kmsg.txt"
if [ "$status" -ne 0 ]; then
  echo "gen-vectors: Kafka 4.3.1 rejected some kmsg samples (now commented out in $OUTDIR/kmsg.txt)" >&2
fi

# Coverage: which (kind, key, version) each file has, against the .wsc ranges for the same keys.
keys="$(awk '!/^#/ && ($1=="req"||$1=="resp") {print $2}' "$OUTDIR/java.txt" | sort -un | tr '\n' ' ')"
for f in "$ROOT"/protocol/schema/api/*Request.wsc; do
  [ -f "$f" ] || continue
  head -1 "$f" | awk -v keys=" $keys" '{
    key = ""; vers = ""
    for (i = 1; i <= NF; i++) { if ($i ~ /^key=/) key = substr($i, 5); if ($i ~ /^versions=/) vers = substr($i, 10) }
    if (key == "" || vers == "" || index(keys, " " key " ") == 0) next
    n = split(vers, r, "-"); lo = r[1]; hi = (n > 1 ? r[2] : r[1])
    for (v = lo; v <= hi; v++) { print "req", key, v; print "resp", key, v }
  }'
done | sort -u > "$expected"

for src in kmsg java; do
  file="$OUTDIR/$src.txt"
  awk -v src="$src" '
    !/^#/ && NF >= 3 { n[$1]++; c[$1" "$2" "$3]++ }
    END {
      combos = 0; for (k in c) combos++
      printf "%s: %d req, %d resp, %d data lines over %d (kind,key|record,version) combinations\n", src, n["req"], n["resp"], n["data"], combos > "/dev/stderr"
    }' "$file"
  if [ -s "$expected" ]; then
    have="$(awk '!/^#/ && ($1=="req"||$1=="resp") {print $1, $2, $3}' "$file" | sort -u)"
    missing="$(comm -23 "$expected" <(echo "$have") | tr '\n' ',' | sed 's/,$//; s/,/, /g')"
    extra="$(comm -13 "$expected" <(echo "$have") | tr '\n' ',' | sed 's/,$//; s/,/, /g')"
    echo "$src: coverage vs protocol/schema/api ranges: $(wc -l < "$expected") expected; missing: ${missing:-none}; beyond .wsc: ${extra:-none}" >&2
    if [ "$src" = java ] && [ -n "$missing$extra" ]; then status=1; fi
  fi
done
exit "$status"
