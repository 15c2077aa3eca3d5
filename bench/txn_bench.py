"""Transactional produce throughput and commit latency, weir against Apache Kafka (issue 14).

For each broker (weir, then a single-node KRaft Kafka 4.3.1 from the scenario harness), one
transactional confluent-kafka (librdkafka) producer writes 1 KiB records to a 1-partition topic in
transactions of 1, 10 and 1000 records; per size it reports records/s over the run and the
commit_transaction() latency p50/p99. The Java producer runs kafka-producer-perf-test with a
transactional id, committing every --transaction-duration-ms (100 ms), and reports its records/s.
Durability as the main benchmark's fast phase: weir `--dev`, Kafka defaults (neither fsyncs
before answering). Medians over N repetitions; ratios weir / Kafka. Not part of `make bench` or
`make test`; the machine is shared, so quote the medians and read small differences as noise.

    .cache/venv/bin/python bench/txn_bench.py [-n 3] [--seconds 8] [--weir-only]
"""
from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "scenario"))

from confluent_kafka import Producer  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

from harness import procs, run_tool  # noqa: E402
from harness.kafka import KafkaBroker  # noqa: E402
from harness.weir import WeirBroker  # noqa: E402

SIZES = (1, 10, 1000)
VALUE = b"x" * 1024


def librdkafka_run(broker, topic: str, size: int, seconds: float, txn_id: str) -> dict:
    p = Producer({"bootstrap.servers": broker.bootstrap, "transactional.id": txn_id, "linger.ms": 5,
                  "queue.buffering.max.messages": 200000})
    p.init_transactions(60)
    commits = []
    records = 0
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        p.begin_transaction()
        for _ in range(size):
            while True:
                try:
                    p.produce(topic, value=VALUE, partition=0)
                    break
                except BufferError:
                    p.poll(0.01)
        t0 = time.monotonic()
        p.commit_transaction(60)
        commits.append(time.monotonic() - t0)
        records += size
    elapsed = time.monotonic() - start
    ms = sorted(c * 1000 for c in commits)
    return {"records_per_s": records / elapsed, "commits": len(ms), "commit_p50_ms": statistics.median(ms),
            "commit_p99_ms": ms[min(len(ms) - 1, int(len(ms) * 0.99))]}


def java_run(broker, topic: str, records: int, txn_id: str) -> dict:
    out = run_tool("kafka-producer-perf-test", "--topic", topic, "--num-records", str(records), "--record-size",
                   "1024", "--throughput", "-1", "--transactional-id", txn_id, "--transaction-duration-ms", "100",
                   "--producer-props", f"bootstrap.servers={broker.bootstrap}", "linger.ms=5", timeout=300)
    m = re.findall(r"([\d.]+) records/sec", out.stdout)
    if not out.ok or not m:
        raise RuntimeError(f"perf-test failed: {out.stdout[-2000:]} {out.stderr[-2000:]}")
    return {"records_per_s": float(m[-1])}


def measure(broker, args, rep: int) -> dict:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    result = {}
    for size in SIZES:
        topic = f"txn-{size}-{rep}"
        admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(60)
        result[f"librdkafka_txn_{size}"] = librdkafka_run(broker, topic, size, args.seconds, f"bench-{size}-{rep}")
    topic = f"txn-java-{rep}"
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(60)
    result["java_txn_100ms"] = java_run(broker, topic, args.java_records, f"bench-java-{rep}")
    return result


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=3, help="repetitions")
    ap.add_argument("--seconds", type=float, default=8.0, help="seconds per librdkafka run")
    ap.add_argument("--java-records", type=int, default=200000)
    ap.add_argument("--weir-only", action="store_true")
    args = ap.parse_args()
    runs: dict[str, list[dict]] = {"weir": [], "kafka": []}
    with tempfile.TemporaryDirectory(prefix="weir-txn-bench-") as tmp:
        for rep in range(args.n):
            for kind in ("weir",) if args.weir_only else ("weir", "kafka"):
                workdir = Path(tmp) / f"{kind}-{rep}"
                b = WeirBroker(workdir, extra_args=["--dev"]) if kind == "weir" else KafkaBroker(workdir)
                b.start()
                try:
                    runs[kind].append(measure(b, args, rep))
                finally:
                    b.stop()
    medians = {}
    for kind, reps in runs.items():
        if not reps:
            continue
        medians[kind] = {case: {k: statistics.median(r[case][k] for r in reps) for k in reps[0][case]}
                         for case in reps[0]}
    ratios = {}
    if medians.get("kafka"):
        for case, vals in medians["weir"].items():
            ratios[case] = {k: vals[k] / medians["kafka"][case][k] for k in vals if medians["kafka"][case][k]}
    print(json.dumps({"runs": runs, "medians": medians, "ratios_weir_over_kafka": ratios}, indent=2))
    procs.kill_all()
    return 0


if __name__ == "__main__":
    sys.exit(main())
