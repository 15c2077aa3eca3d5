#!/usr/bin/env bash
# Builds the Go helpers under tests/ (franz-go based) with the machine's Go toolchain.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="$ROOT/.cache/bin"
mkdir -p "$OUT"
command -v go >/dev/null || { echo "go toolchain not found (the machine provides Go >= 1.22)"; exit 1; }
for d in "$ROOT"/tests/go/*/; do
  [ -f "$d/main.go" ] || continue
  name="$(basename "$d")"
  (cd "$ROOT/tests/go" && go build -o "$OUT/$name" "./$name")
done
