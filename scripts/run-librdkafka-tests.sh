#!/usr/bin/env bash
# Runs librdkafka's own integration tests (tests/0xxx-*.c from `apt-get source librdkafka`, built by
# scripts/setup-librdkafka-tests.sh) against a fresh `weir serve`, one test-runner process per test
# number, and prints PASS/FAIL/SKIP/TIMEOUT per test. See tests/peer/librdkafka/README.md.
#
#   scripts/run-librdkafka-tests.sh --allowlist     # tests/peer/librdkafka/allowlist.txt; exit 1 if one fails
#   scripts/run-librdkafka-tests.sh --smoke         # the allowlist entries tagged [smoke] (for `make test`)
#   scripts/run-librdkafka-tests.sh --all           # every test; report only (exit 0); results under .cache/
#   scripts/run-librdkafka-tests.sh 0001 0031 ...   # these tests (TESTS="0001 0031" works too); exit 1 if one fails
#
# Options: --timeout SECONDS (per test, default $LIBRDKAFKA_TEST_TIMEOUT or 300), --keep (keep the run
# directory with weir's data even when everything passed), -v (print each test's output after it ran),
# --kafka (run against a real Apache Kafka 4.3.1 from tests/kafka instead of weir, to tell weir's bugs
# from the suite's own expectations; --all then writes results-all-kafka.tsv), --cluster weir|kafka
# (a 3-broker cluster under one Kafka 4.3.1 KRaft controller, started by scripts/librdkafka-cluster.py:
# without test numbers it runs the tests that need replication factor 3, 0098 0101 0103 0107 0111;
# --allowlist and --smoke then read tests/peer/librdkafka/allowlist-cluster.txt).
# Environment: WEIR_BIN (default build/weir), TEST_KAFKA_VERSION (default 4.1.0), TEST_LEVEL, TEST_DEBUG.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PEER="$ROOT/tests/peer/librdkafka"
ALLOWLIST="$PEER/allowlist.txt"
CACHE="${LIBRDKAFKA_CACHE:-$ROOT/.cache/librdkafka}"
WEIR_BIN="${WEIR_BIN:-$ROOT/build/weir}"
TIMEOUT="${LIBRDKAFKA_TEST_TIMEOUT:-300}"
export TEST_KAFKA_VERSION="${TEST_KAFKA_VERSION:-4.1.0}"

# The tests that need a 3-broker cluster (replication factor 3): what --cluster runs by default.
CLUSTER_TESTS=(0098 0101 0103 0107 0111)
mode=list; keep=0; verbose=0; tests=(); BROKER=weir; CLUSTER=0
while (($#)); do
  case "$1" in
    --allowlist) mode=allowlist ;;
    --smoke) mode=smoke ;;
    --all) mode=all ;;
    --timeout) TIMEOUT="$2"; shift ;;
    --timeout=*) TIMEOUT="${1#*=}" ;;
    --keep) keep=1 ;;
    --kafka) BROKER=kafka ;;
    --cluster) CLUSTER=1; BROKER="${2:-}"; shift ;;
    --cluster=*) CLUSTER=1; BROKER="${1#*=}" ;;
    -v) verbose=1 ;;
    -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    [0-9][0-9][0-9][0-9]) tests+=("$1") ;;
    *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
case "$BROKER" in weir|kafka) ;; *) echo "--cluster takes weir or kafka, not '$BROKER'" >&2; exit 2 ;; esac
if ((CLUSTER)); then
  ALLOWLIST="$PEER/allowlist-cluster.txt"
  PYTHON="${PYTHON:-$ROOT/.cache/venv/bin/python}"
  [ -x "$PYTHON" ] || { echo "--cluster needs the test venv ($PYTHON, made by \`make test\`'s set-up) or PYTHON" >&2; exit 2; }
fi

# ------------------------------------------------------------------ the test runner and the test list
SRC="$("$ROOT/scripts/setup-librdkafka-tests.sh" | tail -1)"
T="$SRC/tests"
[ "$BROKER" != weir ] || [ -x "$WEIR_BIN" ] || { echo "weir binary $WEIR_BIN is missing: run \`make build\` (or set WEIR_BIN)" >&2; exit 2; }

# Allowlist lines: "NNNN  # [smoke] comment"; blank lines and "#" lines are ignored.
list_file() { sed -e 's/#.*\[smoke\].*/ SMOKE/' "$1" | awk -v want="$2" \
  '/^[ \t]*[0-9][0-9][0-9][0-9]/ { if (want == "" || $2 == want) print $1 }'; }
allowed=(); [ -f "$ALLOWLIST" ] && mapfile -t allowed < <(list_file "$ALLOWLIST" "")
case "$mode" in
  allowlist) tests=("${allowed[@]}") ;;
  smoke) mapfile -t tests < <(list_file "$ALLOWLIST" SMOKE) ;;
  all) # every test number in the runner's table below 1000 (1xxx need special set-ups, 8xxx are manual)
    mapfile -t tests < <(sed -n '/^struct test tests\[\]/,/^};/p' "$T/test.c" \
      | grep -oE '^\s*_TEST\(0[0-9]{3}_' | grep -oE '[0-9]{4}' | sort -u) ;;
  list) if ((${#tests[@]} == 0)) && [ -n "${TESTS:-}" ]; then read -ra tests <<< "${TESTS//,/ }"; fi
        if ((${#tests[@]} == 0 && CLUSTER)); then tests=("${CLUSTER_TESTS[@]}"); fi ;;
esac
((${#tests[@]})) || { echo "no tests selected (see --help)" >&2; exit 2; }
is_allowed() { local a; for a in "${allowed[@]}"; do [ "$a" = "$1" ] && return 0; done; return 1; }
# Numbers that have a variant for the "noautocreate" scenario (a broker without topic auto-creation).
mapfile -t noauto < <(awk '/_TEST\(0[0-9][0-9][0-9]_/ { match($0, /0[0-9][0-9][0-9]/); n = substr($0, RSTART, 4) }
                          /scenario = "noautocreate"/ { print n }' "$T/test.c" | sort -u)
has_noauto() { local a; for a in "${noauto[@]}"; do [ "$a" = "$1" ] && return 0; done; return 1; }

# Some tests run Kafka's CLI as $KAFKA_PATH/bin/kafka-topics.sh --bootstrap-server $BROKERS: give them
# Apache Kafka's tools (tests/kafka/bin, resolved by scripts/setup-kafka.sh) under those names.
KAFKA_SHIM=""
setup_kafka_shim() {
  command -v java >/dev/null && command -v mvn >/dev/null || return 0
  "$ROOT/scripts/setup-kafka.sh" || { echo "note: scripts/setup-kafka.sh failed; tests that run kafka-topics.sh will fail" >&2; return 0; }
  KAFKA_SHIM="$RUN/kafka"; mkdir -p "$KAFKA_SHIM/bin"
  local tool
  for tool in "$ROOT"/tests/kafka/bin/kafka-*; do
    ln -s "$tool" "$KAFKA_SHIM/bin/$(basename "$tool").sh"
  done
  # tests/kafka/bin has no kafka-acls wrapper (0109, 0115, 0119 call it): its class from the same jars
  printf '#!/usr/bin/env bash\nexec %q org.apache.kafka.tools.AclCommand "$@"\n' \
    "$ROOT/tests/kafka/bin/kafka-run-class" > "$KAFKA_SHIM/bin/kafka-acls.sh"
  chmod +x "$KAFKA_SHIM/bin/kafka-acls.sh"
  # The runner's Java helpers (tests/java, 0098's TransactionProducerCli) are compiled against
  # $KAFKA_PATH/libs/kafka-clients-*.jar and run by java/run-class.sh as
  # CLASSPATH=tests/java $KAFKA_PATH/bin/kafka-run-class.sh CLASS: give them the client jar of the
  # resolved classpath and a kafka-run-class.sh that puts $CLASSPATH in front of Kafka's.
  local cpf="$ROOT/.cache/kafka/cp.txt" jar
  jar="$(tr ':' '\n' < "$cpf" | grep -m1 '/kafka-clients-[0-9.]*\.jar$' || true)"
  if [ -n "$jar" ]; then mkdir -p "$KAFKA_SHIM/libs"; ln -s "$jar" "$KAFKA_SHIM/libs/$(basename "$jar")"; fi
  printf '%s:%s' "$T/java" "$(cat "$cpf")" > "$KAFKA_SHIM/cp-java.txt"
  rm -f "$KAFKA_SHIM/bin/kafka-run-class.sh"
  printf '#!/usr/bin/env bash\n[ -n "${CLASSPATH:-}" ] && export WEIR_KAFKA_CP=%q\nexec %q "$@"\n' \
    "$KAFKA_SHIM/cp-java.txt" "$ROOT/tests/kafka/bin/kafka-run-class" > "$KAFKA_SHIM/bin/kafka-run-class.sh"
  chmod +x "$KAFKA_SHIM/bin/kafka-run-class.sh"
}

# ------------------------------------------------------------------------------------- brokers
mkdir -p "$CACHE"
exec 9>"$CACHE/run.lock"
flock -n 9 || { echo "another librdkafka peer run holds $CACHE/run.lock; waiting" >&2; flock 9; }
RUN="$(mktemp -d "$CACHE/run.XXXXXX")"
mkdir -p "$RUN/logs"
rm -f "$T"/stats_*.json  # the runner leaves one (empty unless asked for) per test in its directory
setup_kafka_shim
if [ "$BROKER" = kafka ] && [ -z "$KAFKA_SHIM" ]; then echo "--kafka needs java, mvn and scripts/setup-kafka.sh" >&2; exit 2; fi
if ((CLUSTER)) && [ -z "$KAFKA_SHIM" ]; then echo "--cluster needs java, mvn and scripts/setup-kafka.sh (its controller is Kafka's)" >&2; exit 2; fi
# One broker per scenario: "default" (auto-creates topics with 4 partitions), for the tests that
# have a variant for it "noautocreate" (auto.create.topics.enable=false), and "nodelay" for the
# tests in NO_DELAY_TESTS.
declare -A BPID BPORT BGEN BBOOT
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# The brokers keep Kafka's default group.initial.rebalance.delay.ms (3 s), as the upstream suite's
# clusters do: tests that start several consumers at once count on them all landing in the group's
# first generation (with 0 the first to join gets a generation of its own and the next one's arrival
# revokes it: 0118, 0102 and 0113's l_unsubscribe and n_wildcard then fail now and then).
# 0018 instead fits its 23 s budget only without the wait, so it gets a broker with 0.
NO_DELAY_TESTS=(0018)
needs_no_delay() { local a; for a in "${NO_DELAY_TESTS[@]}"; do [ "$a" = "$1" ] && return 0; done; return 1; }
scenario_settings() {  # settings for both weir and Kafka (Kafka gets TESTING.md's KRaft ones too)
  echo num.partitions=4
  [ "$1" = nodelay ] && echo group.initial.rebalance.delay.ms=0
  [ "$1" = noautocreate ] && echo auto.create.topics.enable=false
  return 0
}
if ((CLUSTER)); then
  broker_dir() { echo "$RUN/cluster-$BROKER-$1-${BGEN[$1]}"; }
  broker_log() { echo "$(broker_dir "$1")/launcher.log"; }  # the nodes' own logs: $(broker_dir)/c/*/
else
  broker_dir() { echo "$RUN/$BROKER-$1-${BGEN[$1]}"; }
  broker_log() { echo "$(broker_dir "$1")/$BROKER.log"; }
fi

# start_cluster SCENARIO: one Kafka controller and 3 brokers of kind $BROKER (scripts/librdkafka-cluster.py);
# waits until every broker is registered and unfenced. BPID is the launcher's pid: it exits (status 3)
# when a node exits by itself, and stops the whole cluster on SIGTERM.
start_cluster() {
  local name="$1"
  BGEN[$name]=$(( ${BGEN[$name]:-0} + 1 ))
  local dir; dir="$(broker_dir "$name")"; mkdir -p "$dir"
  local log; log="$(broker_log "$name")"
  "$PYTHON" "$ROOT/scripts/librdkafka-cluster.py" --kind "$BROKER" --scenario "$name" --dir "$dir/c" \
    --ready-file "$dir/bootstrap" >"$log" 2>&1 &
  BPID[$name]=$!
  local i
  for i in $(seq 1 3000); do
    kill -0 "${BPID[$name]}" 2>/dev/null || { echo "cluster ($name) exited at start-up:" >&2; tail -30 "$log" >&2; return 1; }
    if [ -s "$dir/bootstrap" ]; then
      BBOOT[$name]="$(cat "$dir/bootstrap")"
      echo "     $(head -1 "$log")"
      return 0
    fi
    sleep 0.1
  done
  echo "cluster ($name) was not ready within 300 s" >&2; return 1
}

# start_broker SCENARIO: a fresh broker with its own data dir; waits until it serves
start_broker() {
  if ((CLUSTER)); then start_cluster "$1"; return; fi
  local name="$1" port; port="${BPORT[$name]:-$(free_port)}"
  BGEN[$name]=$(( ${BGEN[$name]:-0} + 1 )); BPORT[$name]=$port; BBOOT[$name]="127.0.0.1:$port"
  local dir; dir="$(broker_dir "$name")"; mkdir -p "$dir/data"
  local log; log="$(broker_log "$name")"
  local -a settings; mapfile -t settings < <(scenario_settings "$name")
  if [ "$BROKER" = weir ]; then
    local -a sets=(); local kv
    for kv in "${settings[@]}"; do sets+=(--set "$kv"); done
    "$WEIR_BIN" serve --dev \
      --set "listeners=PLAINTEXT://127.0.0.1:$port" --set "advertised.listeners=PLAINTEXT://127.0.0.1:$port" \
      --set "log.dirs=$dir/data" "${sets[@]}" >"$log" 2>&1 &
  else  # a single-node KRaft Apache Kafka from tests/kafka (the oracle), configured as TESTING.md says
    local cport; cport="$(free_port)"
    { printf '%s\n' process.roles=broker,controller node.id=1 "controller.quorum.voters=1@127.0.0.1:$cport" \
        "listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$cport" \
        "advertised.listeners=PLAINTEXT://127.0.0.1:$port" controller.listener.names=CONTROLLER \
        inter.broker.listener.name=PLAINTEXT listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT \
        "log.dirs=$dir/data" offsets.topic.replication.factor=1 transaction.state.log.replication.factor=1 \
        transaction.state.log.min.isr=1 share.coordinator.state.topic.replication.factor=1 \
        share.coordinator.state.topic.min.isr=1 "${settings[@]}"
    } > "$dir/server.properties"
    local id; id="$(python3 -c 'import base64, uuid
while True:
    t = base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()
    if not t.startswith("-"): print(t); break')"
    "$ROOT/tests/kafka/bin/kafka-storage" format -t "$id" -c "$dir/server.properties" >"$log" 2>&1 \
      || { echo "kafka-storage format failed:" >&2; tail -20 "$log" >&2; return 1; }
    KAFKA_HEAP_OPTS="-Xmx1G -Xms1G" "$ROOT/tests/kafka/bin/kafka-server-start" "$dir/server.properties" >>"$log" 2>&1 &
  fi
  BPID[$name]=$!
  local i
  for i in $(seq 1 1800); do
    kill -0 "${BPID[$name]}" 2>/dev/null || { echo "$BROKER ($name) exited at start-up:" >&2; tail -20 "$log" >&2; return 1; }
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      [ "$BROKER" = weir ] && return 0
      grep -q "Kafka Server started" "$log" && return 0
    fi
    sleep 0.1
  done
  echo "$BROKER ($name) did not start on port $port within 180 s" >&2; return 1
}
ensure_broker() {  # starts (or restarts after a crash) the broker for a scenario
  if [ -z "${BPID[$1]:-}" ] || ! kill -0 "${BPID[$1]}" 2>/dev/null; then
    if ((CLUSTER)); then stop_brokers; fi  # one cluster at a time: another scenario's goes first
    start_broker "$1"
  fi
}
stop_brokers() {
  local name grace=300  # tenths of a second
  ((CLUSTER)) && grace=3000  # a cluster stops its brokers one by one, then the controller
  for name in "${!BPID[@]}"; do
    if kill -0 "${BPID[$name]}" 2>/dev/null; then
      kill -TERM "${BPID[$name]}" 2>/dev/null || true
      for _ in $(seq 1 "$grace"); do kill -0 "${BPID[$name]}" 2>/dev/null || break; sleep 0.1; done
      kill -KILL "${BPID[$name]}" 2>/dev/null || true
    fi
    wait "${BPID[$name]}" 2>/dev/null || true
    unset "BPID[$name]"
  done
}
trap 'stop_brokers' EXIT
trap 'exit 130' INT TERM

write_conf() {  # write_conf BOOTSTRAP: the runner's tests/test.conf
  cat > "$T/test.conf" <<EOF
# written by weir's scripts/run-librdkafka-tests.sh for its current run; overwritten by the next one
bootstrap.servers=$1
test.topic.prefix=rdkafkatest
EOF
  # as trivup's test.conf (LibrdkafkaTestApp.py): the cluster's brokers listen on IPv4 loopback
  if ((CLUSTER)); then echo broker.address.family=v4 >> "$T/test.conf"; fi
}

# ------------------------------------------------------------------------------------- one test
strip_ansi() { sed -e 's/\x1b\[[0-9;]*m//g'; }
# run_variant NUM SCENARIO -> sets v_status (PASS/FAIL/SKIP/TIMEOUT/CRASH) and v_detail
run_variant() {
  local num="$1" scen="$2" log="$RUN/logs/$1-$2.log" rc=0
  ensure_broker "$scen"
  write_conf "${BBOOT[$scen]}"
  local args=(-L -p1); [ "$scen" = noautocreate ] && args+=(-s "$scen")  # librdkafka's scenario name
  local t_start; t_start=$(date +%s)
  # No `exec`: the subshell reports a runner killed by a signal into the log, not on our terminal.
  (
    cd "$T"
    export LD_LIBRARY_PATH="$SRC/src:$SRC/src-cpp${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    export TESTS="$num"
    if [ -n "$KAFKA_SHIM" ]; then export KAFKA_PATH="$KAFKA_SHIM" BROKERS="${BBOOT[$scen]}"; fi
    unset CI
    timeout -k 10 "$TIMEOUT" ./test-runner "${args[@]}"; status=$?; exit "$status"
  ) >"$log" 2>&1 || rc=$?
  local t_spent=$(( $(date +%s) - t_start ))
  if ((verbose)); then strip_ansi < "$log"; fi
  local summary; summary="$(strip_ansi < "$log" | grep -E "^\|\s*${num}_[A-Za-z0-9_]+\s+\|\s+[A-Z_]+\s+\|" || true)"
  local passed failed skipped
  passed="$(grep -cE '\|\s+PASSED\s+\|' <<< "$summary" || true)"
  failed="$(grep -E '\|\s+(FAILED|RUNNING)\s+\|' <<< "$summary" || true)"
  skipped="$(grep -E '\|\s+SKIPPED\s+\|' <<< "$summary" || true)"
  if ! kill -0 "${BPID[$scen]}" 2>/dev/null; then
    local wrc=0; wait "${BPID[$scen]}" 2>/dev/null || wrc=$?
    if ((CLUSTER)); then
      v_status=CRASH
      v_detail="a cluster node exited during the test (launcher status $wrc): $(grep -m1 '^CRASH' "$(broker_log "$scen")" || true) launcher log: $(broker_log "$scen")"
    else
      v_status=CRASH; v_detail="$BROKER exited (status $wrc) during the test; its log: $(broker_log "$scen")"
    fi
    keep=1
  elif { [ "$rc" = 124 ] || [ "$rc" = 137 ]; } && ((t_spent >= TIMEOUT)); then
    v_status=TIMEOUT; v_detail="killed after ${TIMEOUT}s (per-test timeout)"
  elif [ "$rc" != 0 ] || [ -n "$failed" ]; then
    v_status=FAIL
    # The first failure: '### Test "NAME (subtest)" failed at FILE:LINE:FUNC() at DATE: ###' + message
    v_detail="$(strip_ansi < "$log" | awk '
      /^### Test ".*" failed at / && !done {
        where = $0; sub(/^### Test "/, "", where); sub(/ at [A-Z][a-z][a-z] [A-Z][a-z][a-z] .*$/, "", where)
        sub(/" failed at /, " @ ", where); getline msg; print where ": " msg; done = 1 }')"
    [ -n "$v_detail" ] || v_detail="test-runner exit status $rc"
  elif ((passed > 0)); then
    v_status=PASS; v_detail=""
  else
    v_status=SKIP
    v_detail="$(sed -E 's/^\|\s*([^ ]+)\s+\|\s+[A-Z]+\s+\|\s+[0-9.]+s\s*\|\s*//' <<< "$skipped" | sort -u | paste -sd ';' -)"
    v_detail="${v_detail//Filtered due to negative test flags/local-only or known-issue test (not run by -L\/-K)}"
  fi
  v_detail="$(tr -s '\t\n' '  ' <<< "$v_detail")"
}

# The scenarios a test runs in: "default" (or "nodelay"), then "noautocreate" if it has that variant.
test_scenarios() {
  if needs_no_delay "$1"; then echo nodelay; else echo default; fi
  if has_noauto "$1"; then echo noautocreate; fi
  return 0
}
# run_scenario NUM SCENARIO: runs one variant and folds it into RES/DETAIL/SECS[NUM]
declare -A RES DETAIL SECS
run_scenario() {
  local num="$1" scen="$2" start; start=$(date +%s)
  local status="${RES[$num]:-SKIP}" detail="${DETAIL[$num]:-}"
  run_variant "$num" "$scen"
  case "$v_status" in
    PASS) [ "$status" = SKIP ] && { status=PASS; detail=""; } ;;
    SKIP) [ "$status" = SKIP ] && [ -z "$detail" ] && detail="$v_detail" ;;
    *) if [ "$status" = PASS ] || [ "$status" = SKIP ]; then status="$v_status"; detail="$v_detail"
       else detail="$detail; $v_detail"; fi ;;
  esac
  [ "$scen" = noautocreate ] && [ "$v_status" != SKIP ] && detail="${detail:+$detail }[$scen scenario: $v_status]"
  RES[$num]=$status; DETAIL[$num]=$detail; SECS[$num]=$(( ${SECS[$num]:-0} + $(date +%s) - start ))
}
report_test() {  # report_test NUM: its line
  local num="$1" status="${RES[$1]}" detail="${DETAIL[$1]}"
  local tag=""; [ "$mode" != allowlist ] && [ "$mode" != smoke ] && is_allowed "$num" && tag=" (allowlisted)"
  printf '%-4s %-7s %4ss%s %s\n' "$num" "$status" "${SECS[$num]}" "$tag" "${detail:+ $detail}"
}
# run_test NUM -> prints one line, records status in RES[NUM]
run_test() {
  local scen
  for scen in $(test_scenarios "$1"); do run_scenario "$1" "$scen"; done
  report_test "$1"
}

kafka_version="$(grep -o 'kafka_2.13-[0-9.]*' "$ROOT/.cache/kafka/cp.txt" 2>/dev/null | head -1 | sed 's/kafka_2.13-//;s/\.$//')"
if [ "$BROKER" = weir ]; then
  target="$WEIR_BIN (built $(date -r "$WEIR_BIN" '+%F %T'))"
else
  target="Apache Kafka $kafka_version"
fi
((CLUSTER)) && target="3 brokers ($target) under one Apache Kafka $kafka_version KRaft controller"
echo "librdkafka $(basename "$SRC") tests against $target (TEST_KAFKA_VERSION=$TEST_KAFKA_VERSION," \
     "timeout ${TIMEOUT}s per test, ${#tests[@]} tests, logs in $RUN/logs)"
t0=$(date +%s)
if ((CLUSTER)); then
  # One cluster at a time and as few starts as possible: every test's default (or nodelay) variant
  # on that scenario's cluster, then the noautocreate variants on a cluster without auto-creation.
  for scen in default nodelay noautocreate; do
    for num in "${tests[@]}"; do
      if test_scenarios "$num" | grep -qx "$scen"; then
        run_scenario "$num" "$scen"
        printf '  %-4s [%s] %-7s %s\n' "$num" "$scen" "$v_status" "$v_detail"
      fi
    done
  done
  for num in "${tests[@]}"; do report_test "$num"; done
else
  for num in "${tests[@]}"; do run_test "$num"; done
fi
elapsed=$(( $(date +%s) - t0 ))

# -------------------------------------------------------------------------------------- summary
count() { local s="$1" n=0 k; for k in "${tests[@]}"; do [ "${RES[$k]}" = "$s" ] && n=$((n + 1)); done; echo $n; }
echo "summary: $(count PASS) passed, $(count FAIL) failed, $(count TIMEOUT) timed out, $(count CRASH) crashed $BROKER," \
     "$(count SKIP) skipped, in ${elapsed}s"
bad=()
for k in "${tests[@]}"; do
  case "${RES[$k]}" in PASS|SKIP) ;; *) bad+=("$k") ;; esac
done
regress=()
case "$mode" in
  allowlist|smoke) regress=("${bad[@]}")
    for k in "${tests[@]}"; do [ "${RES[$k]}" = SKIP ] && regress+=("$k"); done ;;  # allowlisted = must pass
  list) regress=("${bad[@]}") ;;
esac
if [ "$mode" = all ]; then
  suffix=""; [ "$BROKER" = kafka ] && suffix="-kafka"
  ((CLUSTER)) && suffix="-cluster-$BROKER"
  out="$CACHE/results-all$suffix.tsv"
  { echo "# $(date '+%F %T') librdkafka $(basename "$SRC") against $target"
    printf 'test\tstatus\tseconds\tallowlisted\tdetail\n'
    for k in "${tests[@]}"; do
      a=no; is_allowed "$k" && a=yes
      printf '%s\t%s\t%s\t%s\t%s\n' "$k" "${RES[$k]}" "${SECS[$k]}" "$a" "${DETAIL[$k]}"
    done; } > "$out"
  newpass=(); for k in "${tests[@]}"; do [ "${RES[$k]}" = PASS ] && ! is_allowed "$k" && newpass+=("$k"); done
  lost=(); for k in "${allowed[@]}"; do [ "${RES[$k]:-}" = PASS ] || lost+=("$k"); done
  rm -rf "$CACHE/results-all$suffix-logs"; cp -r "$RUN/logs" "$CACHE/results-all$suffix-logs"
  for f in "$RUN"/"$BROKER"-*/"$BROKER".log; do
    [ -f "$f" ] && cp "$f" "$CACHE/results-all$suffix-logs/broker-$(basename "$(dirname "$f")").log"
  done
  for f in "$RUN"/cluster-*/c/*/*.log; do
    [ -f "$f" ] && cp "$f" "$CACHE/results-all$suffix-logs/$(basename "$(dirname "$(dirname "$(dirname "$f")")")")-$(basename "$(dirname "$f")").log"
  done
  echo "results: $out (test logs: $CACHE/results-all$suffix-logs)"
  if [ "$BROKER" = weir ] && ((${#newpass[@]})); then
    echo "passing but not allowlisted (add them to $ALLOWLIST): ${newpass[*]}"
  fi
  if [ "$BROKER" = weir ] && ((${#lost[@]})); then echo "allowlisted but not passing: ${lost[*]}"; fi
fi
if ((${#regress[@]})); then
  echo "FAILED: ${regress[*]} (logs: $RUN/logs)"
  exit 1
fi
stop_brokers
((keep)) || rm -rf "$RUN"
exit 0
