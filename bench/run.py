#!/usr/bin/env python3
"""weir vs Apache Kafka on the same machine, one after the other, same clients, same settings.

Run with the project venv's python (it needs confluent-kafka):

    .cache/venv/bin/python bench/run.py            # full run (~15 min on 2 cores), 3 repetitions
    .cache/venv/bin/python bench/run.py --smoke    # seconds: tiny counts, one repetition

Writes bench/results/latest.json and bench/results/latest.md (weir / Kafka ratios of medians).

Each repetition runs three phases (weir first, then Kafka; weir's latency run last, as its rate
comes from Kafka's run). weir gets a fresh process and data directory per phase; Kafka (start-up
~10 s) runs all three phases on one instance per repetition:
  fast     no-fsync mode (weir --dev, Kafka defaults): produce throughput with
           kafka-producer-perf-test and with a confluent-kafka (librdkafka) Python driver,
           1 and 16 partitions x acks=1/all; consume throughput (confluent-kafka, assign(), no group);
           broker CPU s/GB over the perf-test produce runs; idle and peak RSS; start-up time.
  durable  weir default (fdatasync before acks=all is answered) vs Kafka topics with flush.messages=1:
           kafka-producer-perf-test, acks=all, 1 and 16 partitions; and default against default
           (Kafka's topic without flush.messages) in the shape of franz-go's TestClient_Produce:
           50 goroutines producing synchronously to one partition (tests/go/syncproduce).
  latency  no-fsync mode again: kafka-producer-perf-test at a fixed rate of half of Kafka's
           measured maximum (acks=all, 1 partition, from this repetition's fast phase).
Physical limits (disk, loopback TCP) are measured once per repetition in the same run.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "scenario"))

from harness import procs  # noqa: E402
from harness.kafka import KAFKA_VERSION, KafkaBroker  # noqa: E402
from harness.paths import kafka_tool  # noqa: E402
from harness.ports import free_port  # noqa: E402
from harness.weir import WeirBroker  # noqa: E402

from confluent_kafka import Consumer, Producer, TopicPartition  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

RECORD_SIZE = 1024
LINGER_MS = 5
MB = 1024 * 1024  # kafka-producer-perf-test's "MB/sec" is MiB/s; we use the same unit everywhere

# Settings that differ from each broker's defaults, per phase (reported in the table header).
WEIR_SETTINGS = {"fast": ["--dev (no fdatasync before acks=all)"], "durable": [], "latency": ["--dev"]}
KAFKA_OVERRIDES = {"broker": {}, "durable_topics": {"flush.messages": "1"}}
KAFKA_DURABLE_TOPIC = {"flush.messages": "1"}
# What the harness sets for a single-node KRaft Kafka (not performance-relevant, but non-default).
KAFKA_BASE_NOTE = ("KRaft combined mode, node.id=1, offsets/transaction/share-state topics RF=1, "
                   "group.initial.rebalance.delay.ms=0; -Xmx1G -Xms1G, G1 (kafka-server-start)")

# Every metric key the JSON carries per broker (the smoke test checks for all of them).
PRODUCE_CASES = [(p, a) for p in (1, 16) for a in ("1", "all")]


def produce_keys() -> list[str]:
    keys = []
    for tool in ("perf", "rdkafka"):
        for p, a in PRODUCE_CASES:
            keys += [f"produce_{tool}_p{p}_acks{a}_mbps", f"produce_{tool}_p{p}_acks{a}_rps"]
    return keys


METRIC_KEYS = produce_keys() + [
    "durable_perf_p1_acksall_mbps", "durable_perf_p1_acksall_rps",
    "durable_perf_p16_acksall_mbps", "durable_perf_p16_acksall_rps",
    "sync_produce_defaults_rps", "sync_produce_defaults_p50_ms", "sync_produce_defaults_p99_ms",
    "sync_flush_queue_p50_ms", "sync_flush_queue_p99_ms", "sync_flush_cycle_p50_ms", "sync_flush_cycle_p99_ms",
    "consume_rdkafka_p16_mbps", "consume_rdkafka_p16_rps",
    "consume_perf_p16_mbps", "consume_perf_p16_rps",
    "consume_rdkafka_group_p16_mbps", "consume_rdkafka_group_p16_rps",
    "consume_rdkafka_group_client_cpu_s_per_gb", "consume_perf_client_cpu_s_per_gb",
    "group_assign_1_ms", "group_assign_10_ms", "group_assign_50_ms",
    "latency_p50_ms", "latency_p99_ms", "latency_p999_ms", "latency_rate_rps",
    "latency_steady_p50_ms", "latency_steady_p99_ms", "latency_steady_p999_ms",
    "latency_rdkafka_p50_ms", "latency_rdkafka_p99_ms", "latency_rdkafka_p999_ms",
    "e2e_latency_p50_ms", "e2e_latency_p99_ms", "e2e_latency_p999_ms",
    "latency_l0_p50_ms", "latency_l0_p99_ms", "latency_l0_p999_ms", "e2e_l0_p99_ms", "e2e_l0_p999_ms",
    "restart_clean_s", "restart_kill9_s", "restart_data_gib",
    "cpu_s_per_gb", "consume_cpu_s_per_gb", "consume_client_cpu_s_per_gb", "rss_idle_mib", "rss_peak_mib", "startup_to_first_produce_s",
]
LIMIT_KEYS = ["disk_seq_write_1m_mbps", "disk_fdatasync_16k_mbps", "disk_fdatasync_16k_iops",
              "loopback_tcp_mbps"]


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


# ------------------------------------------------------------------------------------ /proc
def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    # fields[0] is state (field 3); utime and stime are fields 14 and 15
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def status_kib(pid: int, key: str) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise KeyError(key)


# ------------------------------------------------------------------------------ physical limits
def disk_limits(directory: Path, total_bytes: int, sync_seconds: float) -> dict:
    path = directory / "disk-probe.bin"
    block = os.urandom(MB)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        t0 = time.perf_counter()
        written = 0
        while written < total_bytes:
            written += os.write(fd, block)
        os.fdatasync(fd)
        seq = written / (time.perf_counter() - t0) / MB
    finally:
        os.close(fd)
        path.unlink()
    small = block[: 16 * 1024]
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        n = 0
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < sync_seconds:
            os.write(fd, small)
            os.fdatasync(fd)
            n += 1
        dt = time.perf_counter() - t0
    finally:
        os.close(fd)
        path.unlink()
    return {"disk_seq_write_1m_mbps": seq, "disk_fdatasync_16k_mbps": n * len(small) / dt / MB,
            "disk_fdatasync_16k_iops": n / dt}


def _loopback_sender(port: int, seconds: float) -> None:
    buf = b"\0" * MB
    with socket.create_connection(("127.0.0.1", port)) as s:
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            s.sendall(buf)


def loopback_limit(seconds: float) -> dict:
    """One TCP stream over 127.0.0.1: a forked sender process, this process receives."""
    with socket.socket() as srv:
        srv.bind(("127.0.0.1", 0))
        srv.listen(1)
        port = srv.getsockname()[1]
        pid = os.fork()
        if pid == 0:  # child: send, then exit without running parent cleanup
            try:
                srv.close()
                _loopback_sender(port, seconds)
            finally:
                os._exit(0)
        conn, _ = srv.accept()
        buf = bytearray(MB)
        total = 0
        t0 = time.perf_counter()
        with conn:
            while True:
                n = conn.recv_into(buf)
                if n == 0:
                    break
                total += n
        dt = time.perf_counter() - t0
        os.waitpid(pid, 0)
    return {"loopback_tcp_mbps": total / dt / MB}


# ------------------------------------------------------------------------------------ clients
def create_topic(bootstrap: str, name: str, partitions: int, config: dict | None = None) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    fut = admin.create_topics([NewTopic(name, num_partitions=partitions, replication_factor=1,
                                        config=config or {})])
    fut[name].result(timeout=60)
    # Wait until every partition has a leader in Metadata (Kafka needs a moment after creation).
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        md = admin.list_topics(name, timeout=10)
        t = md.topics.get(name)
        if t and t.error is None and len(t.partitions) == partitions and all(
                p.leader >= 0 for p in t.partitions.values()):
            return
        time.sleep(0.1)
    raise RuntimeError(f"topic {name} has no leaders after 60s")


PERF_RE = re.compile(
    r"(\d+) records sent, ([\d.]+) records/sec \(([\d.]+) MB/sec\), ([\d.]+) ms avg latency, "
    r"([\d.]+) ms max latency, (\d+) ms 50th, (\d+) ms 95th, (\d+) ms 99th, (\d+) ms 99.9th")


STEADY_RE = re.compile(
    r"(\d+) steady state records sent, ([\d.]+) records/sec \(([\d.]+) MB/sec\), ([\d.]+) ms avg latency, "
    r"([\d.]+) ms max latency, (\d+) ms 50th, (\d+) ms 95th, (\d+) ms 99th, (\d+) ms 99.9th")


def perf_test(bootstrap: str, topic: str, records: int, acks: str, throughput: int = -1,
              warmup: int = 0) -> dict:
    """kafka-producer-perf-test. With `warmup` > 0 it sends that many records first
    (`--warmup-records`) and `records` more; the result then also has steady_* keys: the
    percentiles of the last `records` only (the client's start-up, its first metadata and
    the JVM's warm-up left out)."""
    argv = [str(kafka_tool("kafka-producer-perf-test")), "--topic", topic,
            "--num-records", str(records + warmup), "--record-size", str(RECORD_SIZE),
            "--throughput", str(throughput),
            "--producer-props", f"bootstrap.servers={bootstrap}", f"acks={acks}",
            f"linger.ms={LINGER_MS}"]
    if warmup > 0:
        argv += ["--warmup-records", str(warmup)]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=900)
    matches = PERF_RE.findall(out.stdout)
    if out.returncode != 0 or not matches:
        raise RuntimeError(f"kafka-producer-perf-test failed ({out.returncode}):\n"
                           f"{out.stdout[-2000:]}\n{out.stderr[-2000:]}")
    m = matches[-1]  # the final summary line
    sent = int(m[0])
    if sent != records + warmup:
        raise RuntimeError(f"perf-test sent {sent} of {records + warmup} records")
    res = {"records": sent, "rps": float(m[1]), "mbps": float(m[2]), "avg_ms": float(m[3]),
           "max_ms": float(m[4]), "p50_ms": float(m[5]), "p95_ms": float(m[6]),
           "p99_ms": float(m[7]), "p999_ms": float(m[8])}
    if warmup > 0:
        steady = STEADY_RE.findall(out.stdout)
        if not steady or int(steady[-1][0]) != records:
            raise RuntimeError(f"perf-test printed no steady-state summary of {records} records:\n"
                               f"{out.stdout[-2000:]}")
        st = steady[-1]
        res.update(steady_p50_ms=float(st[5]), steady_p99_ms=float(st[7]), steady_p999_ms=float(st[8]))
    return res


DRIVER_SRC = ROOT / "bench" / "rdkafka_bench.cpp"
DRIVER = ROOT / "build" / "bench" / "rdkafka_bench"


def build_driver() -> Path:
    """bench/rdkafka_bench.cpp over Debian's librdkafka-dev (installed by make test-deps)."""
    if not DRIVER.exists() or DRIVER.stat().st_mtime < DRIVER_SRC.stat().st_mtime:
        DRIVER.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["g++", "-O2", "-std=c++20", "-Wall", "-Wextra", "-Werror", str(DRIVER_SRC),
                        "-lrdkafka", "-lpthread", "-o", str(DRIVER)], check=True)
    return DRIVER


def driver(mode: str, bootstrap: str, topic: str, *args, timeout: float = 900) -> dict:
    argv = [str(DRIVER), mode, "-b", bootstrap, "-t", topic, *map(str, args)]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    if out.returncode != 0:
        raise RuntimeError(f"rdkafka_bench {mode} failed ({out.returncode}): {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def rdkafka_produce(bootstrap: str, topic: str, records: int, acks: str) -> dict:
    """librdkafka producer (bench/rdkafka_bench.cpp): same settings as the perf test."""
    return driver("produce", bootstrap, topic, "-n", records, "-s", RECORD_SIZE, "-a", acks, "-l", LINGER_MS)


CONSUMER_PERF_RE = re.compile(r"^[^,]+, [^,]+, ([\d.]+), ([\d.]+), (\d+), ([\d.]+),", re.M)


def sync_produce(bootstrap: str, topic: str, records: int) -> dict:
    """franz-go's TestClient_Produce shape (tests/go/syncproduce): 50 goroutines, ProduceSync,
    one partition, MaxBufferedBytes(5000), the client's defaults otherwise."""
    tool = ROOT / ".cache" / "bin" / "syncproduce"
    if not tool.exists():
        subprocess.run([str(ROOT / "scripts" / "setup-go.sh")], check=True)
    out = subprocess.run([str(tool), "-bootstrap", bootstrap, "-topic", topic, "-records", str(records)],
                         capture_output=True, text=True, timeout=900)
    if out.returncode != 0:
        raise RuntimeError(f"syncproduce failed: {out.stderr[-2000:]}")
    return json.loads(out.stdout)


def consumer_perf_test(bootstrap: str, topic: str, records: int) -> dict:
    """kafka-consumer-perf-test: consumes `records` in a new group (FindCoordinator, JoinGroup,
    SyncGroup, OffsetFetch, Fetch sessions) and reports MB and records per second."""
    argv = [str(kafka_tool("kafka-consumer-perf-test")), "--bootstrap-server", bootstrap,
            "--topic", topic, "--num-records", str(records), "--group", f"perf-{time.monotonic_ns()}",
            "--timeout", "60000"]
    u0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(argv, capture_output=True, text=True, timeout=900)
    u1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    m = CONSUMER_PERF_RE.search(out.stdout)
    if out.returncode != 0 or not m:
        raise RuntimeError(f"kafka-consumer-perf-test failed ({out.returncode}):\n"
                           f"{out.stdout[-2000:]}\n{out.stderr[-2000:]}")
    if int(m.group(3)) < records:
        raise RuntimeError(f"consumer-perf-test read {m.group(3)} of {records} records")
    cpu = u1.ru_utime + u1.ru_stime - u0.ru_utime - u0.ru_stime  # the tool's JVM, start to exit
    return {"records": int(m.group(3)), "mbps": float(m.group(2)), "rps": float(m.group(4)),
            "client_cpu": cpu / (int(m.group(3)) * RECORD_SIZE / 1e9)}


def group_assign_ms(bootstrap: str, topic: str, members: int) -> float:
    """Members subscribe one after another; time from the last one's subscribe() to every member
    holding a non-empty assignment (the topic has at least `members` partitions)."""
    group = f"assign-{members}-{time.monotonic_ns()}"
    consumers = []
    assigned: set[int] = set()
    try:
        for i in range(members):
            c = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False,
                          "session.timeout.ms": 30000, "heartbeat.interval.ms": 1000})
            consumers.append(c)
        for i, c in enumerate(consumers):
            c.subscribe([topic], on_assign=lambda cons, parts, i=i: assigned.add(i) if parts else None)
        t0 = time.perf_counter()
        deadline = time.monotonic() + 120
        while len(assigned) < members and time.monotonic() < deadline:
            for c in consumers:
                c.poll(0.01)
        if len(assigned) < members:
            raise RuntimeError(f"only {len(assigned)} of {members} members were assigned")
        return (time.perf_counter() - t0) * 1000
    finally:
        # Serve what is still queued for each member (an assignment callback of one that was
        # done early) before closing: once, close() of such a member never returned.
        for _ in range(3):
            for c in consumers:
                c.poll(0.01)
        for c in consumers:
            c.close()


def rdkafka_consume(bootstrap: str, topic: str, partitions: int, expect: int, group: bool = False) -> dict:
    """Read `expect` records from every partition's offset 0: assign() (no consumer group), or
    subscribe() in a new group. The clock stops when the last record arrives. client_cpu is this
    process's CPU per GB (the consumer runs in it; the bench itself is idle meanwhile), from
    creating the consumer to closing it."""
    cpu0 = time.process_time()
    c = Consumer({"bootstrap.servers": bootstrap,
                  "group.id": f"weir-bench-{time.monotonic_ns()}" if group else "weir-bench-unused",
                  "enable.auto.commit": False, "fetch.max.bytes": 52428800, "auto.offset.reset": "earliest"})
    try:
        if group:
            c.subscribe([topic])
        else:
            c.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
        t0 = time.perf_counter()
        count, nbytes = _consume_records(c, expect)
        dt = time.perf_counter() - t0
    finally:
        c.close()
    if count != expect:
        raise RuntimeError(f"consumed {count} records, expected {expect}")
    cpu = time.process_time() - cpu0
    return {"records": count, "rps": count / dt, "mbps": nbytes / dt / MB,
            "client_cpu": cpu / (count * RECORD_SIZE / 1e9)}


def _consume_records(c, expect: int, seconds: float = 300) -> tuple[int, int]:
    """consume() until `expect` records arrived: (records, value bytes). consume() returns when it
    holds num_messages or its timeout passed, so it is never asked for more than the records still
    to come: the last call returns with the last record, not a timeout (1 s) later."""
    count = 0
    nbytes = 0
    deadline = time.monotonic() + seconds
    while count < expect and time.monotonic() < deadline:
        for m in c.consume(num_messages=min(10000, expect - count), timeout=1.0):
            err = m.error()
            if err is not None:
                raise RuntimeError(f"consume error: {err}")
            count += 1
            nbytes += len(m.value())
    return count, nbytes


def restart_times(b, cfg) -> dict:
    """Fill a topic with cfg.restart_bytes, then: clean stop and start, and kill -9 and start;
    each time the seconds from process start to the first acknowledged produce."""
    create_topic(b.bootstrap, "restart", 8)
    n = max(1, cfg.restart_bytes // RECORD_SIZE)
    driver("produce", b.bootstrap, "restart", "-n", n, "-s", RECORD_SIZE, "-a", "1", "-l", LINGER_MS,
           timeout=3600)
    out = {"restart_data_gib": n * RECORD_SIZE / 1024 ** 3}
    b.stop(check=False)
    b.start()
    out["restart_clean_s"] = first_produce(b, "restart")
    driver("produce", b.bootstrap, "restart", "-n", min(n, 100_000), "-s", RECORD_SIZE, "-a", "1", "-l", LINGER_MS)
    b.kill()
    b.start()
    out["restart_kill9_s"] = first_produce(b, "restart")
    return out


def first_produce(broker, topic: str) -> float:
    """Seconds from process start until one record has been acknowledged (acks=all)."""
    p = Producer({"bootstrap.servers": broker.bootstrap, "acks": "all", "linger.ms": 0,
                  "message.timeout.ms": 60000})
    result = []
    p.produce(topic, b"hello", on_delivery=lambda err, msg: result.append(err))
    p.flush(60)
    if not result or result[0] is not None:
        raise RuntimeError(f"first produce failed: {result}")
    return time.monotonic() - broker.started_at


# ------------------------------------------------------------------------------------ brokers
WEIR_BIN: list = [None]


def make_broker(kind: str, durable: bool, workdir: Path):
    if kind == "weir":
        # The durable instance serves its metrics (the flush-cycle histograms of the sync row).
        extra = ["--set", f"metrics.listener=127.0.0.1:{free_port()}"] if durable else ["--dev"]
        return WeirBroker(workdir, extra_args=extra, binary=WEIR_BIN[0])
    return KafkaBroker(workdir)


def weir_histogram(b, name: str) -> dict[float, float]:
    """Cumulative bucket counts {le: count} of a weir histogram from its metrics endpoint."""
    port = next(a.split(":")[-1] for a in b.extra_args if a.startswith("metrics.listener="))
    with socket.create_connection(("127.0.0.1", int(port)), timeout=10) as s:
        s.sendall(b"GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n")
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    out = {}
    for line in data.decode().splitlines():
        m = re.match(rf'{name}_bucket{{le="([^"]+)"}} (\S+)', line)
        if m:
            out[float("inf") if m.group(1) == "+Inf" else float(m.group(1))] = float(m.group(2))
    return out


def histogram_quantile(before: dict, after: dict, q: float) -> float | None:
    """The q-quantile (upper bucket bound, seconds) of what a histogram observed between two scrapes."""
    bounds = sorted(after)
    counts = [after[le] - before.get(le, 0.0) for le in bounds]
    if not counts or counts[-1] <= 0:
        return None
    for le, c in zip(bounds, counts):
        if c >= q * counts[-1]:
            return le
    return bounds[-1]


def run_phase(kind: str, phases: tuple[str, ...], workdir: Path, cfg: argparse.Namespace,
              latency_rate: int | None = None) -> dict:
    """Start one broker, run the given phases against it in order, stop it.

    weir runs the durable phase on an instance of its own (default settings, fdatasync on
    acks=all) and the others with --dev; Kafka runs every phase on one instance with default
    settings, the durable phase on topics created with flush.messages=1.
    """
    durable = phases in (("durable",), ("restart",))  # restart: weir's defaults, as users run it
    b = make_broker(kind, durable and kind == "weir", workdir)
    log(f"{kind}/{'+'.join(phases)}: starting")
    if isinstance(b, KafkaBroker):
        b._prepare()  # format storage before the start-up clock runs (kafka-storage is a setup step)
        b.start()
    else:
        b.start()
    r: dict = {}
    try:
        pid = b.pid
        create_topic(b.bootstrap, "startup", 1)
        r["startup_to_first_produce_s"] = first_produce(b, "startup")
        r["answered"] = True
        log(f"{kind}: first produce after {r['startup_to_first_produce_s']:.2f}s")
        for phase in phases:
            run_one(kind, phase, b, pid, r, cfg, latency_rate)
    finally:
        rc = b.stop(check=False)
        r.setdefault("exit_codes", []).append(rc)
        if rc not in b.clean_exit_codes:
            r["answered"] = False
            log(f"{kind}: unclean exit {rc}; log {b.log_path}")
        if not cfg.keep:
            shutil.rmtree(b.data_dir, ignore_errors=True)
    return r


def run_one(kind, phase, b, pid, r, cfg, latency_rate) -> None:
    if phase == "fast":
        time.sleep(1.0)
        r["rss_idle_mib"] = status_kib(pid, "VmRSS") / 1024
        cpu = 0.0
        nbytes = 0
        for p, a in PRODUCE_CASES:
            t = f"perf-p{p}-acks{a}"
            create_topic(b.bootstrap, t, p)
            c0 = cpu_seconds(pid)
            res = perf_test(b.bootstrap, t, cfg.records, a)
            cpu += cpu_seconds(pid) - c0
            nbytes += res["records"] * RECORD_SIZE
            r[f"produce_perf_p{p}_acks{a}_mbps"] = res["mbps"]
            r[f"produce_perf_p{p}_acks{a}_rps"] = res["rps"]
            log(f"{kind}/{phase}: perf-test p{p} acks={a}: {res['mbps']:.1f} MiB/s")
        r["cpu_s_per_gb"] = cpu / (nbytes / 1e9)
        for p, a in PRODUCE_CASES:
            t = f"rdk-p{p}-acks{a}"
            create_topic(b.bootstrap, t, p)
            res = rdkafka_produce(b.bootstrap, t, cfg.rdkafka_records, a)
            r[f"produce_rdkafka_p{p}_acks{a}_mbps"] = res["mbps"]
            r[f"produce_rdkafka_p{p}_acks{a}_rps"] = res["rps"]
            log(f"{kind}/{phase}: rdkafka p{p} acks={a}: {res['mbps']:.1f} MiB/s")
        # A consume run is short (the 300 MB of the perf-test p16 topic): three of them, the median
        # kept, with the CPU the broker and the client spent.
        runs = []
        for _ in range(3):
            c0 = cpu_seconds(pid)
            u0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            res = driver("consume", b.bootstrap, "perf-p16-acks1", "-p", 16, "-n", cfg.records)
            u1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            gb = res["records"] * RECORD_SIZE / 1e9
            res["broker_cpu"] = (cpu_seconds(pid) - c0) / gb
            res["client_cpu"] = (u1.ru_utime + u1.ru_stime - u0.ru_utime - u0.ru_stime) / gb
            runs.append(res)
        res = sorted(runs, key=lambda x: x["mbps"])[1]
        r["consume_rdkafka_p16_mbps"] = res["mbps"]
        r["consume_rdkafka_p16_rps"] = res["rps"]
        r["consume_cpu_s_per_gb"] = median([x["broker_cpu"] for x in runs])
        r["consume_client_cpu_s_per_gb"] = median([x["client_cpu"] for x in runs])
        log(f"{kind}/{phase}: consume p16: {res['mbps']:.1f} MiB/s; CPU s/GB broker "
            f"{r['consume_cpu_s_per_gb']:.2f}, client {r['consume_client_cpu_s_per_gb']:.2f}")
        # subscribe(): three runs in new groups too (a run in which librdkafka's queue fills up
        # waits out its fetch.queue.backoff.ms, 1 s, against either broker), the median kept.
        runs = [rdkafka_consume(b.bootstrap, "perf-p16-acks1", 16, cfg.records, group=True) for _ in range(3)]
        res = sorted(runs, key=lambda x: x["mbps"])[1]
        r["consume_rdkafka_group_p16_mbps"] = res["mbps"]
        r["consume_rdkafka_group_p16_rps"] = res["rps"]
        r["consume_rdkafka_group_client_cpu_s_per_gb"] = median([x["client_cpu"] for x in runs])
        log(f"{kind}/{phase}: consume p16 in a group: {res['mbps']:.1f} MiB/s; "
            f"client CPU s/GB {r['consume_rdkafka_group_client_cpu_s_per_gb']:.2f}")
        res = consumer_perf_test(b.bootstrap, "perf-p16-acks1", cfg.records)
        r["consume_perf_p16_mbps"] = res["mbps"]
        r["consume_perf_p16_rps"] = res["rps"]
        r["consume_perf_client_cpu_s_per_gb"] = res["client_cpu"]
        log(f"{kind}/{phase}: consumer-perf-test p16: {res['mbps']:.1f} MiB/s; client CPU s/GB {res['client_cpu']:.2f}")
        create_topic(b.bootstrap, "assign-50", 50)
        for n in (1, 10, 50):
            r[f"group_assign_{n}_ms"] = group_assign_ms(b.bootstrap, "assign-50", n)
            log(f"{kind}/{phase}: group of {n}: all assigned {r[f'group_assign_{n}_ms']:.0f} ms after the last join")
        r["rss_peak_mib"] = status_kib(pid, "VmHWM") / 1024
    elif phase == "durable":
        for p in (1, 16):
            t = f"durable-p{p}"
            create_topic(b.bootstrap, t, p, KAFKA_DURABLE_TOPIC if kind == "kafka" else None)
            res = perf_test(b.bootstrap, t, cfg.durable_records, "all")
            r[f"durable_perf_p{p}_acksall_mbps"] = res["mbps"]
            r[f"durable_perf_p{p}_acksall_rps"] = res["rps"]
            log(f"{kind}/{phase}: perf-test p{p} acks=all: {res['mbps']:.1f} MiB/s")
        # Default against default: weir fdatasyncs before answering, Kafka (a topic of its own
        # defaults) does not.
        create_topic(b.bootstrap, "sync-defaults", 1)
        hists = ("weir_flush_queue_seconds", "weir_flush_cycle_seconds")
        before = {h: weir_histogram(b, h) for h in hists} if kind == "weir" else {}
        res = sync_produce(b.bootstrap, "sync-defaults", cfg.sync_records)
        r.update(sync_produce_defaults_rps=res["records_per_s"], sync_produce_defaults_p50_ms=res["p50_ms"],
                 sync_produce_defaults_p99_ms=res["p99_ms"])
        log(f"{kind}/{phase}: 50 synchronous producers, defaults: {res['records_per_s']:.0f} rec/s, "
            f"ack p50 {res['p50_ms']:.2f} p99 {res['p99_ms']:.2f} ms")
        if kind == "weir":
            # weir's side of each acks=all produce: the wait for a running cycle, and its own cycle
            # (bucket upper bounds: 1-2-5 steps).
            after = {h: weir_histogram(b, h) for h in hists}
            for key, h in (("sync_flush_queue", hists[0]), ("sync_flush_cycle", hists[1])):
                for q, tag in ((0.5, "p50"), (0.99, "p99")):
                    v = histogram_quantile(before[h], after[h], q)
                    r[f"{key}_{tag}_ms"] = None if v is None else v * 1000
            log(f"{kind}/{phase}: flush queue p50/p99 <= {r['sync_flush_queue_p50_ms']}/"
                f"{r['sync_flush_queue_p99_ms']} ms, cycle p50/p99 <= {r['sync_flush_cycle_p50_ms']}/"
                f"{r['sync_flush_cycle_p99_ms']} ms")
    elif phase == "latency":
        if latency_rate is None:  # half of this broker's max (only Kafka's run gets here)
            latency_rate = max(1, int(r["produce_perf_p1_acksall_rps"] / 2))
        create_topic(b.bootstrap, "latency", 1)
        n = max(100, int(latency_rate * cfg.latency_seconds))
        # The first seconds of a perf-test run hold the JVM client's own start (metadata, first
        # connection, JIT): records queue in the client meanwhile, and at 10 s they alone make the
        # p99. The run's total keeps them (as before); the steady-state figures leave the first
        # latency_warmup_seconds of records out, on both brokers alike.
        warmup = max(1, int(latency_rate * cfg.latency_warmup_seconds))
        res = perf_test(b.bootstrap, "latency", n, "all", throughput=latency_rate, warmup=warmup)
        r.update(latency_p50_ms=res["p50_ms"], latency_p99_ms=res["p99_ms"],
                 latency_p999_ms=res["p999_ms"], latency_rate_rps=latency_rate,
                 latency_steady_p50_ms=res["steady_p50_ms"], latency_steady_p99_ms=res["steady_p99_ms"],
                 latency_steady_p999_ms=res["steady_p999_ms"])
        log(f"{kind}/{phase}: {latency_rate} rec/s: p50 {res['p50_ms']} p99 {res['p99_ms']} "
            f"p99.9 {res['p999_ms']} ms; after {warmup} warm-up records: p50 {res['steady_p50_ms']} "
            f"p99 {res['steady_p99_ms']} p99.9 {res['steady_p999_ms']} ms")
        # The same rate with the librdkafka driver: produce latency and end to end (send to consume).
        create_topic(b.bootstrap, "latency-e2e", 1)
        res = driver("latency", b.bootstrap, "latency-e2e", "-r", latency_rate, "-d", cfg.latency_seconds,
                     "-s", RECORD_SIZE, "-a", "all", "-l", LINGER_MS)
        r.update(latency_rdkafka_p50_ms=res["produce_p50_ms"], latency_rdkafka_p99_ms=res["produce_p99_ms"],
                 latency_rdkafka_p999_ms=res["produce_p999_ms"], e2e_latency_p50_ms=res["e2e_p50_ms"],
                 e2e_latency_p99_ms=res["e2e_p99_ms"], e2e_latency_p999_ms=res["e2e_p999_ms"])
        log(f"{kind}/{phase}: librdkafka at {latency_rate} rec/s: produce p99 {res['produce_p99_ms']:.1f} ms, "
            f"end to end p50 {res['e2e_p50_ms']:.1f} p99 {res['e2e_p99_ms']:.1f} p99.9 {res['e2e_p999_ms']:.1f} ms")
        # linger.ms=5 puts a 5 ms floor under both brokers' numbers; with linger.ms=0 what remains
        # is mostly the broker's own time.
        create_topic(b.bootstrap, "latency-e2e-l0", 1)
        res = driver("latency", b.bootstrap, "latency-e2e-l0", "-r", latency_rate, "-d", cfg.latency_seconds,
                     "-s", RECORD_SIZE, "-a", "all", "-l", 0)
        r.update(latency_l0_p50_ms=res["produce_p50_ms"], latency_l0_p99_ms=res["produce_p99_ms"],
                 latency_l0_p999_ms=res["produce_p999_ms"], e2e_l0_p99_ms=res["e2e_p99_ms"],
                 e2e_l0_p999_ms=res["e2e_p999_ms"])
        log(f"{kind}/{phase}: librdkafka linger.ms=0: produce p50 {res['produce_p50_ms']:.2f} "
            f"p99 {res['produce_p99_ms']:.2f} p99.9 {res['produce_p999_ms']:.2f} ms, end to end "
            f"p99 {res['e2e_p99_ms']:.2f} ms")
    elif phase == "restart":
        res = restart_times(b, cfg)
        r.update(res)
        log(f"{kind}/{phase}: {res['restart_data_gib']:.2f} GiB: first produce {res['restart_clean_s']:.2f} s "
            f"after a clean stop, {res['restart_kill9_s']:.2f} s after kill -9")


# ------------------------------------------------------------------------------------ report
def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def machine() -> dict:
    with open("/proc/meminfo") as f:
        mem_kib = int(f.readline().split()[1])
    cpu_model = ""
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu_model = line.split(":", 1)[1].strip()
                break
    try:
        df = subprocess.run(["df", "-h", "--output=source,fstype,size", "/tmp"], capture_output=True,
                            text=True).stdout.strip().splitlines()[-1]
    except Exception:
        df = "?"
    java = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines()
    return {"nproc": os.cpu_count(), "cpu": cpu_model, "mem_gib": round(mem_kib / 1024 / 1024, 1),
            "disk": df, "kernel": platform.release(), "python": platform.python_version(),
            "java": java[0] if java else "?",
            "loadavg_at_end": [round(x, 2) for x in os.getloadavg()]}


LABELS = [
    ("produce_perf_p1_acks1_mbps", "produce, perf-test, 1 partition, acks=1", "MiB/s", True),
    ("produce_perf_p1_acks1_rps", "produce, perf-test, 1 partition, acks=1", "rec/s", True),
    ("produce_perf_p1_acksall_mbps", "produce, perf-test, 1 partition, acks=all", "MiB/s", True),
    ("produce_perf_p16_acks1_mbps", "produce, perf-test, 16 partitions, acks=1", "MiB/s", True),
    ("produce_perf_p16_acks1_rps", "produce, perf-test, 16 partitions, acks=1", "rec/s", True),
    ("produce_perf_p16_acksall_mbps", "produce, perf-test, 16 partitions, acks=all", "MiB/s", True),
    ("produce_rdkafka_p1_acks1_mbps", "produce, librdkafka (C driver), 1 partition, acks=1", "MiB/s", True),
    ("produce_rdkafka_p1_acksall_mbps", "produce, librdkafka (C driver), 1 partition, acks=all", "MiB/s", True),
    ("produce_rdkafka_p16_acks1_mbps", "produce, librdkafka (C driver), 16 partitions, acks=1", "MiB/s", True),
    ("produce_rdkafka_p16_acks1_rps", "produce, librdkafka (C driver), 16 partitions, acks=1", "rec/s", True),
    ("produce_rdkafka_p16_acksall_mbps", "produce, librdkafka (C driver), 16 partitions, acks=all", "MiB/s", True),
    ("consume_rdkafka_p16_mbps", "consume, librdkafka (C driver, assign), 16 partitions", "MiB/s", True),
    ("consume_rdkafka_p16_rps", "consume, librdkafka (C driver, assign), 16 partitions", "rec/s", True),
    ("consume_perf_p16_mbps", "consume, kafka-consumer-perf-test (group), 16 partitions", "MiB/s", True),
    ("consume_perf_p16_rps", "consume, kafka-consumer-perf-test (group), 16 partitions", "rec/s", True),
    ("consume_perf_client_cpu_s_per_gb", "the same: the tool's own CPU per GB (its JVM)", "CPU s/GB", False),
    ("consume_rdkafka_group_p16_mbps", "consume, librdkafka (Python driver, subscribe), 16 partitions", "MiB/s", True),
    ("consume_rdkafka_group_client_cpu_s_per_gb", "the same: the consumer process's CPU per GB", "CPU s/GB", False),
    ("group_assign_1_ms", "group: last join to every member assigned, 1 member", "ms", False),
    ("group_assign_10_ms", "group: last join to every member assigned, 10 members", "ms", False),
    ("group_assign_50_ms", "group: last join to every member assigned, 50 members", "ms", False),
    ("durable_perf_p1_acksall_mbps", "durable produce, perf-test, 1 partition, acks=all", "MiB/s", True),
    ("durable_perf_p16_acksall_mbps", "durable produce, perf-test, 16 partitions, acks=all", "MiB/s", True),
    ("sync_produce_defaults_rps",
     "50 synchronous producers, 1 partition, weir default vs Kafka default (franz-go TestClient_Produce shape)",
     "rec/s", True),
    ("sync_produce_defaults_p50_ms", "the same: acknowledgement latency p50", "ms", False),
    ("sync_produce_defaults_p99_ms", "the same: acknowledgement latency p99", "ms", False),
    ("sync_flush_queue_p50_ms", "the same, weir only: wait for a running flush cycle p50 (bucket bound)", "ms", False),
    ("sync_flush_queue_p99_ms", "the same, weir only: wait for a running flush cycle p99 (bucket bound)", "ms", False),
    ("sync_flush_cycle_p50_ms", "the same, weir only: its own flush cycle p50 (bucket bound)", "ms", False),
    ("sync_flush_cycle_p99_ms", "the same, weir only: its own flush cycle p99 (bucket bound)", "ms", False),
    ("latency_p50_ms", "produce latency p50 (perf-test, acks=all, 1 partition, fixed rate)", "ms", False),
    ("latency_p99_ms", "produce latency p99", "ms", False),
    ("latency_p999_ms", "produce latency p99.9", "ms", False),
    ("latency_steady_p50_ms", "produce latency p50 (perf-test, after its warm-up records)", "ms", False),
    ("latency_steady_p99_ms", "produce latency p99 (perf-test, after its warm-up records)", "ms", False),
    ("latency_steady_p999_ms", "produce latency p99.9 (perf-test, after its warm-up records)", "ms", False),
    ("latency_rdkafka_p50_ms", "produce latency p50 (librdkafka C driver, same rate)", "ms", False),
    ("latency_rdkafka_p99_ms", "produce latency p99 (librdkafka C driver)", "ms", False),
    ("latency_rdkafka_p999_ms", "produce latency p99.9 (librdkafka C driver)", "ms", False),
    ("e2e_latency_p50_ms", "end-to-end latency p50 (send to consume, librdkafka, same rate)", "ms", False),
    ("e2e_latency_p99_ms", "end-to-end latency p99", "ms", False),
    ("e2e_latency_p999_ms", "end-to-end latency p99.9", "ms", False),
    ("latency_l0_p50_ms", "produce latency p50 (librdkafka, linger.ms=0, same rate)", "ms", False),
    ("latency_l0_p99_ms", "produce latency p99 (librdkafka, linger.ms=0)", "ms", False),
    ("latency_l0_p999_ms", "produce latency p99.9 (librdkafka, linger.ms=0)", "ms", False),
    ("e2e_l0_p99_ms", "end-to-end latency p99 (librdkafka, linger.ms=0)", "ms", False),
    ("e2e_l0_p999_ms", "end-to-end latency p99.9 (librdkafka, linger.ms=0)", "ms", False),
    ("cpu_s_per_gb", "broker CPU per GB ingested (perf-test produce runs)", "CPU s/GB", False),
    ("consume_cpu_s_per_gb", "broker CPU per GB consumed (C driver consume runs)", "CPU s/GB", False),
    ("consume_client_cpu_s_per_gb", "the C driver consumer's own CPU per GB (same runs)", "CPU s/GB", False),
    ("rss_idle_mib", "RSS idle (1 s after first produce)", "MiB", False),
    ("rss_peak_mib", "peak RSS under load (VmHWM)", "MiB", False),
    ("startup_to_first_produce_s", "process start to first acknowledged produce", "s", False),
    ("restart_data_gib", "data in the log dir for the restart runs", "GiB", True),
    ("restart_clean_s", "restart after a clean stop: start to first acknowledged produce", "s", False),
    ("restart_kill9_s", "restart after kill -9: start to first acknowledged produce", "s", False),
]

GOALS = [  # (key, op, target ratio weir/kafka, text)
    ("produce_perf_p16_acks1_mbps", ">=", 1.5, "produce throughput >= 1.5x"),
    ("consume_rdkafka_p16_mbps", ">=", 1.5, "consume throughput >= 1.5x"),
    ("consume_rdkafka_group_p16_mbps", ">=", 1.2, "consume with subscribe() >= 1.2x (issue 18)"),
    ("consume_client_cpu_s_per_gb", "<=", 1.0, "the C consumer's CPU per GB <= Kafka's (issue 18)"),
    ("consume_rdkafka_group_client_cpu_s_per_gb", "<=", 1.0, "the subscribe() consumer's CPU per GB <= Kafka's (issue 18)"),
    ("latency_p99_ms", "<=", 1 / 3, "p99 produce latency <= 1/3 (perf-test)"),
    ("latency_steady_p99_ms", "<=", 1 / 2, "p99 produce latency after warm-up <= 1/2 (perf-test, issue 18)"),
    ("e2e_latency_p99_ms", "<=", 1 / 2, "end-to-end p99 <= 1/2 (librdkafka, linger.ms=5, issue 18)"),
    ("e2e_latency_p999_ms", "<=", 1 / 2, "end-to-end p99.9 <= 1/2 (librdkafka, linger.ms=5, issue 18)"),
    ("e2e_l0_p99_ms", "<=", 1 / 2, "end-to-end p99 <= 1/2 (librdkafka, linger.ms=0, issue 18)"),
    ("e2e_l0_p999_ms", "<=", 1 / 2, "end-to-end p99.9 <= 1/2 (librdkafka, linger.ms=0, issue 18)"),
    ("latency_rdkafka_p99_ms", "<=", 1 / 3, "p99 produce latency <= 1/3 (librdkafka)"),
    ("latency_l0_p99_ms", "<=", 1 / 3, "p99 produce latency <= 1/3 (librdkafka, linger.ms=0)"),
    ("cpu_s_per_gb", "<=", 0.5, "broker CPU per GB <= 1/2"),
    ("rss_peak_mib", "<=", 0.2, "peak RSS <= 1/5"),
    ("startup_to_first_produce_s", "<=", 0.1, "start-up to first produce <= 1/10"),
]


def fmt(x) -> str:
    if x is None:
        return "n/a"
    if abs(x) >= 100:
        return f"{x:,.0f}"
    if abs(x) >= 10:
        return f"{x:.1f}"
    return f"{x:.3g}" if abs(x) < 1 else f"{x:.2f}"


def summarise(runs: list[dict], limits: list[dict], cfg, argv: list[str], started: str) -> dict:
    med = {"weir": {}, "kafka": {}}
    for kind in ("weir", "kafka"):
        for k in METRIC_KEYS:
            med[kind][k] = median([r[kind].get(k) for r in runs])
    ratios = {k: (med["weir"][k] / med["kafka"][k]
                  if med["weir"][k] is not None and med["kafka"][k] else None) for k in METRIC_KEYS}
    lim = {k: median([l[k] for l in limits]) for k in LIMIT_KEYS}
    best = max((med["weir"][f"produce_{tool}_p{p}_acks{a}_mbps"] or 0)
               for tool in ("perf", "rdkafka") for p, a in PRODUCE_CASES)
    fractions = {
        "weir_best_produce_mbps": best,
        "of_disk_seq_write": best / lim["disk_seq_write_1m_mbps"] if lim["disk_seq_write_1m_mbps"] else None,
        "of_loopback_tcp": best / lim["loopback_tcp_mbps"] if lim["loopback_tcp_mbps"] else None,
        "weir_durable_p16_of_disk_fdatasync_16k":
            (med["weir"]["durable_perf_p16_acksall_mbps"] or 0) / lim["disk_fdatasync_16k_mbps"]
            if lim["disk_fdatasync_16k_mbps"] else None,
    }
    answered = all(r[k].get("answered") for r in runs for k in ("weir", "kafka"))
    return {
        "started": started, "command": " ".join(argv), "smoke": cfg.smoke,
        "repetitions": len(runs), "machine": machine(), "kafka_version": KAFKA_VERSION,
        "settings": {
            "records": cfg.records, "rdkafka_records": cfg.rdkafka_records,
            "durable_records": cfg.durable_records, "latency_seconds": cfg.latency_seconds,
            "latency_warmup_seconds": cfg.latency_warmup_seconds,
            "latency_rate_given": getattr(cfg, "latency_rate", None), "record_size": RECORD_SIZE, "linger_ms": LINGER_MS,
            "weir_non_default": WEIR_SETTINGS, "kafka_non_default": KAFKA_OVERRIDES,
            "kafka_base": KAFKA_BASE_NOTE,
        },
        "both_answered": answered,
        "median": med, "ratio": ratios, "limits": lim, "weir_fraction_of_limits": fractions,
        "runs": runs, "limit_runs": limits,
    }


def markdown(s: dict) -> str:
    m = s["machine"]
    st = s["settings"]
    out = [f"# weir vs Apache Kafka {s['kafka_version']} — {s['started']}", ""]
    out += [f"Machine: {m['nproc']} CPUs ({m['cpu']}), {m['mem_gib']} GiB RAM, disk {m['disk']}, "
            f"Linux {m['kernel']}, {m['java']}, Python {m['python']}; load average (1/5/15 min) "
            f"{m.get('loadavg_at_start')} at start, {m.get('loadavg_at_end')} at end "
            "(the machine is shared: other work ran during the benchmark when these exceed ~2).",
            f"Command: `{s['command']}` — medians of {s['repetitions']} repetition(s)"
            + (" (SMOKE RUN: counts too small to mean anything)" if s["smoke"] else "") + ".", ""]
    out += ["Settings (same for both brokers): "
            f"{st['record_size']} B records, linger.ms={st['linger_ms']}, "
            f"{st['records']:,} records per perf-test run, {st['rdkafka_records']:,} per librdkafka "
            f"run, {st['durable_records']:,} per durable run, latency run {st['latency_seconds']} s "
            + (f"at {st['latency_rate_given']:,} records/s (given)" if st.get("latency_rate_given") else
               "at half of Kafka's max (perf-test, 1 partition, acks=all) of the same repetition")
            + (f" (perf-test first sends {st['latency_warmup_seconds']} s of warm-up records at that rate; "
               "its 'after warm-up' rows leave them out)" if st.get("latency_warmup_seconds") else "")
            + ".", "",
            "Non-default broker settings:",
            "- weir: no-fsync phases `--dev`; durable phase defaults (fdatasync before answering acks=all).",
            "- Kafka: " + st["kafka_base"] + "; broker otherwise default; durable phase on topics "
            "created with `flush.messages=1` (same broker instance, after the no-fsync phase).",
            "", "The librdkafka numbers come from bench/rdkafka_bench.cpp over Debian's librdkafka "
            "(C API); the group consume row uses confluent-kafka (Python).",
            "Group timings use group.initial.rebalance.delay.ms=0 on both brokers (the harness's "
            "setting for both) and librdkafka consumers polled by one thread.", ""]
    out += ["| metric | unit | weir | Kafka | weir/Kafka | better if |", "|---|---|---:|---:|---:|---|"]
    for key, label, unit, higher in LABELS:
        w, k, r = s["median"]["weir"][key], s["median"]["kafka"][key], s["ratio"][key]
        out.append(f"| {label} | {unit} | {fmt(w)} | {fmt(k)} | {fmt(r)} | {'higher' if higher else 'lower'} |")
    lim = s["limits"]
    fr = s["weir_fraction_of_limits"]
    out += ["", "Physical limits (same run, medians):", "",
            "| limit | value | weir's best no-fsync produce (either client) as a fraction |", "|---|---:|---:|",
            f"| disk sequential write, 1 MiB blocks + one fdatasync | {fmt(lim['disk_seq_write_1m_mbps'])} MiB/s | {fmt(fr['of_disk_seq_write'])} |",
            f"| disk 16 KiB writes, fdatasync each | {fmt(lim['disk_fdatasync_16k_mbps'])} MiB/s ({fmt(lim['disk_fdatasync_16k_iops'])}/s) | durable p16: {fmt(fr['weir_durable_p16_of_disk_fdatasync_16k'])} |",
            f"| loopback TCP, one stream | {fmt(lim['loopback_tcp_mbps'])} MiB/s | {fmt(fr['of_loopback_tcp'])} |",
            "", "Issue goals (weir/Kafka ratio of medians):", ""]
    for key, op, target, text in GOALS:
        r = s["ratio"][key]
        ok = r is not None and (r >= target if op == ">=" else r <= target)
        out.append(f"- {text}: {fmt(r)} — {'met' if ok else 'missed'}")
    ok = fr["of_disk_seq_write"] is not None and fr["of_disk_seq_write"] >= 0.7
    out.append(f"- produce >= 70 % of raw disk write: {fmt(fr['of_disk_seq_write'])} — "
               f"{'met' if ok else 'missed'}")
    return "\n".join(out) + "\n"


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--smoke", action="store_true", help="seconds: tiny counts, one repetition")
    ap.add_argument("--repetitions", "-n", type=int, default=None, help="default 3 (smoke: 1)")
    ap.add_argument("--records", type=int, default=None, help="perf-test records per run (default 300000)")
    ap.add_argument("--rdkafka-records", type=int, default=None, help="default 200000")
    ap.add_argument("--durable-records", type=int, default=None, help="default 50000")
    ap.add_argument("--sync-records", type=int, default=None,
                    help="records of the 50-synchronous-producer row (default 20000, as TestClient_Produce)")
    ap.add_argument("--latency-seconds", type=float, default=None, help="default 10")
    ap.add_argument("--latency-rate", type=int, default=None,
                    help="records/s of the latency runs (default: half of Kafka's perf-test maximum "
                         "at 1 partition, acks=all, from its fast phase of the same repetition)")
    ap.add_argument("--latency-warmup-seconds", type=float, default=None,
                    help="perf-test's warm-up records before the latency run's, in seconds at its rate "
                         "(default 3)")
    ap.add_argument("--disk-bytes", type=int, default=None, help="default 4 GiB")
    ap.add_argument("--restart-bytes", type=int, default=None, help="data for the restart runs (default 5 GiB)")
    ap.add_argument("--workdir", type=Path, default=None, help="brokers' data (default: a temp dir)")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results", help="results dir")
    ap.add_argument("--weir-bin", type=Path, default=None,
                    help="weir binary (default: $WEIR_BIN, else build/weir)")
    ap.add_argument("--from-json", type=Path, default=None,
                    help="only re-render the tables from an earlier latest.json (no brokers run)")
    ap.add_argument("--keep", action="store_true", help="keep broker data and logs")
    ap.add_argument("--phases", default="fast,durable,latency,restart",
                    help="comma-separated subset of fast,durable,latency,restart (a partial run's table "
                         "shows n/a for the rest; latency needs Kafka's fast phase or --latency-rate)")
    cfg = ap.parse_args(argv[1:])
    s = cfg.smoke
    defaults = dict(repetitions=(1, 3), records=(2000, 300_000), rdkafka_records=(2000, 200_000),
                    durable_records=(500, 50_000), sync_records=(500, 20_000), latency_seconds=(1.0, 10.0),
                    latency_warmup_seconds=(0.5, 3.0),
                    disk_bytes=(16 * MB, 4096 * MB), restart_bytes=(4 * MB, 5 * 1024 * MB))
    for k, (small, big) in defaults.items():
        if getattr(cfg, k) is None:
            setattr(cfg, k, small if s else big)
    if cfg.weir_bin is not None:
        WEIR_BIN[0] = cfg.weir_bin.resolve()
    elif os.environ.get("WEIR_BIN"):
        WEIR_BIN[0] = Path(os.environ["WEIR_BIN"]).resolve()
    sync_seconds = 0.5 if s else 3.0
    loop_seconds = 0.5 if s else 3.0

    if cfg.from_json is not None:
        old = json.loads(cfg.from_json.read_text())
        for k in ("records", "rdkafka_records", "durable_records", "latency_seconds"):
            setattr(cfg, k, old["settings"][k])
        cfg.latency_warmup_seconds = old["settings"].get("latency_warmup_seconds")
        cfg.latency_rate = old["settings"].get("latency_rate_given")
        cfg.smoke = old["smoke"]
        summary = summarise(old["runs"], old["limit_runs"], cfg, old["command"].split(), old["started"])
        summary["machine"] = {**summary["machine"], **old["machine"]}
        summary["command"] = old["command"]
        return write_results(summary, cfg.out)

    build_driver()
    started = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    load_at_start = [round(x, 2) for x in os.getloadavg()]
    workdir = cfg.workdir or Path(tempfile.mkdtemp(prefix="weir-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    log(f"work dir {workdir}")
    runs, limits = [], []
    try:
        for rep in range(1, cfg.repetitions + 1):
            log(f"repetition {rep}/{cfg.repetitions}: physical limits")
            lim = disk_limits(workdir, cfg.disk_bytes, sync_seconds)
            lim.update(loopback_limit(loop_seconds))
            log("  " + ", ".join(f"{k}={v:.1f}" for k, v in lim.items()))
            limits.append(lim)
            rr = {"weir": {}, "kafka": {}}
            # weir first, then Kafka; weir's latency run needs Kafka's max, so it comes last
            # (a fresh --dev weir; start-up costs weir ~0.1 s, Kafka ~10 s, hence one Kafka).
            plan = [("weir", ("fast",)), ("weir", ("durable",)),
                    ("kafka", ("fast", "durable", "latency")), ("weir", ("latency",)),
                    ("weir", ("restart",)), ("kafka", ("restart",))]
            wanted = set(cfg.phases.split(","))
            plan = [(kind, tuple(p for p in phases if p in wanted)) for kind, phases in plan]
            plan = [(kind, phases) for kind, phases in plan if phases]
            for i, (kind, phases) in enumerate(plan):
                # Kafka's own run computes it, unless --latency-rate gives it (a latency run
                # without the fast phase).
                rate = cfg.latency_rate or rr["kafka"].get("latency_rate_rps")
                res = run_phase(kind, phases, workdir / f"r{rep}-{i}-{kind}", cfg, rate)
                prev = rr[kind]
                # start-up time and answered-ness are collected in every phase
                st = prev.setdefault("startup_samples", [])
                st.append(res.pop("startup_to_first_produce_s"))
                ans = res.pop("answered") and prev.get("answered", True)
                prev.setdefault("exit_codes", []).extend(res.pop("exit_codes"))
                prev.update(res)
                prev["answered"] = ans
            for kind in ("weir", "kafka"):
                rr[kind]["startup_to_first_produce_s"] = median(rr[kind]["startup_samples"])
            runs.append(rr)
    finally:
        procs.kill_all(grace=10.0)
        if not cfg.keep and cfg.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)
    summary = summarise(runs, limits, cfg, ["bench/run.py"] + argv[1:], started)
    summary["machine"]["loadavg_at_start"] = load_at_start
    return write_results(summary, cfg.out)


def write_results(summary: dict, out: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    (out / "latest.json").write_text(json.dumps(summary, indent=2) + "\n")
    md = markdown(summary)
    (out / "latest.md").write_text(md)
    print(md)
    return 0 if summary["both_answered"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
