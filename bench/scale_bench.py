#!/usr/bin/env python3
"""Scale: what partitions and idle connections cost weir and Apache Kafka on the same machine.

    .cache/venv/bin/python bench/scale_bench.py                       # 1,000 and 10,000 partitions
    .cache/venv/bin/python bench/scale_bench.py --partitions 100000   # one count
    .cache/venv/bin/python bench/scale_bench.py --smoke               # seconds: 200 partitions, 200 connections

For each partition count N, on a fresh broker (weir with its defaults, then the harness's
single-node KRaft Kafka 4.3.1), one after the other:
  - create N partitions as topics of 1,000 (CreateTopics, one topic a request) and wait until
    Metadata lists every partition with a leader: the time it took;
  - idle: RSS (VmRSS) and open file descriptors;
  - Metadata (v1, all topics) round-trip time: median of 5 (request written to response read,
    parsing not included), and the response size;
  - DescribeTopicPartitions v0 of all topics through kreq: the first page's round trip (median of
    5) and the walk over every page;
  - one record (acks=1) to every partition (a record the client gave up on fails the step);
  - 100,000 records of 1 KiB round-robin over all partitions (confluent-kafka, its defaults:
    acks=all, idempotent; linger.ms=5), then every partition read from its start with assign():
    records/s each; then RSS again;
  - a clean stop (SIGTERM until the process exited), then a clean restart: process start until
    the Metadata answer listing every partition with a leader arrived, RSS after;
  - Metadata under produce (`--only metadata-load` runs this step alone, after creating the
    partitions or finding them already there in `--workdir`): a one-partition topic of its own
    takes a steady produce (raw Produce v3, acks=1, one 100-byte record a request, one request in
    flight, --probe-rate a second) on its own connection, first alone for --probe-seconds, then
    as long again while --md-loaders other connections (each a process of its own) request
    Metadata v1 of all topics back to back (or each --md-rate a second). Per request: send to response read ("latency"); and
    per slot of the schedule, its time to the response read of the request that took it or held
    it back ("scheduled": a stall counts once per slot it covered; a late probe skips the slots
    it missed rather than catching up back to back). p50/p99/p99.9 alone and under the load,
    the ratios, and the Metadata round trips under load. All on this machine's 2 cores: the clients' CPU competes with the broker's. The
    probe's topic stays: the steps after it see N + 1 partitions;
Then idle connections: a fresh broker, --connections TCP connections each having sent ApiVersions
(v3), RSS before and with them open, broker CPU seconds over --idle-seconds with them open.
Where Kafka cannot do a step the error is recorded instead of a number.

Writes bench/results/scale.json and bench/results/scale.md (weir / Kafka ratios; with --only,
scale-<step>.json and .md). Not part of
`make bench` (a 10,000-partition Kafka takes minutes to create and restart on 2 cores).
"""
from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import resource
import socket
import statistics
import struct
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "scenario"))

from harness import wire  # noqa: E402
from harness.kreq import Kreq  # noqa: E402
from harness.kafka import KafkaBroker  # noqa: E402
from harness.weir import WeirBroker  # noqa: E402

from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

TOPIC_PARTITIONS = 1000


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def status_kib(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return 0


def rss_mib(pid: int) -> float:
    return status_kib(pid, "VmRSS") / 1024


def open_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def metadata_rtt(b, repeats: int = 5) -> tuple[float, int, wire.MetadataResponse]:
    """Median round trip (ms) of Metadata v1 for all topics, the response size, the last answer."""
    times, size, body = [], 0, b""
    with wire.Connection(b.host, b.port, timeout=120) as c:
        for _ in range(repeats):
            cid = c.correlation_id()
            req = wire.encode_metadata_v1_request(cid, None)
            t0 = time.perf_counter()
            c.send_raw(req)
            frame = c.recv_frame()
            times.append((time.perf_counter() - t0) * 1000)
            size = len(frame)
            body = frame[4:]
    return statistics.median(times), size, wire.decode_metadata_v1_response(body)


def describe_partitions(b, repeats: int = 5) -> tuple[float, float, int]:
    """DescribeTopicPartitions v0 of all topics (the broker's default page of 2,000 partitions):
    the median round trip of the first page (ms), the time to walk every page (s) and the
    partitions seen. Through kreq (franz-go's codec and JSON on both sides of a pipe), so the
    times include that client's decoding; the same for both brokers."""
    times = []
    with Kreq(b) as k:
        for _ in range(repeats):
            t0 = time.perf_counter()
            k.send("DescribeTopicPartitions", 0, {"Topics": []})
            times.append((time.perf_counter() - t0) * 1000)
        seen, cursor = 0, None
        t0 = time.perf_counter()
        while True:
            body: dict = {"Topics": []}
            if cursor is not None:
                body["Cursor"] = cursor
            resp = k.send("DescribeTopicPartitions", 0, body)
            seen += sum(len(t["Partitions"]) for t in resp["Topics"])
            cursor = resp["NextCursor"]
            if cursor is None:
                break
            cursor = {"Topic": cursor["Topic"], "Partition": cursor["Partition"]}
        walk = time.perf_counter() - t0
    return statistics.median(times), walk, seen


def led_partitions(md: wire.MetadataResponse, prefix: str) -> int:
    return sum(1 for t in md.topics if t.name.startswith(prefix) and t.error_code == 0
               for p in t.partitions if p["leader"] >= 0)


def wait_led(b, prefix: str, n: int, timeout: float) -> float:
    """Seconds until Metadata lists n partitions of the run's topics with a leader: until the
    answer that lists them arrived (decoding it here, 2.6 MB at 100,000 partitions, is not the
    broker's time). The return value counts from the call; led_at() gives the moment itself."""
    t0 = time.monotonic()
    return led_at(b, prefix, n, timeout) - t0


def led_at(b, prefix: str, n: int, timeout: float) -> float:
    """time.monotonic() when the first Metadata answer listing n led partitions arrived."""
    t0 = time.monotonic()
    while True:
        try:
            with wire.Connection(b.host, b.port, timeout=120) as c:
                cid = c.correlation_id()
                body = c.roundtrip(wire.encode_metadata_v1_request(cid, None), cid, False)
                arrived = time.monotonic()
                if led_partitions(wire.decode_metadata_v1_response(body), prefix) >= n:
                    return arrived
        except (OSError, wire.ConnectionClosed, wire.ProtocolError):
            pass
        if time.monotonic() - t0 > timeout:
            raise TimeoutError(f"{n} led partitions of {prefix}* not seen within {timeout:.0f} s")
        time.sleep(0.2)


def create_partitions(b, prefix: str, n: int) -> list[str]:
    admin = AdminClient({"bootstrap.servers": b.bootstrap})
    names = [f"{prefix}{i}" for i in range((n + TOPIC_PARTITIONS - 1) // TOPIC_PARTITIONS)]
    # One topic a request: Kafka refuses more than max.records.per.user.op (10,000) metadata
    # records in one operation (POLICY_VIOLATION), and weir does the same.
    for i, t in enumerate(names):
        topic = NewTopic(t, min(TOPIC_PARTITIONS, n - i * TOPIC_PARTITIONS), 1)
        for f in admin.create_topics([topic], operation_timeout=600, request_timeout=600).values():
            f.result(timeout=900)
    return names


def write_each(b, names: list[str], n: int) -> float:
    p = Producer({"bootstrap.servers": b.bootstrap, "acks": "1", "linger.ms": 20, "enable.idempotence": False})
    failed: list[str] = []

    def delivered(err, _msg) -> None:
        if err is not None:
            failed.append(str(err))

    t0 = time.monotonic()
    left = n
    for t in names:
        for part in range(min(TOPIC_PARTITIONS, left)):
            while True:
                try:
                    p.produce(t, value=b"x" * 100, partition=part, on_delivery=delivered)
                    break
                except BufferError:
                    p.poll(0.1)
        left -= TOPIC_PARTITIONS
        p.poll(0)
    if p.flush(600) != 0:
        raise RuntimeError("records left unacknowledged")
    # A record the client gave up on (message.timeout.ms) is delivered with an error, not left.
    if failed:
        raise RuntimeError(f"{len(failed)} of {n} records failed, first: {failed[0]}")
    return time.monotonic() - t0


THROUGHPUT_RECORDS = 100_000
THROUGHPUT_VALUE = 1024


def produce_spread(b, names: list[str], n: int) -> float:
    """THROUGHPUT_RECORDS records of 1 KiB spread round-robin over all n partitions, with the
    client's defaults (acks=all, idempotent): records/s until every one is acknowledged."""
    p = Producer({"bootstrap.servers": b.bootstrap, "linger.ms": 5})
    failed: list[str] = []

    def delivered(err, _msg) -> None:
        if err is not None:
            failed.append(str(err))

    value = b"v" * THROUGHPUT_VALUE
    t0 = time.monotonic()
    for i in range(THROUGHPUT_RECORDS):
        part = i % n
        while True:
            try:
                p.produce(names[part // TOPIC_PARTITIONS], value=value, partition=part % TOPIC_PARTITIONS,
                          on_delivery=delivered)
                break
            except BufferError:
                p.poll(0.05)
    if p.flush(900) != 0:
        raise RuntimeError("records left unacknowledged")
    if failed:
        raise RuntimeError(f"{len(failed)} records failed, first: {failed[0]}")
    return THROUGHPUT_RECORDS / (time.monotonic() - t0)


def consume_spread(b, names: list[str], n: int, expected: int) -> tuple[float, float]:
    """Reads every partition from its start (assign(), no group) until `expected` records came:
    records/s, and this process's CPU (the consumer runs in it) per GB of values read."""
    cpu0 = time.process_time()
    c = Consumer({"bootstrap.servers": b.bootstrap, "group.id": "scale-bench", "enable.auto.commit": False,
                  "enable.partition.eof": False})
    c.assign([TopicPartition(names[i // TOPIC_PARTITIONS], i % TOPIC_PARTITIONS, OFFSET_BEGINNING)
              for i in range(n)])
    got = 0
    nbytes = 0
    t0 = time.monotonic()
    try:
        while got < expected:
            if time.monotonic() - t0 > 900:
                raise RuntimeError(f"read {got} of {expected} records in 900 s")
            # Never asked for more than the records still to come: consume() waits for a full
            # batch or its timeout, which would add up to 1 s after the last record.
            for m in c.consume(num_messages=min(10_000, expected - got), timeout=1.0):
                if m.error() is None:
                    got += 1
                    nbytes += len(m.value() or b"")
        rps = got / (time.monotonic() - t0)
    finally:
        c.close()
    return rps, (time.process_time() - cpu0) / (nbytes / 1e9) if nbytes else None


# ----------------------------------------------------------------------------- Metadata under produce
PROBE_TOPIC = "md-load-probe"
PRODUCE = 0


def _probe_batch() -> bytes:
    """One uncompressed RecordBatch v2 holding one 100-byte record (built once, sent every time:
    acks=1 without idempotence, so the broker assigns the offsets)."""
    def zigzag(n: int) -> bytes:
        v = (n << 1) ^ (n >> 63)
        out = bytearray()
        while True:
            if v < 0x80:
                out.append(v)
                return bytes(out)
            out.append((v & 0x7F) | 0x80)
            v >>= 7

    value = b"p" * 100
    record = b"\x00" + zigzag(0) + zigzag(0) + zigzag(-1) + zigzag(len(value)) + value + zigzag(0)
    now_ms = int(time.time() * 1000)
    after_crc = struct.pack(">hiqqqhii", 0, 0, now_ms, now_ms, -1, -1, -1, 1) + zigzag(len(record)) + record
    crc = 0xFFFFFFFF
    for byte in after_crc:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 & -(crc & 1))
    crc ^= 0xFFFFFFFF
    rest = struct.pack(">ibI", -1, 2, crc) + after_crc
    return struct.pack(">qi", 0, len(rest)) + rest


def encode_produce_v3(correlation_id: int, topic: str, partition: int, batch: bytes) -> bytes:
    w = wire.Writer().string(None).int16(1).int32(30_000)  # transactional id, acks=1, timeout
    w.int32(1).string(topic).int32(1).int32(partition).int32(len(batch)).raw(batch)
    return wire.frame(wire.request_header(PRODUCE, 3, correlation_id, "scale-bench-probe") + w.bytes())


def produce_v3_error(body: bytes) -> int:
    """The partition's error code in a Produce v3 response to one partition (after the header)."""
    r = wire.Reader(body)
    r.array_len()
    r.string()
    r.array_len()
    r.int32()
    return r.int16()


def percentile(values: list[float], q: float) -> float:
    """Nearest rank: the smallest value with at least q of the values at or below it."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def produce_probe(host: str, port: int, rate: float, seconds: float) -> dict:
    """A steady acks=1 produce to PROBE_TOPIC-0, one request in flight: per-request latency (ms)
    from send to response, and from the scheduled send time to response."""
    batch = _probe_batch()
    latency, scheduled = [], []
    with wire.Connection(host, port, timeout=60) as c:
        for _ in range(20):  # warm: the connection, the partition's files
            cid = c.correlation_id()
            if (err := produce_v3_error(c.roundtrip(encode_produce_v3(cid, PROBE_TOPIC, 0, batch), cid, False))):
                raise RuntimeError(f"warm-up produce failed: error {err}")
        interval = 1.0 / rate
        next_send = time.perf_counter()
        end = next_send + seconds
        while next_send < end:
            wait = next_send - time.perf_counter()
            if wait > 0:
                time.sleep(wait)
            cid = c.correlation_id()
            req = encode_produce_v3(cid, PROBE_TOPIC, 0, batch)
            t0 = time.perf_counter()
            body = c.roundtrip(req, cid, False)
            t1 = time.perf_counter()
            if (err := produce_v3_error(body)):
                raise RuntimeError(f"produce failed: error {err}")
            latency.append((t1 - t0) * 1000)
            # This request's slot and every slot that came due while it was in flight: those
            # requests would have waited for it (one in flight). The next goes at the next slot,
            # never back to back to catch up (that would measure a different, hotter client).
            slot = next_send
            while slot <= t1 and slot < end:
                scheduled.append((t1 - slot) * 1000)
                slot += interval
            next_send = max(slot, next_send + interval)
    out = {"count": len(latency)}
    for name, values in (("latency", latency), ("scheduled", scheduled)):
        for q, label in ((0.5, "p50"), (0.99, "p99"), (0.999, "p99.9")):
            out[f"{name}_{label}_ms"] = percentile(values, q)
        out[f"{name}_max_ms"] = max(values)
    return out


def _metadata_loader(host: str, port: int, ready, stop, results, rate: float = 0.0) -> None:
    """Child process: Metadata v1 of all topics on one connection until `stop` is set, back to
    back (rate 0) or `rate` a second on a fixed schedule (one in flight; a slot missed while an
    answer was late is skipped, not caught up); sends its round trips (ms) to `results`. The
    response is read, not parsed."""
    times: list[float] = []
    try:
        with wire.Connection(host, port, timeout=300) as c:
            next_send = time.perf_counter()
            while not stop.is_set():
                if rate > 0:
                    wait = next_send - time.perf_counter()
                    if wait > 0:
                        time.sleep(wait)
                    next_send += 1.0 / rate
                    while next_send < time.perf_counter():
                        next_send += 1.0 / rate
                cid = c.correlation_id()
                req = wire.encode_metadata_v1_request(cid, None)
                t0 = time.perf_counter()
                c.send_raw(req)
                c.recv_frame()
                times.append((time.perf_counter() - t0) * 1000)
                if len(times) == 1:
                    ready.release()
        results.send(times)
    except Exception as e:  # noqa: BLE001 - reported to the parent
        ready.release()
        results.send(f"{type(e).__name__}: {e}")


def metadata_load(b, loaders: int, rate: float, seconds: float, md_rate: float = 0.0) -> dict:
    """The produce probe alone, then while `loaders` connections request Metadata back to back
    (md_rate 0) or each at md_rate a second."""
    out: dict = {"loaders": loaders, "rate": rate, "seconds": seconds, "md_rate": md_rate}
    alone = produce_probe(b.host, b.port, rate, seconds)
    ctx = multiprocessing.get_context("fork")
    ready, stop = ctx.Semaphore(0), ctx.Event()
    pipes, procs = [], []
    for _ in range(loaders):
        receive, send = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=_metadata_loader, args=(b.host, b.port, ready, stop, send, md_rate),
                           daemon=True)
        proc.start()
        pipes.append(receive)
        procs.append(proc)
    try:
        for _ in range(loaders):  # every loader has had one answer: the load is on
            if not ready.acquire(timeout=300):
                raise TimeoutError("a Metadata loader got no answer in 300 s")
        loaded = produce_probe(b.host, b.port, rate, seconds)
    finally:
        stop.set()
        got = [p.recv() if p.poll(600) else "no result" for p in pipes]
        for proc in procs:
            proc.join(30)
    errors = [g for g in got if isinstance(g, str)]
    if errors:
        raise RuntimeError(f"Metadata loader: {errors[0]}")
    rtts = [t for g in got for t in g[1:]]  # the first of each loader ran before the window
    for k, v in alone.items():
        out[f"alone_{k}"] = v
    for k, v in loaded.items():
        out[f"loaded_{k}"] = v
    for name in ("latency", "scheduled"):
        for label in ("p50", "p99", "p99.9"):
            out[f"{name}_{label}_ratio"] = loaded[f"{name}_{label}_ms"] / alone[f"{name}_{label}_ms"]
    out["metadata_count"] = len(rtts)
    if rtts:
        out["metadata_p50_ms"] = percentile(rtts, 0.5)
        out["metadata_p99_ms"] = percentile(rtts, 0.99)
        out["metadata_max_ms"] = max(rtts)
    return out


def create_probe_topic(b) -> None:
    # All topics: naming it in Metadata v1 would create it (v1 always allows auto-creation).
    with wire.Connection(b.host, b.port, timeout=120) as c:
        if any(t.name == PROBE_TOPIC and t.error_code == 0 for t in c.metadata_v1().topics):
            return
    admin = AdminClient({"bootstrap.servers": b.bootstrap})
    for f in admin.create_topics([NewTopic(PROBE_TOPIC, 1, 1)], operation_timeout=120).values():
        f.result(timeout=180)
    wait_led(b, PROBE_TOPIC, 1, timeout=180)


def make_broker(kind: str, workdir: Path):
    if kind == "weir":
        return WeirBroker(workdir / "weir")
    return KafkaBroker(workdir / "kafka")


def partitions_run(kind: str, n: int, workdir: Path, cfg) -> dict:
    out: dict = {}
    b = make_broker(kind, workdir)
    b.start_timeout = 1800
    b.stop_timeout = 1800
    prefix = f"scale-{n}-"
    try:
        b.start()
        t0 = time.monotonic()
        with wire.Connection(b.host, b.port, timeout=300) as c:
            there = any(t.name.startswith(prefix) for t in c.metadata_v1().topics)
        if there and cfg.only:  # a kept --workdir: the partitions of an earlier run, led once loaded
            names = [f"{prefix}{i}" for i in range((n + TOPIC_PARTITIONS - 1) // TOPIC_PARTITIONS)]
            wait_led(b, prefix, n, timeout=1800)
            log(f"  {kind} {n}: the partitions are already there")
        else:
            names = create_partitions(b, prefix, n)
            wait_led(b, prefix, n, timeout=1800)
            out["create_s"] = time.monotonic() - t0
        if cfg.only == "metadata-load":
            create_probe_topic(b)
            out["metadata_ms"], out["metadata_bytes"], _ = metadata_rtt(b)
            out["metadata_load"] = metadata_load(b, cfg.md_loaders, cfg.probe_rate, cfg.probe_seconds, cfg.md_rate)
            return out
        out["idle_rss_mib"] = rss_mib(b.pid)
        out["idle_fds"] = open_fds(b.pid)
        out["metadata_ms"], out["metadata_bytes"], _ = metadata_rtt(b)
        create_probe_topic(b)
        out["metadata_load"] = metadata_load(b, cfg.md_loaders, cfg.probe_rate, cfg.probe_seconds, cfg.md_rate)
        out["dtp_first_page_ms"], out["dtp_walk_s"], out["dtp_partitions"] = describe_partitions(b)
        out["write_each_s"] = write_each(b, names, n)
        out["produce_spread_rps"] = produce_spread(b, names, n)
        out["consume_spread_rps"], out["consume_spread_client_cpu_s_per_gb"] = consume_spread(
            b, names, n, n + THROUGHPUT_RECORDS)
        time.sleep(2)
        out["written_rss_mib"] = rss_mib(b.pid)
        out["written_fds"] = open_fds(b.pid)
        t0 = time.monotonic()
        b.stop()
        out["stop_s"] = time.monotonic() - t0
        t0 = time.monotonic()
        b.start()
        out["restart_s"] = led_at(b, prefix, n, timeout=1800) - t0
        out["restart_rss_mib"] = rss_mib(b.pid)
        out["restart_metadata_ms"], _, _ = metadata_rtt(b)
    except Exception as e:  # noqa: BLE001 - the bench records what the broker could not do
        out["error"] = f"{type(e).__name__}: {e}"[:500]
        log(f"  {kind} {n}: {out['error']}")
    finally:
        if b.running:
            try:
                b.stop()
            except Exception as e:  # noqa: BLE001
                out.setdefault("error", f"stop: {e}"[:500])
    return out


def connections_run(kind: str, count: int, idle_s: float, workdir: Path) -> dict:
    out: dict = {}
    b = make_broker(kind, workdir)
    socks: list[socket.socket] = []
    try:
        b.start()
        time.sleep(1)
        out["rss_before_mib"] = rss_mib(b.pid)
        req = wire.encode_api_versions_request(3, 1, "scale-bench")
        for _ in range(count):
            s = socket.create_connection((b.host, b.port), timeout=30)
            s.sendall(req)
            socks.append(s)
        for s in socks:  # every connection answered: the broker holds them all
            size = struct.unpack(">i", s.recv(4, socket.MSG_WAITALL))[0]
            s.recv(size, socket.MSG_WAITALL)
        time.sleep(1)
        out["rss_open_mib"] = rss_mib(b.pid)
        out["per_connection_kib"] = (out["rss_open_mib"] - out["rss_before_mib"]) * 1024 / count
        c0 = cpu_seconds(b.pid)
        time.sleep(idle_s)
        out["idle_cpu_s"] = cpu_seconds(b.pid) - c0
        out["still_open"] = sum(1 for s in socks if _open(s))
    except Exception as e:  # noqa: BLE001
        out["error"] = f"{type(e).__name__}: {e}"[:500]
        log(f"  {kind} connections: {out['error']}")
    finally:
        for s in socks:
            s.close()
        if b.running:
            b.stop()
    return out


def _open(s: socket.socket) -> bool:
    s.setblocking(False)
    try:
        return s.recv(1, socket.MSG_PEEK) != b""
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        s.setblocking(True)


ROWS = [
    ("create_s", "create N partitions (topics of 1,000, one a request) until all led", "s"),
    ("idle_rss_mib", "RSS idle", "MiB"),
    ("idle_fds", "open file descriptors idle", "count"),
    ("metadata_ms", "Metadata v1 (all topics) round trip", "ms"),
    ("metadata_bytes", "Metadata v1 response size", "bytes"),
    ("dtp_first_page_ms", "DescribeTopicPartitions first page (2,000 partitions) round trip, via kreq", "ms"),
    ("dtp_walk_s", "DescribeTopicPartitions: every page, all partitions, via kreq", "s"),
    ("dtp_partitions", "partitions DescribeTopicPartitions listed (N + 1: the probe's topic)", "count"),
    ("write_each_s", "one record to every partition (acks=1)", "s"),
    ("produce_spread_rps", "produce 100,000 x 1 KiB round-robin over all partitions, client defaults", "records/s"),
    ("consume_spread_rps", "read every partition from its start (assign)", "records/s"),
    ("consume_spread_client_cpu_s_per_gb", "the same: the consumer process's CPU per GB", "CPU s/GB"),
    ("written_rss_mib", "RSS after those writes and reads", "MiB"),
    ("written_fds", "open file descriptors after the writes", "count"),
    ("stop_s", "clean stop (SIGTERM to exit) after those writes and reads", "s"),
    ("restart_s", "clean restart: process start to all partitions led", "s"),
    ("restart_rss_mib", "RSS after the restart", "MiB"),
    ("restart_metadata_ms", "Metadata v1 round trip after the restart", "ms"),
]
LOAD_ROWS = [
    ("alone_latency_p50_ms", "produce latency alone, p50", "ms"),
    ("alone_latency_p99_ms", "produce latency alone, p99", "ms"),
    ("alone_latency_p99.9_ms", "produce latency alone, p99.9", "ms"),
    ("loaded_latency_p50_ms", "produce latency under Metadata load, p50", "ms"),
    ("loaded_latency_p99_ms", "produce latency under Metadata load, p99", "ms"),
    ("loaded_latency_p99.9_ms", "produce latency under Metadata load, p99.9", "ms"),
    ("latency_p50_ratio", "under load / alone, p50", "x"),
    ("latency_p99_ratio", "under load / alone, p99", "x"),
    ("latency_p99.9_ratio", "under load / alone, p99.9", "x"),
    ("alone_scheduled_p99_ms", "from the scheduled send, alone, p99", "ms"),
    ("loaded_scheduled_p99_ms", "from the scheduled send, under load, p99", "ms"),
    ("scheduled_p99_ratio", "from the scheduled send, under load / alone, p99", "x"),
    ("metadata_p50_ms", "Metadata round trip under load, p50", "ms"),
    ("metadata_p99_ms", "Metadata round trip under load, p99", "ms"),
    ("metadata_count", "Metadata requests answered in the window", "count"),
]
CONN_ROWS = [
    ("rss_before_mib", "RSS before", "MiB"),
    ("rss_open_mib", "RSS with the connections open", "MiB"),
    ("per_connection_kib", "RSS per idle connection", "KiB"),
    ("idle_cpu_s", "broker CPU over the idle period", "CPU s"),
    ("still_open", "connections still open at the end", "count"),
]


def fmt(x) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:.3g}" if abs(x) < 1000 else f"{x:,.0f}"
    return f"{x:,}" if isinstance(x, int) else str(x)


def markdown(res: dict) -> str:
    lines = [f"Scale run {res['started']} (`{' '.join(res['argv'])}`); load average at the start "
             f"{res['load_start']:.1f}, at the end {res['load_end']:.1f}.", ""]
    for n, r in res["partitions"].items():
        lines += [f"### {int(n):,} partitions", "", "| metric | unit | weir | Kafka | weir/Kafka |", "|---|---|---:|---:|---:|"]
        for key, what, unit in ROWS:
            w, k = r["weir"].get(key), r["kafka"].get(key)
            if w is None and k is None:  # a step this run did not take (--only)
                continue
            ratio = w / k if isinstance(w, (int, float)) and isinstance(k, (int, float)) and k else None
            lines.append(f"| {what} | {unit} | {fmt(w)} | {fmt(k)} | {fmt(ratio)} |")
        if any("metadata_load" in r[kind] for kind in ("weir", "kafka")):
            load = next(r[kind]["metadata_load"] for kind in ("weir", "kafka") if "metadata_load" in r[kind])
            lines += ["", f"Produce (acks=1, 100 B, {load['rate']:g}/s, one in flight) alone and while "
                      f"{load['loaders']} connections request Metadata v1 of all topics "
                      + (f"{load['md_rate']:g} a second each, " if load.get("md_rate") else "back to back, ")
                      + f"{load['seconds']:g} s each:", "",
                      "| metric | unit | weir | Kafka | weir/Kafka |", "|---|---|---:|---:|---:|"]
            for key, what, unit in LOAD_ROWS:
                w, k = (r[kind].get("metadata_load", {}).get(key) for kind in ("weir", "kafka"))
                ratio = w / k if isinstance(w, (int, float)) and isinstance(k, (int, float)) and k else None
                lines.append(f"| {what} | {unit} | {fmt(w)} | {fmt(k)} | {fmt(ratio)} |")
        for kind in ("weir", "kafka"):
            if "error" in r[kind]:
                lines.append(f"\n{kind}: {r[kind]['error']}")
        lines.append("")
    c = res.get("connections")
    if c:
        lines += [f"### {res['connection_count']:,} idle connections ({res['idle_seconds']:.0f} s)", "",
                  "| metric | unit | weir | Kafka | weir/Kafka |", "|---|---|---:|---:|---:|"]
        for key, what, unit in CONN_ROWS:
            w, k = c["weir"].get(key), c["kafka"].get(key)
            ratio = w / k if isinstance(w, (int, float)) and isinstance(k, (int, float)) and k else None
            lines.append(f"| {what} | {unit} | {fmt(w)} | {fmt(k)} | {fmt(ratio)} |")
        for kind in ("weir", "kafka"):
            if "error" in c[kind]:
                lines.append(f"\n{kind}: {c[kind]['error']}")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--partitions", type=lambda s: [int(x) for x in s.split(",")], default=None,
                    help="comma-separated counts (default 1000,10000)")
    ap.add_argument("--connections", type=int, default=None, help="idle connections (default 5000; 0 skips)")
    ap.add_argument("--idle-seconds", type=float, default=None, help="default 30")
    ap.add_argument("--kinds", default="weir,kafka")
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--only", choices=["metadata-load"], default=None,
                    help="create (or find) the partitions and run only this step; no idle connections")
    ap.add_argument("--workdir", type=Path, default=None,
                    help="keep the brokers' data here (with --only, a later run reuses the partitions)")
    ap.add_argument("--md-loaders", type=int, default=2, help="connections requesting Metadata (default 2)")
    ap.add_argument("--md-rate", type=float, default=0.0,
                    help="Metadata requests a second per loader, on a fixed schedule (default 0: back to back)")
    ap.add_argument("--probe-rate", type=float, default=200, help="produce requests a second (default 200)")
    ap.add_argument("--probe-seconds", type=float, default=None, help="each window (default 15; smoke 2)")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results")
    cfg = ap.parse_args(argv)
    counts = cfg.partitions or ([200] if cfg.smoke else [1000, 10000])
    conns = cfg.connections if cfg.connections is not None else (200 if cfg.smoke else 5000)
    idle = cfg.idle_seconds or (3 if cfg.smoke else 30)
    kinds = cfg.kinds.split(",")
    cfg.probe_seconds = cfg.probe_seconds or (2 if cfg.smoke else 15)
    if cfg.only:
        conns = 0
    # Kafka keeps a descriptor per segment file and the connections need one each.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    res = {"started": time.strftime("%Y-%m-%d %H:%M:%S"), "argv": ["bench/scale_bench.py", *argv],
           "load_start": os.getloadavg()[0], "nofile": hard, "partitions": {}, "connection_count": conns,
           "idle_seconds": idle}
    with tempfile.TemporaryDirectory(prefix="weir-scale-") as tmp:
        base = cfg.workdir or Path(tmp)
        for n in counts:
            res["partitions"][str(n)] = {}
            for kind in kinds:
                log(f"{kind}: {n:,} partitions")
                r = partitions_run(kind, n, base / f"{kind}-{n}", cfg)
                log(f"  {kind} {n}: " + ", ".join(f"{k}={fmt(v)}" for k, v in r.items()))
                res["partitions"][str(n)][kind] = r
        if conns:
            res["connections"] = {}
            for kind in kinds:
                log(f"{kind}: {conns:,} idle connections")
                r = connections_run(kind, conns, idle, Path(tmp) / f"{kind}-conns")
                log(f"  {kind}: " + ", ".join(f"{k}={fmt(v)}" for k, v in r.items()))
                res["connections"][kind] = r
    for n in res["partitions"].values():
        for kind in ("weir", "kafka"):
            n.setdefault(kind, {})
    if "connections" in res:
        for kind in ("weir", "kafka"):
            res["connections"].setdefault(kind, {})
    res["load_end"] = os.getloadavg()[0]
    cfg.out.mkdir(parents=True, exist_ok=True)
    stem = f"scale-{cfg.only}" if cfg.only else "scale"  # a step alone keeps the full run's results
    (cfg.out / f"{stem}.json").write_text(json.dumps(res, indent=2) + "\n")
    (cfg.out / f"{stem}.md").write_text(markdown(res))
    print(markdown(res))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
