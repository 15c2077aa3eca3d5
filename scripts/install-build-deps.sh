#!/usr/bin/env bash
# Installs what building weir needs, from Debian's packages. Idempotent: a second run only checks.
set -euo pipefail
PKGS=(build-essential cmake ninja-build ccache python3 pkg-config
      libboost1.81-dev libfmt-dev libspdlog-dev libcli11-dev
      zlib1g-dev libsnappy-dev liblz4-dev libzstd-dev libssl-dev
      libgtest-dev libgmock-dev libbenchmark-dev libre2-dev libxxhash-dev)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing build dependencies: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
