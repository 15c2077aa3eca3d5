#!/usr/bin/env python3
"""What weir's periodic per-partition work costs a concurrent produce at many partitions.

    .cache/venv/bin/python bench/periodic_stalls.py --workdir /tmp/p100k              # build/weir
    .cache/venv/bin/python bench/periodic_stalls.py --workdir /tmp/p100k --binaries A,B --rounds 2

On one kept data directory of --partitions partitions (made on the first run: topics of 1,000,
one CreateTopics request each, then led), each binary in turn, --rounds times, alternating:
weir starts (retention and producer-expiry checks every 20 s instead of 5 and 10 minutes, so a
window sees them; everything else at its defaults: the cleaner's look for work every 15 s, the
offset checkpoints every 60 s), a one-partition probe topic is made, and a steady produce (raw
Produce v3, acks=1, one 100-byte record a request, one in flight, --rate a second) runs for
--seconds (65: one checkpoint round, three retention checks). Per request: send to response
("latency") and scheduled send to response ("scheduled": a stall counts once per slot it
covered). Prints p50/p99/p99.9/max of both and every request slower than --slow-ms with its time
since the probe started, so a stall can be matched with the periodic task that ran then.

Apache Kafka is not run: the row is about weir's own background work (Kafka's equivalents, the
cleaner, retention and checkpoint threads, are not on its request threads). Writes
bench/results/periodic-stalls.json.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import scale_bench as S  # noqa: E402
from harness import wire  # noqa: E402

SETTINGS = {"log.retention.check.interval.ms": 20000, "producer.id.expiration.check.interval.ms": 20000}


def quantiles(values: list[float]) -> dict:
    v = sorted(values)
    if not v:
        return {}
    at = lambda q: v[min(len(v) - 1, int(len(v) * q))]  # noqa: E731
    return {"p50": at(0.5), "p99": at(0.99), "p99.9": at(0.999), "max": v[-1]}


def probe(b, rate: float, seconds: float, slow_ms: float) -> dict:
    batch = S._probe_batch()
    latency, scheduled, slow = [], [], []
    with wire.Connection(b.host, b.port, timeout=60) as c:
        interval = 1.0 / rate
        start = time.perf_counter()
        next_send = start
        while next_send < start + seconds:
            wait = next_send - time.perf_counter()
            if wait > 0:
                time.sleep(wait)
            cid = c.correlation_id()
            t0 = time.perf_counter()
            resp = c.roundtrip(S.encode_produce_v3(cid, S.PROBE_TOPIC, 0, batch), cid, False)
            t1 = time.perf_counter()
            if (err := S.produce_v3_error(resp)):
                raise RuntimeError(f"probe produce failed: error {err}")
            ms = (t1 - t0) * 1000
            latency.append(ms)
            if ms > slow_ms:
                slow.append([round(t0 - start, 3), round(ms, 2)])
            # Every slot up to the response counts from its own scheduled time; missed ones are skipped.
            while next_send <= t1:
                scheduled.append((t1 - next_send) * 1000)
                next_send += interval
    return {"latency_ms": quantiles(latency), "scheduled_ms": quantiles(scheduled), "requests": len(latency),
            "slow": slow}


def one_run(binary: Path, workdir: Path, n: int, args) -> dict:
    b = S.WeirBroker(workdir / "weir", binary=binary, settings=SETTINGS)
    b.start_timeout = 1800
    b.stop_timeout = 1800
    prefix = f"scale-{n}-"
    b.start()
    try:
        with wire.Connection(b.host, b.port, timeout=300) as c:
            there = any(t.name.startswith(prefix) for t in c.metadata_v1().topics)
        if not there:
            S.create_partitions(b, prefix, n)
        S.wait_led(b, prefix, n, timeout=1800)
        S.create_probe_topic(b)
        return probe(b, args.rate, args.seconds, args.slow_ms)
    finally:
        b.stop(check=False)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workdir", type=Path, required=True, help="kept between runs (the partitions are made once)")
    ap.add_argument("--partitions", type=int, default=100000)
    ap.add_argument("--binaries", default=str(S.ROOT / "build" / "weir"), help="comma-separated weir binaries")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--rate", type=float, default=500)
    ap.add_argument("--seconds", type=float, default=65)
    ap.add_argument("--slow-ms", type=float, default=10)
    ap.add_argument("--out", type=Path, default=S.ROOT / "bench" / "results" / "periodic-stalls.json")
    args = ap.parse_args()
    runs = []
    for r in range(args.rounds):
        for binary in args.binaries.split(","):
            res = one_run(Path(binary), args.workdir, args.partitions, args)
            res.update({"binary": binary, "round": r + 1})
            runs.append(res)
            lat, sch = res["latency_ms"], res["scheduled_ms"]
            S.log(f"{binary} round {r + 1}: latency p99 {lat['p99']:.2f} p99.9 {lat['p99.9']:.2f} max "
                  f"{lat['max']:.1f} ms; scheduled p99 {sch['p99']:.2f} p99.9 {sch['p99.9']:.2f} ms; "
                  f"slower than {args.slow_ms:g} ms (s since start, ms): {res['slow']}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"partitions": args.partitions, "rate": args.rate, "seconds": args.seconds,
                                    "settings": SETTINGS, "runs": runs}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
