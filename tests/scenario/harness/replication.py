"""Helpers shared by the replication scenarios (test_cluster_replication.py, test_cluster_isr.py).

  create_topic(cluster, topic, min_isr)      RF=3, 1 partition, waits until every broker shows it
  describe_partitions(bootstrap, topic, ...) `kafka-topics --describe` rows as dicts
  produce(bootstrap, topic, values, **conf)  acks=all (unless conf says otherwise) produce, flushed
  read_all(bootstrap, topic)                 partition 0 from the log start to the high watermark
  check_log(records, acked)                  anomalies by name (lost, duplicate, moved, reordered)
  SequenceProducer                           a thread producing a numbered sequence, bounded
  partition_dump(broker, topic)              `kafka-dump-log --print-data-log` of a broker's
                                             partition dir, reduced to offsets, epochs, payloads
"""
from __future__ import annotations

import re
import secrets
import threading
import time
from pathlib import Path

from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition

from .cli import run_tool

TOOL_ENV = {"KAFKA_JVM_PERFORMANCE_OPTS": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Djava.awt.headless=true"}


def create_topic(cluster, topic: str, min_isr: int = 2) -> None:
    run_tool("kafka-topics", "--create", "--topic", topic, "--partitions", "1",
             "--replication-factor", "3", "--config", f"min.insync.replicas={min_isr}",
             bootstrap=cluster.bootstrap, env=TOOL_ENV, timeout=90, check=True)
    cluster.wait_topic(topic, partitions=1, replicas=3)


_DESCRIBE_ROW = re.compile(
    r"Topic:\s*(?P<topic>\S+)\s+Partition:\s*(?P<partition>\d+)\s+Leader:\s*(?P<leader>-?\d+|none)\s+"
    r"Replicas:\s*(?P<replicas>[\d,]*)\s+Isr:\s*(?P<isr>[\d,]*)")


def describe_partitions(bootstrap: str, topic: str | None, *extra: str) -> list[dict]:
    """`kafka-topics --describe` rows as dicts (leader int, replicas and isr lists)."""
    args = ["--describe", *(["--topic", topic] if topic else []), *extra]
    out = run_tool("kafka-topics", *args, bootstrap=bootstrap, env=TOOL_ENV, timeout=90).check().stdout
    rows = []
    for m in _DESCRIBE_ROW.finditer(out):
        rows.append({"topic": m["topic"], "partition": int(m["partition"]),
                     "leader": -1 if m["leader"] == "none" else int(m["leader"]),
                     "replicas": [int(x) for x in m["replicas"].split(",") if x],
                     "isr": [int(x) for x in m["isr"].split(",") if x], "raw": out})
    return rows


def produce(bootstrap: str, topic: str, values: list[str], **conf) -> tuple[dict[str, int], dict[str, KafkaError]]:
    """acks=all produce of values; returns (acknowledged value -> offset, failed value -> error)."""
    acked: dict[str, int] = {}
    failed: dict[str, KafkaError] = {}

    def report(err, msg):
        v = msg.value().decode()
        if err is None:
            acked[v] = msg.offset()
        else:
            failed[v] = err
    p = Producer({"bootstrap.servers": bootstrap, "acks": "all", **conf})
    for v in values:
        p.produce(topic, value=v.encode(), partition=0, on_delivery=report)
        p.poll(0)
    left = p.flush(120)
    assert left == 0, f"{left} messages still undelivered after 120 s"
    return acked, failed


def read_all(bootstrap: str, topic: str, timeout: float = 90.0) -> list[tuple[int, str]]:
    """Every record of partition 0 from the log start to the high watermark, as (offset, value)."""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"checker-{secrets.token_hex(4)}",
                  "enable.auto.commit": False, "auto.offset.reset": "earliest",
                  "isolation.level": "read_uncommitted"})
    try:
        low, high = c.get_watermark_offsets(TopicPartition(topic, 0), timeout=30)
        c.assign([TopicPartition(topic, 0, low)])
        out: list[tuple[int, str]] = []
        deadline = time.monotonic() + timeout
        while (not out or out[-1][0] < high - 1) and high > low:
            assert time.monotonic() < deadline, (
                f"read {len(out)} records of {topic}-0 [{low}, {high}) in {timeout:.0f}s, "
                f"last offset {out[-1][0] if out else None}")
            msg = c.poll(1.0)
            if msg is None:
                continue
            assert msg.error() is None, msg.error()
            out.append((msg.offset(), msg.value().decode()))
        return out
    finally:
        c.close()


def check_log(records: list[tuple[int, str]], acked: dict[str, int]) -> list[str]:
    """Anomalies, each by name, between what was acknowledged and what the log holds."""
    anomalies: list[str] = []
    by_offset: dict[int, set[str]] = {}
    where: dict[str, list[int]] = {}
    for off, v in records:
        by_offset.setdefault(off, set()).add(v)
        where.setdefault(v, []).append(off)
    for off, vs in by_offset.items():
        if len(vs) > 1:
            anomalies.append(f"two values at one offset: {off} holds {sorted(vs)}")
    offsets = [off for off, _ in records]
    if offsets != sorted(set(offsets)):
        anomalies.append("poll skip or repeat: offsets read are not strictly increasing")
    for v, off in sorted(acked.items(), key=lambda kv: kv[1]):
        seen = where.get(v, [])
        if not seen:
            anomalies.append(f"lost acknowledged write: {v} (acknowledged at offset {off})")
        elif len(seen) > 1:
            anomalies.append(f"duplicate: {v} at offsets {seen}")
        elif seen[0] != off:
            anomalies.append(f"acknowledged offset moved: {v} acknowledged at {off}, read at {seen[0]}")
    for v, offs in where.items():
        if len(offs) > 1 and v not in acked:
            anomalies.append(f"duplicate (unacknowledged value): {v} at offsets {offs}")
    numbers = [int(v.split("-")[1]) for _, v in records]
    if numbers != sorted(numbers):
        anomalies.append("out of order: the sequence is not increasing in offset order")
    return anomalies


def check_exact_sequence(bootstrap: str, topic: str, sp: "SequenceProducer") -> None:
    """After a SequenceProducer that nothing refused: every value acknowledged, none failed, and the
    log (read back from the start) is exactly the acknowledged sequence, with no anomaly."""
    assert not sp.failed, {v: str(e) for v, e in list(sp.failed.items())[:10]}
    assert len(sp.acked) == sp.produced, f"{len(sp.acked)} acknowledged of {sp.produced} produced"
    records = read_all(bootstrap, topic)
    anomalies = check_log(records, sp.acked)
    assert anomalies == [], "\n".join(anomalies[:50])
    assert [v for _, v in records] == sorted(sp.acked), f"{len(records)} records, {len(sp.acked)} acknowledged"


class SequenceProducer:
    """A thread producing `<prefix>-000000`, `<prefix>-000001`, ... to partition 0, paced by
    poll(pace) (about 1/pace records per second), at most `limit` records (each value_bytes long
    if that is set: `<prefix>-000001-xxx...`); delivery reports fill
    .acked (value -> offset) and .failed (value -> error). stop() ends it and flushes.

        with SequenceProducer(cluster.bootstrap, topic, "seq") as sp:
            sp.wait_acked(20, 60)
            ... faults ...
        assert not sp.failed and len(sp.acked) == sp.produced
    """

    def __init__(self, bootstrap: str, topic: str, prefix: str = "seq", *, pace: float = 0.02,
                 limit: int = 20_000, flush_timeout: float = 120.0, value_bytes: int = 0, **conf) -> None:
        self.topic, self.prefix, self.pace, self.limit = topic, prefix, pace, limit
        self.value_bytes = value_bytes
        self.flush_timeout = flush_timeout
        self.conf = {"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": True,
                     "linger.ms": 0, "message.timeout.ms": 120000, **conf}
        self.acked: dict[str, int] = {}
        self.failed: dict[str, KafkaError] = {}
        self.produced = 0
        self.unflushed: int | None = None
        self.lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name=f"producer {prefix}")

    def _report(self, err, msg) -> None:
        v = msg.value().decode()
        with self.lock:
            if err is None:
                self.acked[v] = msg.offset()
            else:
                self.failed[v] = err

    def _run(self) -> None:
        p = Producer(self.conf)
        while not self._stop.is_set() and self.produced < self.limit:
            try:
                p.produce(self.topic, value=self.value(self.produced).encode(), partition=0,
                          on_delivery=self._report)
                self.produced += 1
            except BufferError:
                pass
            # poll() returns at the first delivery report: keep polling until the pace is spent,
            # so the rate stays about 1/pace however fast the broker acknowledges.
            until = time.monotonic() + self.pace
            while (left := until - time.monotonic()) > 0:
                p.poll(left)
        self.unflushed = p.flush(self.flush_timeout)

    def value(self, n: int) -> str:
        """The n-th value: `<prefix>-<n>`, padded with `-x...` to value_bytes if that is longer."""
        v = f"{self.prefix}-{n:06d}"
        return v + "-" + "x" * (self.value_bytes - len(v) - 1) if self.value_bytes > len(v) + 1 else v

    def n_acked(self) -> int:
        with self.lock:
            return len(self.acked)

    def wait_acked(self, n: int, timeout: float) -> int:
        """Until at least n values are acknowledged in total; returns the count."""
        from .cluster import wait_for
        return wait_for(f"{n} acknowledgements of {self.prefix}-*",
                        lambda: self.n_acked() >= n and self.n_acked(), timeout,
                        describe=lambda: f"acked {self.n_acked()}, produced {self.produced}, "
                                         f"failed {len(self.failed)}, thread alive {self._thread.is_alive()}")

    def start(self) -> "SequenceProducer":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(self.flush_timeout + 30)
        assert not self._thread.is_alive(), "the producer thread did not finish"
        assert self.unflushed == 0, f"{self.unflushed} messages undelivered after {self.flush_timeout:.0f} s"

    def __enter__(self) -> "SequenceProducer":
        return self.start()

    def __exit__(self, *exc) -> None:
        if exc[0] is None:
            self.stop()
        else:  # the test already failed: end the thread, do not mask the error
            self._stop.set()
            self._thread.join(self.flush_timeout + 30)


_KV = re.compile(r"(\w+): (\S+)")
BATCH_FIELDS = ("baseOffset", "lastOffset", "count", "partitionLeaderEpoch", "producerId",
                "producerEpoch", "baseSequence", "lastSequence", "isTransactional", "isControl", "crc")


def partition_dump(broker, topic: str, partition: int = 0) -> list[dict]:
    """Every batch in the broker's partition directory (<log.dirs>/<topic>-<partition>/*.log, in
    offset order), read with `kafka-dump-log --files ... --print-data-log` while the broker runs.

    Kept per batch: BATCH_FIELDS (offsets, leader epoch, producer id/epoch/sequences, flags, CRC)
    and the records as (offset, payload). Dropped: the "Dumping <file>" and "Log starting offset"
    lines (file layout), position, size and timestamps' formatting are not kept either; the CRC
    covers the records and the batch's timestamps, so equal CRCs mean the same batch as written.
    """
    pdir = Path(broker.data_dir) / f"{topic}-{partition}"
    segments = sorted(pdir.glob("*.log"))
    assert segments, f"no segment files in {pdir} (broker {broker.node_id}): {sorted(pdir.iterdir()) if pdir.is_dir() else 'no such dir'}"
    out = run_tool("kafka-dump-log", "--files", ",".join(str(s) for s in segments), "--print-data-log",
                   env=TOOL_ENV, timeout=90).check().stdout
    batches: list[dict] = []
    for line in out.splitlines():
        if line.startswith("baseOffset:"):
            kv = dict(_KV.findall(line))
            missing = [f for f in BATCH_FIELDS if f not in kv]
            assert not missing, f"kafka-dump-log batch line without {missing}: {line}"
            batch = {f: kv[f] for f in BATCH_FIELDS}
            for f in ("baseOffset", "lastOffset", "count", "partitionLeaderEpoch"):
                batch[f] = int(batch[f])
            batch["records"] = []
            batches.append(batch)
        elif line.startswith("| offset:"):
            assert batches, f"record line before any batch line: {line}"
            head, sep, payload = line.partition(" payload: ")
            assert sep, f"kafka-dump-log record line without a payload: {line}"
            batches[-1]["records"].append((int(_KV.search(head)[2]), payload))
        # "Dumping <path>", "Log starting offset: N" and anything else: file layout, dropped
    for b in batches:
        offs = [o for o, _ in b["records"]]
        assert len(offs) == b["count"] and (not offs or (offs[0], offs[-1]) == (b["baseOffset"], b["lastOffset"])), \
            f"broker {broker.node_id}: batch {b} does not hold its own records {offs}"
    return batches


def dump_values(batches: list[dict]) -> list[tuple[int, str]]:
    """(offset, payload) of every data record in a partition_dump (control batches left out)."""
    return [r for b in batches if b["isControl"] != "true" for r in b["records"]]


def below(batches: list[dict], offset: int) -> list[dict]:
    """The batches of a partition_dump that lie entirely below offset (e.g. the high watermark)."""
    return [b for b in batches if b["lastOffset"] < offset]


def high_watermark(bootstrap: str, topic: str, partition: int = 0) -> int:
    """The high watermark of topic-partition as the leader reports it (ListOffsets latest)."""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"hw-{secrets.token_hex(4)}",
                  "enable.auto.commit": False})
    try:
        return c.get_watermark_offsets(TopicPartition(topic, partition), timeout=30)[1]
    finally:
        c.close()
