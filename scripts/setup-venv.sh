#!/usr/bin/env bash
# Python venv with the pinned test clients (tests/requirements.txt) under .cache/venv.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
VENV="$ROOT/.cache/venv"
REQ="$ROOT/tests/requirements.txt"
STAMP="$VENV/.req.sha"
want="$(sha256sum "$REQ" | cut -d' ' -f1)"
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ]; then exit 0; fi
python3 -m venv "$VENV"
"$VENV/bin/pip" install -q --upgrade pip >/dev/null
"$VENV/bin/pip" install -q -r "$REQ"
echo "$want" > "$STAMP"
