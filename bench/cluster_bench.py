#!/usr/bin/env python3
"""Replication benchmark (issue 15): three weir brokers vs three Apache Kafka 4.3.1 brokers, each
trio under one Kafka 4.3.1 KRaft controller, on this machine, one cluster after the other, same
clients and settings.

    .cache/venv/bin/python bench/cluster_bench.py            # full run (~25 min on 2 cores), 3 repetitions
    .cache/venv/bin/python bench/cluster_bench.py --smoke    # a few minutes: tiny counts, one repetition

Writes bench/results/cluster.json (every repetition's numbers, medians, ratios) and
bench/results/cluster.md (the table).

Every topic has replication factor 3 and min.insync.replicas=2; records are 1 KiB,
linger.ms=5, acks=all. Each repetition starts three clusters, each from empty data directories
(the cluster harness of tests/scenario, harness/cluster.py: broker.session.timeout.ms=9000 on the
controller, broker.heartbeat.interval.ms=1000 on the brokers, Kafka brokers -Xmx512M):

  weir          weir's defaults: a leader answers acks=all once every ISR member has the data on
                disk (flush.on.acks.all=true; followers sync before they fetch further).
                Measures: durable produce throughput (kafka-producer-perf-test, 1 and 6 partitions),
                produce latency at a fixed rate, failover, ISR catch-up, broker CPU per GB and RSS.
  weir-nosync   flush.on.acks.all=false (no fdatasync anywhere): produce throughput and latency.
  kafka         Kafka's defaults (no fsync): the same no-sync runs, and the durable ones on topics
                created with flush.messages=1 (each broker syncs every append, leader and
                followers); failover, catch-up, CPU per GB (no-sync runs) and RSS.

Failover: a confluent-kafka idempotent producer sends one small record every 1/--failover-rate s
to a one-partition topic; the partition's leader is killed -9; the time from the kill to the first
acknowledgement of a record produced after the kill (the controller must first notice the dead
broker: broker.session.timeout.ms dominates, and it is the same Kafka controller for both).
Catch-up: while the killed broker is down, --catchup-records more records go to that topic
(acks=all, two replicas in the ISR); then it is started again; catch-up time is from the moment it
is registered and unfenced (Metadata lists it) to the moment it is back in the ISR; the rate is the
data it was missing over that time.

Reported as weir / Kafka ratios of the medians: durable vs durable, no-sync vs no-sync, and the
two defaults against each other (what a user who changes nothing compares).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests" / "scenario"))

import run as single  # noqa: E402  (bench/run.py: perf-test runner, /proc readers, report helpers)
from harness import procs  # noqa: E402
from harness.cluster import Cluster, wait_for  # noqa: E402
from harness.kafka import KAFKA_VERSION  # noqa: E402

from confluent_kafka import Producer  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

RECORD_SIZE = single.RECORD_SIZE
MIB = 1024 * 1024
GIB = 1024 * MIB
PARTITION_CASES = (1, 6)
CLUSTERS = ("weir", "weir-nosync", "kafka")

# (metric key, label, unit, higher is better)
LABELS = [
    ("durable_p1_mbps", "RF=3 acks=all durable produce, 1 partition", "MiB/s", True),
    ("durable_p6_mbps", "RF=3 acks=all durable produce, 6 partitions", "MiB/s", True),
    ("durable_latency_p50_ms", "durable produce latency p50 at the fixed rate", "ms", False),
    ("durable_latency_p99_ms", "durable produce latency p99 at the fixed rate", "ms", False),
    ("nosync_p1_mbps", "RF=3 acks=all no-sync produce, 1 partition", "MiB/s", True),
    ("nosync_p6_mbps", "RF=3 acks=all no-sync produce, 6 partitions", "MiB/s", True),
    ("nosync_latency_p50_ms", "no-sync produce latency p50 at the fixed rate", "ms", False),
    ("nosync_latency_p99_ms", "no-sync produce latency p99 at the fixed rate", "ms", False),
    ("default_p6_mbps", "defaults vs defaults: produce, 6 partitions", "MiB/s", True),
    ("default_latency_p99_ms", "defaults vs defaults: latency p99", "ms", False),
    ("failover_s", "leader kill -9 to the next acknowledged write", "s", False),
    ("failover_errors", "records that failed during the failover", "count", False),
    ("catchup_s", "follower restart: registered to back in the ISR", "s", False),
    ("catchup_mbps", "follower catch-up rate", "MiB/s", True),
    ("restart_to_isr_s", "follower restart: process start to back in the ISR", "s", False),
    ("cpu_s_per_gb", "brokers' CPU per GB produced (3 brokers, default mode)", "CPU s/GB", False),
    ("rss_mib", "broker RSS after the load (mean of 3)", "MiB", False),
    ("rss_peak_mib", "broker peak RSS (VmHWM, mean of 3)", "MiB", False),
]
METRIC_KEYS = [k for k, *_ in LABELS]


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def create_topic(cluster: Cluster, name: str, partitions: int, config: dict | None = None) -> None:
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    fut = admin.create_topics([NewTopic(name, num_partitions=partitions, replication_factor=3,
                                        config={"min.insync.replicas": "2", **(config or {})})])
    fut[name].result(timeout=60)
    cluster.wait_topic(name, partitions, 3, timeout=120)


def broker_pids(cluster: Cluster) -> list[int]:
    return [b.pid for b in cluster.brokers.values() if b.running]


def cpu_total(cluster: Cluster) -> float:
    return sum(single.cpu_seconds(pid) for pid in broker_pids(cluster))


def produce_runs(cluster: Cluster, mode: str, config: dict, cfg, out: dict) -> float:
    """Throughput (1 and 6 partitions) and fixed-rate latency on topics `<mode>-...` with
    `config`, results under `<mode>_...`; returns the brokers' CPU seconds over the throughput
    runs."""
    cpu = 0.0
    for p in PARTITION_CASES:
        topic = f"{mode}-p{p}"
        create_topic(cluster, topic, p, config)
        before = cpu_total(cluster)
        r = single.perf_test(cluster.bootstrap, topic, cfg.records, "all")
        cpu += cpu_total(cluster) - before
        out[f"{mode}_p{p}_mbps"] = r["mbps"]
        out[f"{mode}_p{p}_rps"] = r["rps"]
        log(f"  {mode} p{p}: {r['mbps']:.1f} MiB/s, p99 {r['p99_ms']} ms at full speed")
    topic = f"{mode}-latency"
    create_topic(cluster, topic, 1, config)
    r = single.perf_test(cluster.bootstrap, topic, int(cfg.latency_rate * cfg.latency_seconds), "all",
                         throughput=cfg.latency_rate)
    out[f"{mode}_latency_p50_ms"] = r["p50_ms"]
    out[f"{mode}_latency_p99_ms"] = r["p99_ms"]
    out[f"{mode}_latency_p999_ms"] = r["p999_ms"]
    out[f"{mode}_latency_rps"] = r["rps"]
    log(f"  {mode} latency at {cfg.latency_rate}/s: p50 {r['p50_ms']} ms, p99 {r['p99_ms']} ms")
    return cpu


def memory(cluster: Cluster, out: dict) -> None:
    pids = broker_pids(cluster)
    out["rss_mib"] = sum(single.status_kib(p, "VmRSS") for p in pids) / len(pids) / 1024
    out["rss_peak_mib"] = sum(single.status_kib(p, "VmHWM") for p in pids) / len(pids) / 1024


class AckClock:
    """A producer sending one record per period, noting when each was sent and acknowledged."""

    def __init__(self, bootstrap: str, topic: str, rate: float) -> None:
        self.producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": True,
                                  "linger.ms": 0, "delivery.timeout.ms": 120000})
        self.topic = topic
        self.period = 1.0 / rate
        self.sent: dict[int, float] = {}
        self.acked: list[tuple[float, int]] = []  # (time, sequence number)
        self.errors = 0
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _cb(self, seq: int):
        def done(err, _msg):
            now = time.monotonic()
            with self.lock:
                if err is None:
                    self.acked.append((now, seq))
                else:
                    self.errors += 1
        return done

    def _run(self) -> None:
        seq = 0
        next_at = time.monotonic()
        while not self.stop.is_set():
            now = time.monotonic()
            if now >= next_at:
                with self.lock:
                    self.sent[seq] = now
                self.producer.produce(self.topic, value=str(seq).encode(), on_delivery=self._cb(seq))
                seq += 1
                next_at += self.period
            self.producer.poll(min(self.period, max(0.0, next_at - time.monotonic())))
        self.producer.flush(130)

    def start(self) -> "AckClock":
        self.thread.start()
        return self

    def first_ack_of_a_record_sent_after(self, t: float) -> float | None:
        with self.lock:
            times = [at for at, seq in self.acked if self.sent[seq] > t]
        return min(times) if times else None

    def finish(self) -> None:
        self.stop.set()
        self.thread.join(150)


def failover_and_catchup(cluster: Cluster, cfg, out: dict) -> None:
    topic = "failover"
    create_topic(cluster, topic, 1)
    clock = AckClock(cluster.bootstrap, topic, cfg.failover_rate).start()
    try:
        wait_for("the producer's first acks", lambda: len(clock.acked) >= cfg.failover_rate * 2, 60, interval=0.05)
        leader = cluster.leader_of(topic, 0)
        t_kill = time.monotonic()
        cluster.kill(leader)
        first_ack = wait_for("an acknowledgement after the leader's kill",
                             lambda: clock.first_ack_of_a_record_sent_after(t_kill), 120, interval=0.05)
        out["failover_s"] = first_ack - t_kill
        log(f"  failover: {out['failover_s']:.2f} s (broker {leader} killed)")
        time.sleep(1.0)
    finally:
        clock.finish()
    out["failover_errors"] = clock.errors
    # The dead broker misses these; acks=all still succeeds with two in the ISR.
    single.perf_test(cluster.bootstrap, topic, cfg.catchup_records, "all")
    behind_mib = cfg.catchup_records * RECORD_SIZE / MIB
    b = cluster.broker(leader)
    t_start = time.monotonic()
    b.start()  # returns once Metadata lists it: registered and unfenced
    t_ready = time.monotonic()
    cluster.wait_isr(topic, 0, 3, timeout=600)
    t_isr = time.monotonic()
    out["catchup_s"] = t_isr - t_ready
    out["catchup_mbps"] = behind_mib / out["catchup_s"] if out["catchup_s"] > 0 else None
    out["restart_to_isr_s"] = t_isr - t_start
    log(f"  catch-up of {behind_mib:.0f} MiB: {out['catchup_s']:.2f} s after registration "
        f"({out['restart_to_isr_s']:.2f} s after the process start)")


def run_cluster(name: str, workdir: Path, cfg) -> dict:
    kinds = ("kafka",) * 3 if name == "kafka" else ("weir",) * 3
    overrides = {"flush.on.acks.all": "false"} if name == "weir-nosync" else None
    log(f"{name}: starting 3 brokers + 1 controller")
    cluster = Cluster(workdir / name, kinds, controllers=1, broker_overrides=overrides)
    out: dict = {}
    try:
        cluster.start()
        out["cluster_start_s"] = cluster.start_seconds
        if name == "weir":
            cpu = produce_runs(cluster, "durable", {}, cfg, out)
            out["cpu_s_per_gb"] = cpu / (len(PARTITION_CASES) * cfg.records * RECORD_SIZE / GIB)
            memory(cluster, out)
            failover_and_catchup(cluster, cfg, out)
        elif name == "weir-nosync":
            produce_runs(cluster, "nosync", {}, cfg, out)
        else:
            produce_runs(cluster, "durable", {"flush.messages": "1"}, cfg, out)
            cpu = produce_runs(cluster, "nosync", {}, cfg, out)
            out["cpu_s_per_gb"] = cpu / (len(PARTITION_CASES) * cfg.records * RECORD_SIZE / GIB)
            memory(cluster, out)
            failover_and_catchup(cluster, cfg, out)
        cluster.finish()
        out["answered"] = True
    except Exception as e:  # noqa: BLE001 - reported in the results, the run goes on
        log(f"{name}: FAILED: {e!r}")
        out["answered"] = False
        out["error"] = repr(e)
        cluster.close()
    return out


def repetition(workdir: Path, cfg) -> dict:
    res = {name: run_cluster(name, workdir, cfg) for name in CLUSTERS}
    weir, nosync, kafka = res["weir"], res["weir-nosync"], res["kafka"]
    row = {"weir": {}, "kafka": {}}
    for key in ("durable_p1_mbps", "durable_p6_mbps", "durable_latency_p50_ms", "durable_latency_p99_ms",
                "failover_s", "failover_errors", "catchup_s", "catchup_mbps", "restart_to_isr_s",
                "cpu_s_per_gb", "rss_mib", "rss_peak_mib"):
        row["weir"][key] = weir.get(key)
        row["kafka"][key] = kafka.get(key)
    for key in ("nosync_p1_mbps", "nosync_p6_mbps", "nosync_latency_p50_ms", "nosync_latency_p99_ms"):
        row["weir"][key] = nosync.get(key)
        row["kafka"][key] = kafka.get(key)
    # What a user who changes nothing compares: weir's durable default vs Kafka's no-sync default.
    row["weir"]["default_p6_mbps"] = weir.get("durable_p6_mbps")
    row["kafka"]["default_p6_mbps"] = kafka.get("nosync_p6_mbps")
    row["weir"]["default_latency_p99_ms"] = weir.get("durable_latency_p99_ms")
    row["kafka"]["default_latency_p99_ms"] = kafka.get("nosync_latency_p99_ms")
    return {"clusters": res, "row": row,
            "answered": all(r.get("answered") for r in res.values())}


def summarise(reps: list[dict], cfg, argv: list[str], started: str) -> dict:
    med = {kind: {k: single.median([r["row"][kind].get(k) for r in reps]) for k in METRIC_KEYS}
           for kind in ("weir", "kafka")}
    ratio = {k: (med["weir"][k] / med["kafka"][k] if med["weir"][k] is not None and med["kafka"][k] else None)
             for k in METRIC_KEYS}
    return {"started": started, "command": " ".join(argv), "smoke": cfg.smoke, "repetitions": len(reps),
            "machine": single.machine(), "kafka_version": KAFKA_VERSION,
            "settings": {"records": cfg.records, "record_size": RECORD_SIZE, "linger_ms": single.LINGER_MS,
                         "partitions": list(PARTITION_CASES), "latency_rate": cfg.latency_rate,
                         "latency_seconds": cfg.latency_seconds, "failover_rate": cfg.failover_rate,
                         "catchup_records": cfg.catchup_records},
            "both_answered": all(r["answered"] for r in reps),
            "median": med, "ratio": ratio, "runs": reps}


def markdown(s: dict) -> str:
    m, st = s["machine"], s["settings"]
    out = [f"# Replication: 3 weir brokers vs 3 Apache Kafka {s['kafka_version']} brokers — {s['started']}", "",
           f"Machine: {m['nproc']} CPUs ({m['cpu']}), {m['mem_gib']} GiB RAM, disk {m['disk']}, Linux "
           f"{m['kernel']}, {m['java']}; load average {m.get('loadavg_at_start')} at start, "
           f"{m.get('loadavg_at_end')} at end (the machine is shared).",
           f"Command: `{s['command']}` — medians of {s['repetitions']} repetition(s)"
           + (" (SMOKE RUN: counts too small to mean anything)" if s["smoke"] else "") + ".", "",
           f"Each cluster: 3 brokers and 1 Kafka {s['kafka_version']} controller on 127.0.0.1, all on this "
           f"machine's {m['nproc']} CPUs. Topics RF=3, min.insync.replicas=2; {st['record_size']} B records, "
           f"linger.ms={st['linger_ms']}, acks=all; {st['records']:,} records per throughput run "
           f"(kafka-producer-perf-test); latency at {st['latency_rate']:,} records/s for "
           f"{st['latency_seconds']} s, 1 partition; failover producer {st['failover_rate']} records/s "
           f"(confluent-kafka, idempotent); catch-up of {st['catchup_records']:,} records.",
           "Durable: weir's default (flush.on.acks.all) vs Kafka topics with flush.messages=1. "
           "No-sync: weir flush.on.acks.all=false vs Kafka's default.", "",
           "| metric | unit | weir | Kafka | weir/Kafka | better if |", "|---|---|---:|---:|---:|---|"]
    for key, label, unit, higher in LABELS:
        w, k, r = s["median"]["weir"][key], s["median"]["kafka"][key], s["ratio"][key]
        out.append(f"| {label} | {unit} | {single.fmt(w)} | {single.fmt(k)} | {single.fmt(r)} | "
                   f"{'higher' if higher else 'lower'} |")
    return "\n".join(out) + "\n"


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--smoke", action="store_true", help="tiny counts, one repetition")
    ap.add_argument("--repetitions", "-n", type=int, default=None, help="default 3 (smoke: 1)")
    ap.add_argument("--records", type=int, default=None, help="records per throughput run (default 100000)")
    ap.add_argument("--latency-rate", type=int, default=None, help="records/s of the latency runs (default 1000)")
    ap.add_argument("--latency-seconds", type=float, default=None, help="default 10")
    ap.add_argument("--failover-rate", type=float, default=50.0, help="records/s of the failover producer")
    ap.add_argument("--catchup-records", type=int, default=None, help="default 100000")
    ap.add_argument("--workdir", type=Path, default=None, help="brokers' data (default: a temp dir)")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results", help="results dir")
    ap.add_argument("--keep", action="store_true", help="keep broker data and logs")
    cfg = ap.parse_args(argv[1:])
    small = cfg.smoke
    cfg.repetitions = cfg.repetitions or (1 if small else 3)
    cfg.records = cfg.records or (2000 if small else 100000)
    cfg.latency_rate = cfg.latency_rate or (200 if small else 1000)
    cfg.latency_seconds = cfg.latency_seconds or (2 if small else 10)
    cfg.catchup_records = cfg.catchup_records or (2000 if small else 100000)
    started = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    load_at_start = [round(x, 2) for x in os.getloadavg()]
    workdir = cfg.workdir or Path(tempfile.mkdtemp(prefix="weir-cluster-bench-"))
    reps = []
    try:
        for i in range(cfg.repetitions):
            log(f"repetition {i + 1}/{cfg.repetitions}")
            rep_dir = workdir / f"rep{i + 1}"
            reps.append(repetition(rep_dir, cfg))
            if not cfg.keep:
                shutil.rmtree(rep_dir, ignore_errors=True)
    finally:
        procs.kill_all(grace=10.0)
        if not cfg.keep and cfg.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)
    summary = summarise(reps, cfg, ["bench/cluster_bench.py"] + argv[1:], started)
    summary["machine"]["loadavg_at_start"] = load_at_start
    summary["machine"]["loadavg_at_end"] = [round(x, 2) for x in os.getloadavg()]
    cfg.out.mkdir(parents=True, exist_ok=True)
    (cfg.out / "cluster.json").write_text(json.dumps(summary, indent=2) + "\n")
    md = markdown(summary)
    (cfg.out / "cluster.md").write_text(md)
    print(md)
    return 0 if summary["both_answered"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
