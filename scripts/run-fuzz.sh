#!/usr/bin/env bash
# Builds the libFuzzer targets with clang-19 under ASan/UBSan and runs each for a bounded time,
# starting from the corpus kept in tests/fuzz/corpus/<target>. New inputs go to a scratch copy;
# a crash leaves its input in .cache/fuzz-artifacts (add it to the corpus as a regression input).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${1:-build-fuzz}"
SECONDS_PER_TARGET="${2:-30}"
cd "$ROOT"
if [ ! -f "$BUILD/build.ninja" ]; then
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_COMPILER=clang++-19 -DWEIR_FUZZ=ON -DWEIR_TESTS=OFF >/dev/null
fi
cmake --build "$BUILD" -j "$(nproc)" >/dev/null
ART="$ROOT/.cache/fuzz-artifacts"
mkdir -p "$ART"
status=0
for target in request_fuzz connection_fuzz; do
  work="$(mktemp -d)"
  seeds="$ROOT/tests/fuzz/corpus/${target%_fuzz}"
  log="$ROOT/.cache/fuzz-$target.log"
  echo "fuzz: $target for ${SECONDS_PER_TARGET}s (seed corpus: $(ls "$seeds" | wc -l) inputs)"
  if ! ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      "$BUILD/tests/fuzz/$target" -max_total_time="$SECONDS_PER_TARGET" -rss_limit_mb=2048 -malloc_limit_mb=256 \
      -timeout=10 -print_final_stats=1 -artifact_prefix="$ART/" "$work" "$seeds" >"$log" 2>&1; then
    echo "fuzz: $target FAILED; see $log and $ART"
    tail -40 "$log"
    status=1
  fi
  execs="$(grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}')"
  echo "fuzz: $target ran ${execs:-?} executions"
  rm -rf "$work"
done
exit $status
