"""Transactions across a broker crash, and KIP-890's guard against hanging transactions (issue 14),
against weir and Apache Kafka 4.3.1 (same script, both brokers, each a broker of the test's own).

1. kill -9 of the broker mid-transaction: a confluent-kafka transactional producer (its own
   process) commits two transactions to `out` (the second also commits offset 4 of `in` for group
   `g` with send_offsets_to_transaction), then opens a third one (records o-*, offset 8 for `g`)
   and is abandoned: the broker is killed with SIGKILL, the producer too, and the broker restarted
   on the same data dir. Before the crash the open transaction is Ongoing in `kafka-transactions
   describe` and open in both its partitions (DescribeProducers, LSOs: out-0 and the group's
   __consumer_offsets partition). The recovered coordinator has it back and aborts it once its
   timeout has passed (CompleteAbort, the epoch bumped as for any timed-out transaction);
   read_committed readers see only the committed records and reach the end (the LSO is the high
   watermark), the group keeps the committed offset (OffsetFetch with require_stable is stable
   again), and a new producer with the same transactional.id commits a new transaction.
2. KIP-890 part 1 (transaction.partition.verification.enable=true, the default): a Produce that
   arrives after its transaction was aborted (same producer id and epoch, the next sequence) is
   refused, with the error code of its Produce version, and leaves no open transaction in the
   partition (LSO == HW, DescribeProducers has no transaction start offset, `kafka-transactions
   find-hanging` finds nothing); so is a Produce to a partition never added to the transaction.

The expected values spelled out below are what Kafka 4.3.1 answers (the tests pass on Kafka).
"""
from __future__ import annotations

import base64
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from confluent_kafka import Consumer, IsolationLevel, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic, OffsetSpec

from harness import parse_table, procs, run_tool
from harness.kreq import Kreq
from harness.kafka_hash import partition_for
from test_txn_partitions import batch, batches_of

TOOL_ENV = {"KAFKA_JVM_PERFORMANCE_OPTS": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Djava.awt.headless=true"}
BROKER_SETTINGS = {
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": 1000,
    "transaction.partition.verification.enable": "true",  # Kafka's default, spelled out
    # After kill -9 of a combined Kafka node its controller keeps the dead incarnation's
    # registration for broker.session.timeout.ms; the restarted broker registers (and serves)
    # only once that is fenced. Shorter than the default 9 s, so the restart ends well inside the
    # transaction timeout below.
    "broker.session.timeout.ms": 3000,
    "broker.heartbeat.interval.ms": 500,
}
# Long enough for Kafka's restart to finish before the coordinator aborts the open transaction:
# a Kafka coordinator that aborts it while its own broker still waits to re-register (requests
# not served yet) cannot deliver the markers; once the old registration is fenced it drops them
# ("Couldn't find leader endpoint ... likely deleted already and hence can be skipped") and
# completes the abort anyway, leaving the partition's LSO stuck for good.
TXN_TIMEOUT_MS = 25000
OFFSETS_PARTITIONS = 50  # offsets.topic.num.partitions, the default of both brokers

NONE = 0
INVALID_TXN_STATE = 48
UNSTABLE_OFFSET_COMMIT = 88
TRANSACTION_ABORTABLE = 120
NOT_READY = {14, 15, 16}  # coordinator loading, not available, not coordinator


@pytest.fixture(params=[
    pytest.param("weir", id="weir"),
    # The oracle variant is slow (make test time); the weir variant runs in make test.
    pytest.param("kafka", id="kafka", marks=(pytest.mark.kafka, pytest.mark.differential, pytest.mark.slow)),
])
def crash_broker(request):
    """weir or a Kafka of the test's own (restartable), with the same transaction settings."""
    if request.param == "weir":
        return request.getfixturevalue("weir_factory")(settings=BROKER_SETTINGS)
    return request.getfixturevalue("kafka_factory")(overrides=BROKER_SETTINGS)


# ------------------------------------------------------------------------------ helpers
def wait_for(what: str, fn, ok, timeout: float = 60.0, interval: float = 0.3):
    """fn() until ok(answer), failing with the last answer after timeout seconds."""
    deadline = time.monotonic() + timeout
    while True:
        answer = fn()
        if ok(answer):
            return answer
        assert time.monotonic() < deadline, f"{what}: still {answer!r} after {timeout}s"
        time.sleep(interval)


def offsets_partition(group: str) -> int:
    """The __consumer_offsets partition of a group."""
    return partition_for(group, OFFSETS_PARTITIONS)


def describe_txn(broker, txn_id: str) -> dict[str, str]:
    out = run_tool("kafka-transactions", "describe", "--transactional-id", txn_id, bootstrap=broker,
                   env=TOOL_ENV, timeout=90).check().stdout
    [row] = parse_table(out, header_first="CoordinatorId")
    return row


def txn_state(k: Kreq, txn_id: str) -> dict:
    """DescribeTransactions v0 for one id (cheap enough to poll)."""
    [s] = k.send("DescribeTransactions", 0, {"TransactionalIDs": [txn_id]})["TransactionStates"]
    return s


def wait_txn_state(k: Kreq, txn_id: str, state: str, timeout: float = 60.0) -> dict:
    return wait_for(f"transaction {txn_id} state {state}", lambda: txn_state(k, txn_id),
                    lambda s: s["ErrorCode"] == NONE and s["State"] == state, timeout=timeout, interval=0.25)


def latest_offsets(admin: AdminClient, topic: str, partition: int = 0) -> tuple[int, int]:
    """(high watermark, last stable offset): ListOffsets latest at both isolation levels."""
    tp = TopicPartition(topic, partition)
    hw = admin.list_offsets({tp: OffsetSpec.latest()},
                            isolation_level=IsolationLevel.READ_UNCOMMITTED)[tp].result(30).offset
    lso = admin.list_offsets({tp: OffsetSpec.latest()},
                             isolation_level=IsolationLevel.READ_COMMITTED)[tp].result(30).offset
    return hw, lso


def read_to_end(bootstrap: str, topic: str, isolation: str) -> tuple[list[str], int]:
    """Every value of partition 0 from the start until the consumer reaches its end; and the
    consumer's position there."""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"reader-{isolation}-{time.monotonic_ns()}",
                  "enable.auto.commit": False, "enable.partition.eof": True, "isolation.level": isolation})
    try:
        c.assign([TopicPartition(topic, 0, 0)])
        values: list[str] = []
        deadline = time.monotonic() + 60
        while True:
            assert time.monotonic() < deadline, f"{isolation} read of {topic} did not reach the end: {values}"
            m = c.poll(0.5)
            if m is None:
                continue
            if m.error():
                assert m.error().code() == KafkaError._PARTITION_EOF, str(m.error())
                [pos] = c.position([TopicPartition(topic, 0)])
                return values, pos.offset
            values.append(m.value().decode())
    finally:
        c.close()


def describe_producers(k: Kreq, topic: str, partition: int) -> dict[int, tuple[int, int, int]]:
    """DescribeProducers: {producer id: (epoch, last sequence, current transaction start offset)}."""
    resp = k.send("DescribeProducers", 0, {"Topics": [{"Topic": topic, "Partitions": [partition]}]})
    p = resp["Topics"][0]["Partitions"][0]
    assert p["ErrorCode"] == NONE, p
    return {a["ProducerID"]: (a["ProducerEpoch"], a["LastSequence"], a["CurrentTxnStartOffset"])
            for a in p["ActiveProducers"]}


def latest(k: Kreq, topic: str, partition: int, isolation: int) -> int:
    """ListOffsets v7 latest: the high watermark (isolation 0) or the last stable offset (1)."""
    resp = k.send("ListOffsets", 7, {"ReplicaID": -1, "IsolationLevel": isolation, "Topics": [
        {"Topic": topic, "Partitions": [{"Partition": partition, "CurrentLeaderEpoch": -1, "Timestamp": -1}]}]})
    p = resp["Topics"][0]["Partitions"][0]
    assert p["ErrorCode"] == NONE, p
    return p["Offset"]


def offset_fetch(k: Kreq, group: str, topic: str, require_stable: bool) -> tuple[int, int]:
    """OffsetFetch v8 of partition 0: (error code, offset); retried while the coordinator loads."""
    def call():
        resp = k.send("OffsetFetch", 8, {"Groups": [{"Group": group, "Topics": [{"Topic": topic, "Partitions": [0]}]}],
                                         "RequireStable": require_stable})
        [g] = resp["Groups"]
        if g["ErrorCode"] != NONE:
            return g["ErrorCode"], None
        [t] = g["Topics"]
        [p] = t["Partitions"]
        return p["ErrorCode"], p["Offset"]
    return wait_for(f"OffsetFetch {group}", call, lambda r: r[0] not in NOT_READY, timeout=60)


def group_offsets(broker, group: str, topic: str) -> dict[int, str]:
    res = run_tool("kafka-consumer-groups", "--describe", "--group", group, bootstrap=broker, env=TOOL_ENV,
                   timeout=90).check()
    return {int(r["PARTITION"]): r["CURRENT-OFFSET"] for r in parse_table(res.stdout, header_first="GROUP")
            if r["TOPIC"] == topic}


# The producer of scenario 1, in a process of its own so that it can be abandoned (SIGKILL) with
# the broker: two committed transactions, one left open; it writes READY_FILE and then waits.
PRODUCER_APP = r'''
import json, sys, time
from confluent_kafka import Consumer, Producer, TopicPartition

cfg = json.loads(sys.argv[1])
p = Producer({"bootstrap.servers": cfg["bootstrap"], "transactional.id": cfg["txn_id"],
              "transaction.timeout.ms": cfg["timeout_ms"], "linger.ms": 0})
group = Consumer({"bootstrap.servers": cfg["bootstrap"], "group.id": cfg["group"], "enable.auto.commit": False})
meta = group.consumer_group_metadata()
p.init_transactions(60)
n = 0
for size, offset in cfg["committed"]:
    p.begin_transaction()
    for _ in range(size):
        p.produce(cfg["out"], partition=0, value=f"c-{n}".encode())
        n += 1
    if offset is not None:
        p.send_offsets_to_transaction([TopicPartition(cfg["in"], 0, offset)], meta, 60)
    p.commit_transaction(60)
p.begin_transaction()
for i in range(cfg["open"]):
    p.produce(cfg["out"], partition=0, value=f"o-{i}".encode())
assert p.flush(60) == 0
p.send_offsets_to_transaction([TopicPartition(cfg["in"], 0, cfg["open_offset"])], meta, 60)
with open(cfg["ready"] + ".tmp", "w") as f:
    json.dump({"committed_values": n}, f)
import os
os.rename(cfg["ready"] + ".tmp", cfg["ready"])
while True:  # abandoned here: never commits, never aborts
    time.sleep(3600)
'''


def start_producer_app(broker, tmp: Path, cfg: dict) -> tuple[subprocess.Popen, dict]:
    ready = tmp / "producer-ready.json"
    with open(tmp / "producer.log", "w") as log:
        proc = procs.spawn([sys.executable, "-c", PRODUCER_APP,
                            json.dumps({**cfg, "ready": str(ready), "bootstrap": broker.bootstrap})],
                           stdout=log, stderr=log)
    deadline = time.monotonic() + 120
    while not ready.exists():
        if proc.poll() is not None:
            procs.forget(proc)
            raise AssertionError(f"producer app exited with {proc.returncode}:\n{(tmp / 'producer.log').read_text()}")
        assert time.monotonic() < deadline, f"producer app not ready:\n{(tmp / 'producer.log').read_text()}"
        time.sleep(0.1)
    return proc, json.loads(ready.read_text())


# ------------------------------------------------------------------------------ 1. kill -9
@pytest.mark.timeout(300)
def test_kill_9_mid_transaction_aborts_it_after_restart(crash_broker, tmp_path):
    b = crash_broker
    in_topic, out_topic, group, txn_id = "in", "out", "g", "crash-app"
    admin = AdminClient({"bootstrap.servers": b.bootstrap})
    for f in admin.create_topics([NewTopic(in_topic, 1, 1), NewTopic(out_topic, 1, 1)]).values():
        f.result(30)
    plain = Producer({"bootstrap.servers": b.bootstrap, "enable.idempotence": True})
    for i in range(10):
        plain.produce(in_topic, partition=0, value=f"in-{i}".encode())
    assert plain.flush(30) == 0

    # Two committed transactions (c-0..c-2, then c-3..c-5 with offset 4 of `in` for g), then an
    # open one: o-0..o-3 and offset 8 for g.
    app, info = start_producer_app(b, tmp_path, {
        "txn_id": txn_id, "timeout_ms": TXN_TIMEOUT_MS, "group": group, "in": in_topic, "out": out_topic,
        "committed": [[3, None], [3, 4]], "open": 4, "open_offset": 8})
    committed = [f"c-{i}" for i in range(info["committed_values"])]
    assert committed == ["c-0", "c-1", "c-2", "c-3", "c-4", "c-5"]
    opened = [f"o-{i}" for i in range(4)]

    before = describe_txn(b, txn_id)
    assert before["TransactionState"] == "Ongoing", before
    assert before["ProducerEpoch"] == "0", before
    assert before["TransactionTimeoutMs"] == str(TXN_TIMEOUT_MS), before
    assert sorted(before["TopicPartitions"].split(",")) == \
        sorted([f"{out_topic}-0", f"__consumer_offsets-{offsets_partition(group)}"]), before
    producer_id = before["ProducerId"]
    pid = int(producer_id)
    # Six records and two commit markers are stable; the open transaction's four are not.
    assert latest_offsets(admin, out_topic) == (12, 8)
    offsets_tp = ("__consumer_offsets", offsets_partition(group))
    with Kreq(b) as k:
        # The open transaction in its partitions: out-0 from offset 8 (last sequence 9), and the
        # group's __consumer_offsets partition from its pending offset commit at offset 2 (the
        # committed transaction's commit and marker are at 0 and 1; coordinators write sequence 0).
        assert describe_producers(k, out_topic, 0) == {pid: (0, 9, 8)}
        open_in_offsets = (describe_producers(k, *offsets_tp), latest(k, *offsets_tp, 0), latest(k, *offsets_tp, 1))
        # The pending offsets: invisible to a plain fetch, unstable to a stable one.
        assert offset_fetch(k, group, in_topic, require_stable=False) == (NONE, 4)
        assert offset_fetch(k, group, in_topic, require_stable=True) == (UNSTABLE_OFFSET_COMMIT, -1)

    # The crash: the broker and the producer are gone, nothing ends the transaction but the
    # coordinator's timeout.
    b.kill()
    app.send_signal(signal.SIGKILL)
    app.wait()
    procs.forget(app)
    b.restart()
    # A client of its own after the restart: the old one's metadata has the partitions' leader
    # epochs before it (Kafka's are bumped: its ListOffsets would answer FENCED_LEADER_EPOCH).
    admin = AdminClient({"bootstrap.servers": b.bootstrap})

    with Kreq(b) as k:
        # The restarted coordinator has the open transaction back from its log (the restart
        # ended before the transaction timed out), then aborts it on its timeout.
        recovered = wait_for("DescribeTransactions after the restart", lambda: txn_state(k, txn_id),
                             lambda s: s["ErrorCode"] not in NOT_READY, timeout=30)
        assert recovered["ErrorCode"] == NONE and recovered["State"] == "Ongoing", \
            f"the transaction was no longer open after the restart (slow restart?): {recovered}"
        assert sorted((t["Topic"], p) for t in recovered["Topics"] for p in t["Partitions"]) == \
            sorted([(out_topic, 0), ("__consumer_offsets", offsets_partition(group))]), recovered
        wait_txn_state(k, txn_id, "CompleteAbort", timeout=90)
    after = describe_txn(b, txn_id)
    assert after["TransactionState"] == "CompleteAbort", after
    assert after["ProducerId"] == producer_id, after
    # A timed-out transaction is aborted with a bumped epoch (the abandoned producer is fenced).
    assert after["ProducerEpoch"] == "1", after
    assert after["TopicPartitions"] == "", after
    with Kreq(b) as k:
        # The abort markers (of the bumped epoch) closed the transaction in both partitions.
        assert describe_producers(k, out_topic, 0) == {pid: (1, -1, -1)}
        assert describe_producers(k, *offsets_tp) == {pid: (1, -1, -1)}

    # The LSO is not stuck: read_committed ends at the high watermark.
    hw, lso = wait_for("LSO == HW", lambda: latest_offsets(admin, out_topic), lambda r: r[0] == r[1], timeout=30)
    assert (hw, lso) == (13, 13), "6 committed records, 2 commit markers, 4 aborted records, 1 abort marker"
    values, position = read_to_end(b.bootstrap, out_topic, "read_committed")
    assert values == committed
    assert position == hw
    values, position = read_to_end(b.bootstrap, out_topic, "read_uncommitted")
    assert values == committed + opened
    assert position == hw

    # The group keeps the committed transaction's offset; nothing stays pending.
    assert group_offsets(b, group, in_topic) == {0: "4"}
    with Kreq(b) as k:
        assert offset_fetch(k, group, in_topic, require_stable=False) == (NONE, 4)
        assert wait_for("OffsetFetch require_stable after the abort",
                        lambda: offset_fetch(k, group, in_topic, require_stable=True),
                        lambda r: r[0] != UNSTABLE_OFFSET_COMMIT, timeout=30) == (NONE, 4)

    # A new instance of the application: same transactional.id, a new epoch, a new transaction.
    fresh = Producer({"bootstrap.servers": b.bootstrap, "transactional.id": txn_id,
                      "transaction.timeout.ms": TXN_TIMEOUT_MS})
    fresh.init_transactions(60)
    fresh.begin_transaction()
    fresh.produce(out_topic, partition=0, value=b"n-0")
    fresh.commit_transaction(60)
    with Kreq(b) as k:
        wait_txn_state(k, txn_id, "CompleteCommit", timeout=30)
    row = describe_txn(b, txn_id)
    assert row["TransactionState"] == "CompleteCommit", row
    assert row["ProducerId"] == producer_id and row["ProducerEpoch"] == "2", row
    values, position = read_to_end(b.bootstrap, out_topic, "read_committed")
    assert values == committed + ["n-0"]
    assert position == 15 and latest_offsets(admin, out_topic) == (15, 15)

    # Asserted last, so that the recovery above is checked whatever this says: before the crash,
    # the pending offset commit had opened the transaction in the group's __consumer_offsets
    # partition too (DescribeProducers, and its LSO held at the transaction's first offset).
    assert open_in_offsets == ({pid: (0, 0, 2)}, 3, 2), \
        f"{offsets_tp} before the crash: (producers, HW, LSO) = {open_in_offsets}"


# ------------------------------------------------------------------------------ 2. KIP-890
class Raw:
    """The requests of scenario 2 over one kreq connection."""

    def __init__(self, k: Kreq, topic: str):
        self.k, self.topic = k, topic

    def create_topic(self) -> None:
        resp = self.k.send("CreateTopics", 7, {"Topics": [
            {"Topic": self.topic, "NumPartitions": 1, "ReplicationFactor": 1}], "TimeoutMillis": 15000})
        assert resp["Topics"][0]["ErrorCode"] == NONE, resp
        def leader_error() -> int:
            resp = self.k.send("ListOffsets", 7, {"ReplicaID": -1, "Topics": [
                {"Topic": self.topic, "Partitions": [{"Partition": 0, "Timestamp": -1}]}]})
            return resp["Topics"][0]["Partitions"][0]["ErrorCode"]
        wait_for("topic leader", leader_error, lambda e: e == NONE, timeout=30)

    def init_producer(self, txn_id: str) -> tuple[int, int]:
        wait_for("FindCoordinator", lambda: self.k.send("FindCoordinator", 4, {
            "CoordinatorType": 1, "CoordinatorKeys": [txn_id]})["Coordinators"][0]["ErrorCode"],
            lambda e: e == NONE, timeout=60)
        resp = wait_for("InitProducerId", lambda: self.k.send("InitProducerId", 4, {
            "TransactionalID": txn_id, "TransactionTimeoutMillis": 60000, "ProducerID": -1, "ProducerEpoch": -1}),
            lambda r: r["ErrorCode"] not in NOT_READY, timeout=60)
        assert resp["ErrorCode"] == NONE, resp
        return resp["ProducerID"], resp["ProducerEpoch"]

    def add_partition(self, txn_id: str, pid: int, epoch: int) -> int:
        resp = self.k.send("AddPartitionsToTxn", 3, {"TransactionalID": txn_id, "ProducerID": pid,
                                                     "ProducerEpoch": epoch,
                                                     "Topics": [{"Topic": self.topic, "Partitions": [0]}]})
        [t] = resp["Topics"]
        [p] = t["Partitions"]
        return p["ErrorCode"]

    def produce(self, records: bytes, txn_id: str, version: int) -> tuple[int, int, str | None]:
        resp = self.k.send("Produce", version, {
            "TransactionID": txn_id, "Acks": -1, "TimeoutMillis": 15000,
            "Topics": [{"Topic": self.topic, "Partitions": [{"Partition": 0, "Records": records}]}]})
        p = resp["Topics"][0]["Partitions"][0]
        return p["ErrorCode"], p["BaseOffset"], p.get("ErrorMessage")

    def end_txn(self, txn_id: str, pid: int, epoch: int, commit: bool) -> int:
        return self.k.send("EndTxn", 3, {"TransactionalID": txn_id, "ProducerID": pid, "ProducerEpoch": epoch,
                                         "Commit": commit})["ErrorCode"]

    def latest(self, isolation: int) -> int:
        return latest(self.k, self.topic, 0, isolation)

    def producers(self) -> dict[int, tuple[int, int, int]]:
        return describe_producers(self.k, self.topic, 0)

    def fetch_committed(self) -> dict:
        resp = self.k.send("Fetch", 11, {
            "ReplicaID": -1, "MaxWaitMillis": 0, "MinBytes": 0, "MaxBytes": 1 << 20, "IsolationLevel": 1,
            "SessionID": 0, "SessionEpoch": -1,
            "Topics": [{"Topic": self.topic, "Partitions": [{
                "Partition": 0, "CurrentLeaderEpoch": -1, "FetchOffset": 0, "LogStartOffset": -1,
                "PartitionMaxBytes": 1 << 20}]}]})
        p = resp["Topics"][0]["Partitions"][0]
        return {"error": p["ErrorCode"], "hw": p["HighWatermark"], "lso": p["LastStableOffset"],
                "batches": batches_of(base64.b64decode(p["RecordBatches"] or ""))}


def find_hanging(broker) -> list[str]:
    """`kafka-transactions find-hanging` for the broker's partitions; any transaction open in a
    partition longer than 0 minutes that its coordinator does not know as ongoing is listed."""
    res = run_tool("kafka-transactions", "find-hanging", "--broker-id", broker.node_id,
                   "--max-transaction-timeout", "0", bootstrap=broker, env=TOOL_ENV, timeout=90).check()
    return res.lines


PRODUCE_VERSIONS = (3, 8, 9, 10, 11)  # the first with record batch v2; error messages from v8; v11 (KIP-890)
# What Kafka answers for a transactional Produce of a partition not in the producer's transaction:
# (error code, base offset, error message) by Produce version.
NOT_ADDED = "Partition was not added to the transaction"
NOT_IN_TRANSACTION = {3: (INVALID_TXN_STATE, -1, None), 8: (INVALID_TXN_STATE, -1, NOT_ADDED),
                      9: (INVALID_TXN_STATE, -1, NOT_ADDED), 10: (INVALID_TXN_STATE, -1, NOT_ADDED),
                      11: (TRANSACTION_ABORTABLE, -1, None)}
# find-hanging's output when it finds nothing: its table's header only.
NO_HANGING = ["\t".join(["Topic", "Partition", "ProducerId", "ProducerEpoch", "CoordinatorEpoch", "StartOffset",
                         "LastTimestamp", "Duration(min)"])]


@pytest.mark.timeout(240)
def test_produce_after_abort_cannot_leave_a_hanging_transaction(crash_broker, topic_name):
    b = crash_broker
    txn_id = f"{topic_name}-late"
    with Kreq(b) as k:
        r = Raw(k, topic_name)
        r.create_topic()
        pid, epoch = r.init_producer(txn_id)
        assert epoch == 0
        assert r.add_partition(txn_id, pid, epoch) == NONE
        assert r.produce(batch([b"a-0", b"a-1"], pid, epoch, 0, True), txn_id, 9)[:2] == (NONE, 0)
        assert r.producers()[pid] == (0, 1, 0)
        assert (r.latest(0), r.latest(1)) == (2, 0)
        assert r.end_txn(txn_id, pid, epoch, commit=False) == NONE
        wait_txn_state(k, txn_id, "CompleteAbort")
        assert describe_txn(b, txn_id)["TransactionState"] == "CompleteAbort"
        assert (r.latest(0), r.latest(1)) == (3, 3)

        # The late produce of the aborted transaction: same producer id and epoch, next sequence.
        # Refused before the append (INVALID_TXN_STATE through v10, TRANSACTION_ABORTABLE from
        # v11), so no transaction is opened in the partition.
        late = {}
        for version in PRODUCE_VERSIONS:
            late[version] = r.produce(batch([b"late"], pid, epoch, 2, True), txn_id, version)
            assert (r.latest(0), r.latest(1)) == (3, 3), version
            assert r.producers()[pid] == (0, 1, -1), version
        assert late == NOT_IN_TRANSACTION
        assert r.fetch_committed() == {"error": NONE, "hw": 3, "lso": 3,
                                       "batches": [(0, "txn"), (2, "abort")]}

        # A transactional Produce for a partition never added to the (empty) transaction.
        other = f"{topic_name}-unadded"
        pid2, epoch2 = r.init_producer(other)
        never_added = {}
        for version in PRODUCE_VERSIONS:
            never_added[version] = r.produce(batch([b"x"], pid2, epoch2, 0, True), other, version)
            assert (r.latest(0), r.latest(1)) == (3, 3), version
        assert never_added == NOT_IN_TRANSACTION
        assert pid2 not in r.producers()
        assert txn_state(k, other)["State"] == "Empty"

    assert find_hanging(b) == NO_HANGING
