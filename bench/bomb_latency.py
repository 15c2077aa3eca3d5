"""Small-produce latency while decompression bombs arrive (issue 12, finding 7).

A probe sends one small uncompressed Produce at a time (acks=1, raw Produce v3 on its own
connection) and records each round trip; meanwhile N bomber connections send, one after the other,
a gzip batch of 300 KiB that decompresses to 300 MiB (past weir's default
weir.produce.max.decompressed.batch.bytes, so weir refuses it with INVALID_RECORD; Kafka, which has
no limit, decompresses and stores it). Two phases per broker: the probe alone ("quiet"), then the
probe with the bombers ("bombs"). Prints p50/p99/max of the probe's round trips per phase and the
bombers' answers, as JSON. Not part of `make test` and not run by `make bench`; timings on a
shared machine are noise.

    .cache/venv/bin/python bench/bomb_latency.py [--seconds 10] [--bombers 2] [--kafka]
"""
from __future__ import annotations

import argparse
import json
import socket
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "scenario"))

from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

from harness import procs  # noqa: E402
from harness.kafka import KafkaBroker  # noqa: E402
from harness.weir import WeirBroker  # noqa: E402
from test_compressed_batches import (MIB, decode_produce_v3, encode_produce_v3, gzip_zeros_batch,  # noqa: E402
                                     plain_batch, read_frame)


def round_trip(sock: socket.socket, topic: str, records: bytes, correlation_id: int) -> tuple[float, int]:
    start = time.monotonic()
    sock.sendall(encode_produce_v3(correlation_id, topic, records))
    _, error, _ = decode_produce_v3(read_frame(sock))
    return time.monotonic() - start, error


def probe(broker, seconds: float) -> list[float]:
    small = plain_batch(b"x" * 100)
    out = []
    with socket.create_connection((broker.host, broker.port), timeout=120) as sock:
        deadline = time.monotonic() + seconds
        i = 0
        while time.monotonic() < deadline:
            i += 1
            latency, error = round_trip(sock, "small", small, i)
            if error != 0:
                raise RuntimeError(f"small produce failed with error {error}")
            out.append(latency)
    return out


def wait_led(broker, timeout: float = 60.0) -> None:
    """Until a small produce succeeds: Kafka answers NOT_LEADER_OR_FOLLOWER for a moment after
    the topic is created."""
    small = plain_batch(b"x" * 100)
    deadline = time.monotonic() + timeout
    with socket.create_connection((broker.host, broker.port), timeout=120) as sock:
        i = 0
        while True:
            i += 1
            _, error = round_trip(sock, "small", small, i)
            if error == 0:
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"small produce still fails with error {error}")
            time.sleep(0.1)


def bomber(broker, bomb: bytes, stop: threading.Event, answers: Counter) -> None:
    with socket.create_connection((broker.host, broker.port), timeout=300) as sock:
        i = 0
        while not stop.is_set():
            i += 1
            _, error = round_trip(sock, "bombs", bomb, i)
            answers[error] += 1


def summary(latencies: list[float]) -> dict:
    ms = sorted(x * 1000 for x in latencies)
    return {"n": len(ms), "p50_ms": statistics.median(ms), "p99_ms": ms[min(len(ms) - 1, int(len(ms) * 0.99))],
            "max_ms": ms[-1]}


def run(broker, args, bomb: bytes) -> dict:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    for f in admin.create_topics([NewTopic("small", 1, 1), NewTopic("bombs", 1, 1)]).values():
        f.result(timeout=60)
    wait_led(broker)
    probe(broker, 1.0)  # warm-up
    result = {"quiet": summary(probe(broker, args.seconds))}
    stop = threading.Event()
    answers: Counter = Counter()
    threads = [threading.Thread(target=bomber, args=(broker, bomb, stop, answers), daemon=True)
               for _ in range(args.bombers)]
    for t in threads:
        t.start()
    time.sleep(0.5)
    result["bombs"] = summary(probe(broker, args.seconds))
    stop.set()
    for t in threads:
        t.join(timeout=300)
    result["bomb_answers"] = {str(code): n for code, n in answers.items()}
    return result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=10.0, help="length of each phase")
    ap.add_argument("--bombers", type=int, default=2, help="connections sending bombs")
    ap.add_argument("--kafka", action="store_true", help="also run against Apache Kafka")
    ap.add_argument("--weir-bin", default=None, help="weir binary (default: $WEIR_BIN or build/weir)")
    args = ap.parse_args()
    bomb = gzip_zeros_batch(300, MIB)
    out = {"bomb_compressed_bytes": len(bomb), "bomb_decompressed_bytes": 300 * MIB}
    kinds = ["weir"] + (["kafka"] if args.kafka else [])
    try:
        for kind in kinds:
            with tempfile.TemporaryDirectory(prefix=f"bomb-bench-{kind}-") as tmp:
                b = (WeirBroker(Path(tmp), extra_args=["--dev"], binary=args.weir_bin) if kind == "weir"
                     else KafkaBroker(Path(tmp)))
                b.start()
                try:
                    out[kind] = run(b, args, bomb)
                finally:
                    b.stop(check=False)
    finally:
        procs.kill_all(grace=10.0)
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
