"""A Jepsen-style exactly-once checker: transactional consume-process-produce workers
(apps/eos_worker.py, confluent-kafka) copy an input topic to an output topic while the test kills
them with SIGKILL at random points and restarts them; then everything is read back and checked.

Anomalies looked for (any one fails the test, with the random seed to replay it):
  - lost committed write: an input record missing from the read_committed output, or a
    transaction a worker saw commit missing from it;
  - duplicate: an input record twice in the read_committed output;
  - aborted read: a record of a transaction a worker saw abort in the read_committed output;
  - torn transaction: some but not all records of a transaction visible;
  - one offset with two values: two reads (read_committed twice, and read_uncommitted) disagree
    about an offset;
  - non-monotonic or skipping polls: offsets going backwards within a partition, or a
    read_committed record missing from the read_uncommitted read of the same partition;
  - a hanging transaction: the last stable offset stays behind the high watermark;
  - committed offsets that disagree with the output: the group's committed offset of each input
    partition is not exactly the number of its records in the output.

A second form runs Kafka's own TransactionalMessageCopier (kafka-tools, the Java producer: the
transaction protocol Kafka 4.3.1 negotiates with it), one copier per input partition with random
aborts, and adds SIGSTOP pauses longer than the transaction timeout as a second fault: the broker
aborts the paused copier's transaction and fences it, and the copier, exiting on the fence, is
restarted. Its records carry no transaction tags, so torn/aborted reads show up as duplicates
or losses of the (unique) input values.

Runs on weir and on Kafka with the same broker settings (short session and transaction-cleanup
intervals). The short form (2 workers, 3 kills) is in `make test`; the long form is `slow`.
"""
from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import pytest
from confluent_kafka import Consumer, IsolationLevel, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic, OffsetSpec

from harness import procs
from harness.paths import kafka_classpath_file

APPS = Path(__file__).parent / "apps"
PARTITIONS = 4
BROKER_SETTINGS = {
    "group.min.session.timeout.ms": 1000,
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": 1000,
    "transaction.remove.expired.transaction.cleanup.interval.ms": 5000,
}


@pytest.fixture(params=[
    pytest.param("weir", id="weir"),
    pytest.param("kafka", id="kafka", marks=(pytest.mark.kafka, pytest.mark.differential)),
])
def eos_broker(request):
    if request.param == "weir":
        return request.getfixturevalue("weir_factory")(settings=BROKER_SETTINGS)
    return request.getfixturevalue("kafka_factory")(overrides=BROKER_SETTINGS)


class Workers:
    def __init__(self, broker, tmp: Path, in_topic: str, out_topic: str, group: str, rng: random.Random):
        self.broker, self.tmp, self.in_topic, self.out_topic, self.group = broker, tmp, in_topic, out_topic, group
        self.rng = rng
        self.procs: dict[str, subprocess.Popen] = {}
        self.exits: list[tuple[str, int]] = []
        self.starts = 0

    def log_path(self, name: str) -> Path:
        return self.tmp / f"worker-{name}.log"

    def start(self, name: str) -> None:
        self.starts += 1
        err = open(self.tmp / f"worker-{name}.stderr", "a")
        self.procs[name] = procs.spawn(
            [sys.executable, str(APPS / "eos_worker.py"), self.broker.bootstrap, name, self.in_topic,
             self.out_topic, self.group, str(self.log_path(name)), str(self.rng.randrange(1 << 30))],
            stdout=err, stderr=err)

    def kill(self, name: str) -> None:
        p = self.procs[name]
        p.send_signal(signal.SIGKILL)
        p.wait()
        procs.forget(p)

    def check_alive(self) -> None:
        """Restarts a worker that exited by itself (noted: the checker reports it)."""
        for name, p in list(self.procs.items()):
            rc = p.poll()
            if rc is not None:
                procs.forget(p)
                self.exits.append((name, rc))
                self.start(name)

    def stop_all(self) -> None:
        for name in list(self.procs):
            if self.procs[name].poll() is None:
                self.kill(name)
            else:
                procs.forget(self.procs[name])

    def logs(self) -> dict[str, list[str]]:
        return {n: self.log_path(n).read_text().splitlines() if self.log_path(n).exists() else []
                for n in self.procs}

    def stderr(self) -> str:
        return "\n".join(f"--- {n}\n" + (self.tmp / f"worker-{n}.stderr").read_text()[-3000:] for n in self.procs)


def committed_offsets(bootstrap: str, group: str, topic: str) -> dict[int, int]:
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
    try:
        tps = c.committed([TopicPartition(topic, p) for p in range(PARTITIONS)], timeout=30)
        return {tp.partition: tp.offset for tp in tps}
    except Exception:
        return {}
    finally:
        c.close()


def read_all(bootstrap: str, topic: str, isolation: str) -> list[tuple[int, int, str, str]]:
    """Every record of every partition, in poll order, until each partition's end."""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "eos-checker-reader", "enable.auto.commit": False,
                  "enable.partition.eof": True, "isolation.level": isolation})
    c.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
    out, eof = [], set()
    deadline = time.monotonic() + 120
    while len(eof) < PARTITIONS:
        assert time.monotonic() < deadline, f"{isolation} read did not reach the end of {topic}"
        m = c.poll(1.0)
        if m is None:
            continue
        if m.error():
            assert m.error().code() == KafkaError._PARTITION_EOF, str(m.error())
            eof.add(m.partition())
            continue
        eof.discard(m.partition())
        out.append((m.partition(), m.offset(), (m.key() or b"").decode(), m.value().decode()))
    c.close()
    return out


def wait_stable(admin: AdminClient, topic: str, timeout: float) -> dict[int, tuple[int, int]]:
    """Waits until every partition's last stable offset equals its high watermark."""
    deadline = time.monotonic() + timeout
    while True:
        specs = {TopicPartition(topic, p): OffsetSpec.latest() for p in range(PARTITIONS)}
        hw = {tp.partition: r.offset for tp, r in
              ((tp, f.result()) for tp, f in admin.list_offsets(specs, isolation_level=IsolationLevel.READ_UNCOMMITTED).items())}
        lso = {tp.partition: r.offset for tp, r in
               ((tp, f.result()) for tp, f in admin.list_offsets(specs, isolation_level=IsolationLevel.READ_COMMITTED).items())}
        if hw == lso or time.monotonic() > deadline:
            return {p: (lso[p], hw[p]) for p in hw}
        time.sleep(0.5)


def run_checker(broker, tmp: Path, topic_name: str, *, workers: int, kills: int, records: int, seed: int):
    rng = random.Random(seed)
    in_topic, out_topic, group = f"{topic_name}-in", f"{topic_name}-out", f"{topic_name}-g"
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    for t in (in_topic, out_topic):
        admin.create_topics([NewTopic(t, PARTITIONS, 1)])[t].result(30)
    p = Producer({"bootstrap.servers": broker.bootstrap, "enable.idempotence": True, "linger.ms": 5})
    for i in range(records):
        p.produce(in_topic, partition=i % PARTITIONS, value=f"v{i}")
    assert p.flush(60) == 0
    ends = {q: len(range(q, records, PARTITIONS)) for q in range(PARTITIONS)}

    w = Workers(broker, tmp, in_topic, out_topic, group, rng)
    names = [f"w{i}" for i in range(workers)]
    for n in names:
        w.start(n)
    done_kills = 0
    next_kill = time.monotonic() + rng.uniform(1.0, 3.0)
    deadline = time.monotonic() + 240
    try:
        while True:
            w.check_alive()
            if done_kills < kills and time.monotonic() >= next_kill:
                victim = rng.choice(names)
                w.kill(victim)
                w.start(victim)
                done_kills += 1
                next_kill = time.monotonic() + rng.uniform(1.0, 3.0)
            committed = committed_offsets(broker.bootstrap, group, in_topic)
            if done_kills >= kills and committed == ends:
                break
            assert time.monotonic() < deadline, \
                f"seed {seed}: workers did not finish: committed {committed}, ends {ends}\n{w.stderr()}"
            time.sleep(0.3)
    finally:
        w.stop_all()

    ctx = f"seed {seed}"
    # No hanging transaction: the LSO catches up with the high watermark.
    stable = wait_stable(admin, out_topic, timeout=60)
    assert all(lso == hw for lso, hw in stable.values()), f"{ctx}: LSO behind HW (hanging transaction): {stable}"

    rc = read_all(broker.bootstrap, out_topic, "read_committed")
    rc2 = read_all(broker.bootstrap, out_topic, "read_committed")
    ru = read_all(broker.bootstrap, out_topic, "read_uncommitted")
    logs = w.logs()
    committed_txns = {ln.split()[1] for lines in logs.values() for ln in lines if ln.startswith("commit ")}
    aborted_txns = {ln.split()[1] for lines in logs.values() for ln in lines if ln.startswith("abort ")}

    # Offsets: monotonic per partition in each read; one value per offset across reads.
    for name, read in (("read_committed", rc), ("read_committed again", rc2), ("read_uncommitted", ru)):
        last: dict[int, int] = {}
        for part, off, _, _ in read:
            assert off > last.get(part, -1), f"{ctx}: {name} went back in partition {part} at offset {off}"
            last[part] = off
    by_offset = {(part, off): (k, v) for part, off, k, v in ru}
    assert len(by_offset) == len(ru)
    assert {(part, off): (k, v) for part, off, k, v in rc} == {(part, off): (k, v) for part, off, k, v in rc2}, \
        f"{ctx}: two read_committed reads disagree"
    for part, off, k, v in rc:
        assert by_offset.get((part, off)) == (k, v), \
            f"{ctx}: offset {part}/{off} is {(k, v)} read_committed but {by_offset.get((part, off))} uncommitted"

    # Exactly once: every input record once, no duplicate, nothing aborted, no torn transaction.
    keys = [k for _, _, k, _ in rc]
    dups = {k for k in keys if keys.count(k) > 1}
    assert not dups, f"{ctx}: duplicates in read_committed output: {sorted(dups)[:10]}"
    expected_keys = {f"{q}:{o}" for q, n in ends.items() for o in range(n)}
    assert set(keys) == expected_keys, \
        f"{ctx}: lost {sorted(expected_keys - set(keys))[:10]}, unexpected {sorted(set(keys) - expected_keys)[:10]}"
    for part, off, k, v in rc:
        q, o = (int(x) for x in k.split(":"))
        assert q == part and v.split("|")[3] == f"v{o * PARTITIONS + q}", f"{ctx}: wrong value {v} for {k}"
    txn_records: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for _, _, _, v in rc:
        txn, size, index, _ = v.split("|")
        txn_records[txn].append((int(size), int(index)))
    for txn, parts in txn_records.items():
        size = parts[0][0]
        assert sorted(i for _, i in parts) == list(range(size)), f"{ctx}: torn transaction {txn}: {parts}"
    seen = set(txn_records)
    assert not (seen & aborted_txns), f"{ctx}: aborted transactions read committed: {sorted(seen & aborted_txns)}"
    assert committed_txns <= seen, f"{ctx}: committed transactions lost: {sorted(committed_txns - seen)}"

    # The group's committed offsets agree with the output.
    final = committed_offsets(broker.bootstrap, group, in_topic)
    per_partition = {q: sum(1 for k in keys if k.startswith(f"{q}:")) for q in range(PARTITIONS)}
    assert final == per_partition == ends, f"{ctx}: committed {final}, output {per_partition}, input {ends}"
    return {"kills": done_kills, "unexpected_exits": w.exits, "transactions": len(seen),
            "aborted": len(aborted_txns)}


@pytest.mark.timeout(400)
@pytest.mark.oracle_slow  # the Kafka variant: make test time
def test_eos_checker_short(eos_broker, tmp_path, topic_name):
    seed = int(os.environ.get("WEIR_EOS_SEED", random.randrange(1 << 30)))
    stats = run_checker(eos_broker, tmp_path, topic_name, workers=2, kills=3, records=400, seed=seed)
    assert stats["kills"] == 3
    assert stats["unexpected_exits"] == [], f"seed {seed}: workers exited by themselves: {stats}"


@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_eos_checker_long(eos_broker, tmp_path, topic_name):
    seed = int(os.environ.get("WEIR_EOS_SEED", random.randrange(1 << 30)))
    stats = run_checker(eos_broker, tmp_path, topic_name, workers=3, kills=12, records=3000, seed=seed)
    assert stats["kills"] == 12
    assert stats["unexpected_exits"] == [], f"seed {seed}: workers exited by themselves: {stats}"


class Copiers:
    """One TransactionalMessageCopier per input partition; restarted when killed or exited."""

    def __init__(self, broker, tmp: Path, in_topic: str, out_topic: str, group: str, timeout_ms: int):
        self.broker, self.tmp, self.in_topic, self.out_topic, self.group = broker, tmp, in_topic, out_topic, group
        self.timeout_ms = timeout_ms
        self.procs: dict[int, subprocess.Popen] = {}
        self.finished: set[int] = set()
        self.exits: list[tuple[int, int]] = []
        self.classpath = kafka_classpath_file().read_text().strip()

    def start(self, part: int) -> None:
        err = open(self.tmp / f"copier-{part}.log", "a")
        self.procs[part] = procs.spawn(
            ["java", "-Xmx256m", "-cp", self.classpath, "org.apache.kafka.tools.TransactionalMessageCopier",
             "--broker-list", self.broker.bootstrap, "--input-topic", self.in_topic, "--input-partition", str(part),
             "--output-topic", self.out_topic, "--consumer-group", self.group, "--transactional-id",
             f"{self.group}-copier-{part}", "--transaction-size", "10", "--transaction-timeout",
             str(self.timeout_ms), "--enable-random-aborts", "--use-group-metadata"],
            stdout=err, stderr=err)

    def poll(self) -> None:
        for part, p in list(self.procs.items()):
            rc = p.poll()
            if rc is None:
                continue
            procs.forget(p)
            del self.procs[part]
            if rc == 0:
                self.finished.add(part)
            else:
                self.exits.append((part, rc))
                self.start(part)

    def signal(self, part: int, sig: int) -> bool:
        p = self.procs.get(part)
        if p is None or p.poll() is not None:
            return False
        p.send_signal(sig)
        if sig == signal.SIGKILL:
            p.wait()
            procs.forget(p)
            del self.procs[part]
            self.start(part)
        return True

    def stop_all(self) -> None:
        for p in self.procs.values():
            if p.poll() is None:
                p.send_signal(signal.SIGCONT)
                p.send_signal(signal.SIGKILL)
                p.wait()
            procs.forget(p)


def run_copier_checker(broker, tmp: Path, topic_name: str, *, kills: int, pauses: int, records: int, seed: int):
    rng = random.Random(seed)
    ctx = f"seed {seed}"
    in_topic, out_topic, group = f"{topic_name}-in", f"{topic_name}-out", f"{topic_name}-g"
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    for t in (in_topic, out_topic):
        admin.create_topics([NewTopic(t, PARTITIONS, 1)])[t].result(30)
    p = Producer({"bootstrap.servers": broker.bootstrap, "enable.idempotence": True, "linger.ms": 5})
    for i in range(records):
        p.produce(in_topic, partition=i % PARTITIONS, value=f"v{i}")
    assert p.flush(60) == 0
    ends = {q: len(range(q, records, PARTITIONS)) for q in range(PARTITIONS)}
    timeout_ms = 3000
    c = Copiers(broker, tmp, in_topic, out_topic, group, timeout_ms)
    for q in range(PARTITIONS):
        c.start(q)
    faults = ["kill"] * kills + ["pause"] * pauses
    rng.shuffle(faults)
    applied = []
    next_fault = time.monotonic() + rng.uniform(1.5, 2.5)
    deadline = time.monotonic() + 300
    try:
        while True:
            c.poll()
            if faults and time.monotonic() >= next_fault:
                running = sorted(c.procs)
                if not running:
                    faults.clear()  # nothing left to hit
                else:
                    victim = rng.choice(running)
                    if faults[0] == "kill":
                        c.signal(victim, signal.SIGKILL)
                    else:
                        # Longer than the transaction timeout plus the abort cleanup interval.
                        c.signal(victim, signal.SIGSTOP)
                        time.sleep(timeout_ms / 1000 + 2.5)
                        c.signal(victim, signal.SIGCONT)
                    applied.append(faults.pop(0))
                next_fault = time.monotonic() + rng.uniform(0.5, 1.5)
            committed = committed_offsets(broker.bootstrap, group, in_topic)
            if not faults and committed == ends:
                break
            assert time.monotonic() < deadline, \
                f"{ctx}: copiers did not finish: committed {committed}, ends {ends}, exits {c.exits}"
            time.sleep(0.3)
    finally:
        c.stop_all()

    stable = wait_stable(admin, out_topic, timeout=60)
    assert all(lso == hw for lso, hw in stable.values()), f"{ctx}: LSO behind HW (hanging transaction): {stable}"
    rc = read_all(broker.bootstrap, out_topic, "read_committed")
    rc2 = read_all(broker.bootstrap, out_topic, "read_uncommitted")
    by_offset = {(part, off): v for part, off, _, v in rc2}
    for part, off, _, v in rc:
        assert by_offset.get((part, off)) == v, f"{ctx}: offset {part}/{off} has two values"
    last: dict[int, int] = {}
    for part, off, _, _ in rc:
        assert off > last.get(part, -1), f"{ctx}: read_committed went back in partition {part}"
        last[part] = off
    values = [v for _, _, _, v in rc]
    dups = {v for v in values if values.count(v) > 1}
    assert not dups, f"{ctx}: duplicates (or aborted records) read committed: {sorted(dups)[:10]}"
    assert set(values) == {f"v{i}" for i in range(records)}, f"{ctx}: lost committed records"
    final = committed_offsets(broker.bootstrap, group, in_topic)
    assert final == ends, f"{ctx}: committed offsets {final}, input ends {ends}"
    # The faults must have met running copiers (they have far more to copy than the faults take).
    assert applied, f"{ctx}: every copier finished before the first fault"
    return {"exits": c.exits, "faults": applied}


@pytest.mark.timeout(500)
@pytest.mark.oracle_slow  # the Kafka variant: make test time
def test_eos_checker_java_copier(eos_broker, tmp_path, topic_name):
    seed = int(os.environ.get("WEIR_EOS_SEED", random.randrange(1 << 30)))
    run_copier_checker(eos_broker, tmp_path, topic_name, kills=2, pauses=1, records=4000, seed=seed)


@pytest.mark.slow
@pytest.mark.timeout(1500)
def test_eos_checker_java_copier_long(eos_broker, tmp_path, topic_name):
    seed = int(os.environ.get("WEIR_EOS_SEED", random.randrange(1 << 30)))
    run_copier_checker(eos_broker, tmp_path, topic_name, kills=8, pauses=4, records=20000, seed=seed)
