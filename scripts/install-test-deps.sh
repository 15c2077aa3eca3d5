#!/usr/bin/env bash
# Installs what the tests need: Debian packages (clang-19 for the fuzzer, kcat, librdkafka, groff
# to render weir's man pages), a Python venv with pinned clients, Apache Kafka from Maven Central,
# Go modules for the codec proof.
# Idempotent: repeated runs reuse what is installed.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PKGS=(clang-19 libclang-rt-19-dev clang-tidy-19 clang-format-19 kcat librdkafka-dev maven
      openjdk-17-jdk-headless python3-venv groff-base)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  # java and mvn may already come with the machine outside dpkg; only install what is truly absent
  filtered=()
  for p in "${missing[@]}"; do
    case "$p" in
      maven) command -v mvn >/dev/null || filtered+=("$p") ;;
      openjdk-17-jdk-headless) command -v javac >/dev/null || filtered+=("$p") ;;
      python3-venv) python3 -c 'import venv, ensurepip' 2>/dev/null || filtered+=("$p") ;;
      *) filtered+=("$p") ;;
    esac
  done
  if ((${#filtered[@]})); then
    echo "installing test dependencies: ${filtered[*]}"
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${filtered[@]}" >/dev/null
  fi
fi
"$ROOT/scripts/setup-venv.sh"
"$ROOT/scripts/setup-kafka.sh"
"$ROOT/scripts/setup-go.sh"
