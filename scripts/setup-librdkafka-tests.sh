#!/usr/bin/env bash
# Fetches librdkafka's Debian source package (`apt-get source librdkafka`) into .cache/librdkafka and
# builds it together with its integration test runner (tests/test-runner, a.k.a. `merged`).
# Used by scripts/run-librdkafka-tests.sh. Idempotent: once built, a second run only checks.
#
#   scripts/setup-librdkafka-tests.sh          # prints the source tree path on its last line
#
# Environment: LIBRDKAFKA_JOBS (parallel compile jobs, default 2), LIBRDKAFKA_CACHE (default .cache/librdkafka).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CACHE="${LIBRDKAFKA_CACHE:-$ROOT/.cache/librdkafka}"
JOBS="${LIBRDKAFKA_JOBS:-2}"
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
log() { echo "setup-librdkafka-tests: $*" >&2; }

# --- 1. packages: dpkg-source (dpkg-dev) to unpack, a toolchain and the libraries librdkafka links.
# rapidjson-dev: tests that parse the statistics JSON (0053, 0098, 0101, 0110) are skipped without it.
LIB_PKGS=(zlib1g-dev libssl-dev libzstd-dev liblz4-dev libsasl2-dev rapidjson-dev)
PKGS=(dpkg-dev build-essential pkg-config python3 "${LIB_PKGS[@]}")
command -v ccache >/dev/null || PKGS+=(ccache)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
apt_updated=0
if ((${#missing[@]})); then
  log "installing ${missing[*]}"
  $SUDO apt-get update -qq
  apt_updated=1
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# --- 2. the source package. apt-get source needs a deb-src entry for the machine's own release.
stamp_src="$CACHE/.source-ok"
if [ ! -f "$stamp_src" ] || [ ! -d "$(cat "$stamp_src" 2>/dev/null)" ]; then
  # shellcheck disable=SC1091
  codename="$(. /etc/os-release && echo "${VERSION_CODENAME:-}")"
  [ -n "$codename" ] || { log "cannot tell the Debian release from /etc/os-release"; exit 1; }
  if ! apt-get source --print-uris librdkafka >/dev/null 2>&1; then
    srcfile=/etc/apt/sources.list.d/weir-deb-src.sources
    if [ ! -f "$srcfile" ]; then
      # The mirror the machine's own "deb" entry for $codename uses (deb822 or one-line format),
      # else Debian's redirector.
      mirror="$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk -v RS='' -v cn="$codename" '
        { types = uris = suites = ""
          n = split($0, line, "\n")
          for (i = 1; i <= n; i++) {
            if (line[i] ~ /^Types:/) types = line[i]
            if (line[i] ~ /^URIs:/) uris = line[i]
            if (line[i] ~ /^Suites:/) suites = line[i]
          }
          if (types ~ /[ \t]deb([ \t]|$)/ && (" " suites " ") ~ ("[ \t]" cn "[ \t]")) {
            split(uris, u, /[ \t]+/); print u[2]; exit } }')"
      [ -n "$mirror" ] || mirror="$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null \
        | sed -E 's/\[[^]]*\]//' | awk -v cn="$codename" '$1 == "deb" && $3 == cn { print $2; exit }')"
      [ -n "$mirror" ] || mirror=http://deb.debian.org/debian
      log "adding deb-src for $codename ($mirror) in $srcfile"
      keyring=/usr/share/keyrings/debian-archive-keyring.gpg
      {
        echo "# added by weir's scripts/setup-librdkafka-tests.sh (for apt-get source librdkafka)"
        echo "Types: deb-src"
        echo "URIs: $mirror"
        echo "Suites: $codename $codename-updates"
        echo "Components: main"
        [ -f "$keyring" ] && echo "Signed-By: $keyring"
      } | $SUDO tee "$srcfile" >/dev/null
    fi
    # Refresh only the deb-src index; keep every other list as it is.
    $SUDO apt-get update -qq -o Dir::Etc::SourceList="$srcfile" -o Dir::Etc::SourceParts=- \
      -o APT::Get::List-Cleanup=0 || { [ "$apt_updated" = 1 ] || $SUDO apt-get update -qq; }
    apt-get source --print-uris librdkafka >/dev/null 2>&1 || $SUDO apt-get update -qq
  fi
  mkdir -p "$CACHE/src"
  rm -rf "$CACHE/src.tmp" && mkdir -p "$CACHE/src.tmp"
  log "apt-get source librdkafka"
  (cd "$CACHE/src.tmp" && apt-get source -qq librdkafka >/dev/null 2>"$CACHE/src.tmp/apt-source.log") \
    || { cat "$CACHE/src.tmp/apt-source.log" >&2; exit 1; }
  dir="$(find "$CACHE/src.tmp" -mindepth 1 -maxdepth 1 -type d -name 'librdkafka-*' | head -1)"
  [ -n "$dir" ] && [ -f "$dir/tests/test.c" ] || { log "unexpected source layout in $CACHE/src.tmp"; exit 1; }
  name="$(basename "$dir")"
  rm -rf "${CACHE:?}/src/$name"
  mv "$dir" "$CACHE/src/$name"
  rm -rf "$CACHE/src.tmp"
  echo "$CACHE/src/$name" > "$stamp_src"
  rm -f "$CACHE/.build-ok"
fi
SRC="$(cat "$stamp_src")"

# --- 3. build librdkafka and the test runner (in the unpacked tree; mklove has no out-of-tree builds).
# No curl (OIDC) and no network downloads of dependencies: use the system's libraries.
CONFIGURE_ARGS=(--disable-curl --enable-ssl --enable-sasl --enable-zstd --enable-lz4-ext --disable-debug-symbols)
# The stamp records what was built: the tree, the configure arguments and the packages linked.
fingerprint="$SRC ${CONFIGURE_ARGS[*]} ${LIB_PKGS[*]}"
stamp_build="$CACHE/.build-ok"
if [ -f "$stamp_build" ] && [ -x "$SRC/tests/test-runner" ] && [ "$(cat "$stamp_build")" = "$fingerprint" ]; then
  echo "$SRC"
  exit 0
fi
# ccache (the default cache directory, as for weir's own build): paths relative to the tree, so
# another checkout's tree hits the same entries.
export CCACHE_BASEDIR="$SRC" CCACHE_NOHASHDIR=1
if command -v ccache >/dev/null; then
  export CC="ccache gcc" CXX="ccache g++"
fi
cd "$SRC"
if [ ! -f Makefile.config ] || [ ! -f "$stamp_build" ] || [ "$(cat "$stamp_build")" != "$fingerprint" ]; then
  log "configuring $(basename "$SRC")"
  rm -f "$stamp_build"
  ./configure "${CONFIGURE_ARGS[@]}" >"$CACHE/configure.log" 2>&1 \
    || { tail -40 "$CACHE/configure.log" >&2; exit 1; }
fi
log "building librdkafka with -j$JOBS (log: $CACHE/build.log)"
make -j"$JOBS" libs >"$CACHE/build.log" 2>&1 || { tail -40 "$CACHE/build.log" >&2; exit 1; }
log "building the test runner with -j$JOBS"
make -C tests -j"$JOBS" build >>"$CACHE/build.log" 2>&1 || { tail -40 "$CACHE/build.log" >&2; exit 1; }
[ -x tests/test-runner ] || { log "tests/test-runner was not built"; exit 1; }
echo "$fingerprint" > "$stamp_build"
echo "$SRC"
