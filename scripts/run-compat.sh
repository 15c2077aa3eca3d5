#!/usr/bin/env bash
# Byte-compatibility proof: samples from franz-go kmsg and Kafka 4.3.1's own schema classes,
# decoded and re-encoded by weir's generated codec (tests/compat/codec_compat_test.cpp).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${1:-build}"
OUT="$ROOT/.cache/vectors"
rm -rf "$OUT"
mkdir -p "$OUT"
"$ROOT/scripts/gen-vectors.sh" "$OUT"
cmake --build "$ROOT/$BUILD" --target codec_compat_test -j "$(nproc)" >/dev/null
WEIR_VECTORS_DIR="$OUT" "$ROOT/$BUILD/tests/compat/codec_compat_test"
