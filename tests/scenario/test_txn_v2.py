"""Transaction protocol v2 (KIP-890 part 2), on weir and on Apache Kafka 4.3.1 with the same steps.

A single Kafka 4.3.1 node formatted with its defaults finalizes transaction.version 2, and so does a
single weir node. Then, for a client on v2:
  - a transactional Produce v12+ adds its partition to the transaction itself (no
    AddPartitionsToTxn), also with transaction.partition.verification.enable=false;
  - EndTxn v5 bumps the producer epoch and answers the new one; a retry with the old epoch is
    answered NONE with the current ids; an abort without a transaction is allowed (and bumps);
  - TxnOffsetCommit v5 adds the group's `__consumer_offsets` partition itself;
  - the markers carry the bumped epoch (WriteTxnMarkers v2).
A fence (InitProducerId meeting an Ongoing transaction) aborts one epoch up, for v1 and v2
transactions alike. Kafka's Java producer (TransactionalMessageCopier from kafka-tools) then runs
v2 against both brokers: every committed transaction bumps the epoch.
"""
from __future__ import annotations

import subprocess
import time

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from harness import procs, run_tool
from harness.kreq import Kreq
from harness.paths import kafka_classpath_file
from test_txn_partitions import batch

TX = "tv2-app"
RETRIABLE = {14, 15, 16}  # coordinator loading / not available / not coordinator
CONCURRENT_TRANSACTIONS = 51


@pytest.fixture(params=[
    pytest.param("weir", id="weir"),
    pytest.param("kafka", id="kafka", marks=(pytest.mark.kafka, pytest.mark.differential)),
])
def tv2_broker(request):
    """weir or a Kafka of the test's own (the test leaves transactional ids behind)."""
    settings = {"transaction.abort.timed.out.transaction.cleanup.interval.ms": 1000}
    if request.param == "weir":
        return request.getfixturevalue("weir_factory")(settings=settings)
    return request.getfixturevalue("kafka_factory")(overrides=settings)


def retrying(call, what: str, retriable=RETRIABLE, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    while True:
        result = call()
        code = result[0] if isinstance(result, tuple) else result
        if code not in retriable:
            return result
        assert time.monotonic() < deadline, f"{what}: still error {code} after {timeout}s"
        time.sleep(0.2)


class Txn:
    def __init__(self, k: Kreq, topic: str):
        self.k, self.topic = k, topic
        self.seq = 0

    def describe(self) -> tuple:
        def call():
            s = self.k.send("DescribeTransactions", 0, {"TransactionalIDs": [TX]})["TransactionStates"][0]
            return s["ErrorCode"], s["State"], s["ProducerEpoch"], sorted(
                (t["Topic"], p) for t in s["Topics"] for p in t["Partitions"])
        return retrying(call, "DescribeTransactions")[1:]

    def wait_state(self, state: str, timeout: float = 30.0) -> tuple:
        deadline = time.monotonic() + timeout
        while True:
            d = self.describe()
            if d[0] == state:
                return d
            assert time.monotonic() < deadline, f"still {d}, waiting for {state}"
            time.sleep(0.1)

    def init(self) -> tuple[int, int, int]:
        def call():
            r = self.k.send("InitProducerID", 4, {"TransactionalID": TX, "TransactionTimeoutMillis": 60000,
                                                  "ProducerID": -1, "ProducerEpoch": -1})
            return r["ErrorCode"], r["ProducerID"], r["ProducerEpoch"]
        return retrying(call, "InitProducerId", RETRIABLE | {CONCURRENT_TRANSACTIONS})

    def produce(self, pid: int, epoch: int, version: int, seq: int | None = None) -> int:
        seq = self.seq if seq is None else seq
        r = self.k.send("Produce", version, {
            "TransactionID": TX, "Acks": -1, "TimeoutMillis": 15000, "Topics": [{"Topic": self.topic, "Partitions": [
                {"Partition": 0, "Records": batch([b"v"], pid, epoch, seq, transactional=True)}]}]})
        code = r["Topics"][0]["Partitions"][0]["ErrorCode"]
        if code == 0:
            self.seq = seq + 1
        return code

    def end(self, pid: int, epoch: int, commit: bool, version: int = 5) -> tuple[int, int, int]:
        r = self.k.send("EndTxn", version, {"TransactionalID": TX, "ProducerID": pid, "ProducerEpoch": epoch,
                                            "Commit": commit})
        return r["ErrorCode"], r.get("ProducerID", -1), r.get("ProducerEpoch", -1)

    def stable_equals_end(self) -> bool:
        r = self.k.send("ListOffsets", 7, {"ReplicaID": -1, "IsolationLevel": 1, "Topics": [
            {"Topic": self.topic, "Partitions": [{"Partition": 0, "Timestamp": -1, "CurrentLeaderEpoch": -1}]}]})
        lso = r["Topics"][0]["Partitions"][0]["Offset"]
        r = self.k.send("ListOffsets", 7, {"ReplicaID": -1, "IsolationLevel": 0, "Topics": [
            {"Topic": self.topic, "Partitions": [{"Partition": 0, "Timestamp": -1, "CurrentLeaderEpoch": -1}]}]})
        return lso == r["Topics"][0]["Partitions"][0]["Offset"]


def open_txn(k: Kreq, topic_name: str) -> Txn:
    r = k.send("CreateTopics", 7, {"Topics": [{"Topic": topic_name, "NumPartitions": 1, "ReplicationFactor": 1}],
                                   "TimeoutMillis": 15000})
    assert r["Topics"][0]["ErrorCode"] == 0, r
    retrying(lambda: k.send("FindCoordinator", 3, {"CoordinatorKey": TX, "CoordinatorType": 1})["ErrorCode"],
             "FindCoordinator")
    return Txn(k, topic_name)


def test_features_advertise_transaction_version_2(tv2_broker):
    with Kreq(tv2_broker) as k:
        v3 = k.send("ApiVersions", 3, {"ClientSoftwareName": "weir-test", "ClientSoftwareVersion": "1"})
        r = k.send("ApiVersions", 4, {"ClientSoftwareName": "weir-test", "ClientSoftwareVersion": "1"})
    for answer in (v3, r):
        finalized = {f["Name"]: (f["MinVersionLevel"], f["MaxVersionLevel"]) for f in answer["FinalizedFeatures"]}
        assert finalized["transaction.version"] == (2, 2)
        assert answer["FinalizedFeaturesEpoch"] >= 0
    # v3 leaves out supported features whose range starts at 0 (KIP-1022), v4 lists them.
    assert "transaction.version" not in {f["Name"] for f in v3["SupportedFeatures"]}
    supported = {f["Name"]: (f["MinVersion"], f["MaxVersion"]) for f in r["SupportedFeatures"]}
    assert supported["transaction.version"] == (0, 2)
    keys = {a["ApiKey"]: a["MaxVersion"] for a in r["ApiKeys"]}
    assert keys[0] >= 12 and keys[26] >= 5 and keys[27] >= 2 and keys[28] >= 5
    out = run_tool("kafka-features", "describe", bootstrap=tv2_broker, check=True)
    line = next(ln for ln in out.lines if "Feature: transaction.version" in ln)
    assert "SupportedMinVersion: 0" in line and "SupportedMaxVersion: 2" in line and \
        "FinalizedVersionLevel: 2" in line, line


def test_end_txn_v5_bumps_the_epoch_and_produce_v12_adds_the_partition(tv2_broker, topic_name):
    with Kreq(tv2_broker) as k:
        t = open_txn(k, topic_name)
        code, pid, epoch = t.init()
        assert (code, epoch) == (0, 0)
        # Produce v12 starts the transaction: no AddPartitionsToTxn.
        assert retrying(lambda: t.produce(pid, 0, 12), "Produce") == 0
        assert t.describe() == ("Ongoing", 0, [(topic_name, 0)])
        assert t.end(pid, 0, True) == (0, pid, 1)
        assert t.wait_state("CompleteCommit") == ("CompleteCommit", 1, [])
        # A retry with the old epoch: NONE with the current ids; a commit at the current epoch
        # without a transaction: INVALID_TXN_STATE (48); an epoch ahead: PRODUCER_FENCED (90).
        assert t.end(pid, 0, True) == (0, pid, 1)
        assert t.end(pid, 1, True) == (48, -1, -1)
        assert t.end(pid, 2, False) == (90, -1, -1)
        # An abort without a transaction bumps too.
        assert t.end(pid, 1, False) == (0, pid, 2)
        assert t.wait_state("CompleteAbort") == ("CompleteAbort", 2, [])
        # The old epoch is fenced from producing; the answered one starts the next transaction
        # at sequence 0.
        assert t.produce(pid, 1, 12, seq=0) == 47  # INVALID_PRODUCER_EPOCH
        assert retrying(lambda: t.produce(pid, 2, 12, seq=0), "Produce") == 0
        assert t.describe() == ("Ongoing", 2, [(topic_name, 0)])
        assert not t.stable_equals_end()
        assert t.end(pid, 2, False) == (0, pid, 3)
        t.wait_state("CompleteAbort")
        assert t.stable_equals_end()
        # Fetch at read_committed: the aborted record is not returned; the committed one is.
        r = k.send("Fetch", 11, {
            "ReplicaID": -1, "MaxWaitMillis": 0, "MinBytes": 0, "MaxBytes": 1 << 20, "IsolationLevel": 1,
            "SessionID": 0, "SessionEpoch": -1, "Topics": [{"Topic": topic_name, "Partitions": [{
                "Partition": 0, "CurrentLeaderEpoch": -1, "FetchOffset": 0, "LogStartOffset": -1,
                "PartitionMaxBytes": 1 << 20}]}]})
        p = r["Topics"][0]["Partitions"][0]
        # Offsets: 0 data, 1 commit marker, 2 data, 3 abort marker.
        assert [(a["ProducerID"], a["FirstOffset"]) for a in p["AbortedTransactions"]] == [(pid, 2)]
        assert p["LastStableOffset"] == p["HighWatermark"] == 4


def test_fence_aborts_one_epoch_up_for_v1_and_v2_transactions(tv2_broker, topic_name):
    with Kreq(tv2_broker) as k:
        t = open_txn(k, topic_name)
        _, pid, epoch = t.init()
        # v2 transaction, then a second InitProducerId fences and aborts it.
        assert retrying(lambda: t.produce(pid, epoch, 12), "Produce") == 0
        r = k.send("InitProducerID", 4, {"TransactionalID": TX, "TransactionTimeoutMillis": 60000,
                                        "ProducerID": -1, "ProducerEpoch": -1})
        assert r["ErrorCode"] == CONCURRENT_TRANSACTIONS
        assert t.wait_state("CompleteAbort") == ("CompleteAbort", epoch + 1, [])
        code, pid2, epoch2 = t.init()
        assert (code, pid2, epoch2) == (0, pid, epoch + 2)
        # A v1 transaction (AddPartitionsToTxn v3, Produce v9) fenced the same way.
        r = k.send("AddPartitionsToTxn", 3, {"TransactionalID": TX, "ProducerID": pid, "ProducerEpoch": epoch2,
                                            "Topics": [{"Topic": topic_name, "Partitions": [0]}]})
        assert r["Topics"][0]["Partitions"][0]["ErrorCode"] == 0
        assert retrying(lambda: t.produce(pid, epoch2, 9, seq=0), "Produce") == 0
        r = k.send("InitProducerID", 4, {"TransactionalID": TX, "TransactionTimeoutMillis": 60000,
                                        "ProducerID": -1, "ProducerEpoch": -1})
        assert r["ErrorCode"] == CONCURRENT_TRANSACTIONS
        assert t.wait_state("CompleteAbort") == ("CompleteAbort", epoch2 + 1, [])
        assert t.init() == (0, pid, epoch2 + 2)
        assert t.stable_equals_end()


def test_produce_v12_adds_the_partition_without_verification(request, topic_name):
    """Kafka adds the partition of a Produce v12+ whatever transaction.partition.verification.enable
    says (ReplicaManager skips the coordinator only for a v11- request with verification off)."""
    results = {}
    for kind in ("weir", "kafka"):
        settings = {"transaction.partition.verification.enable": "false"}
        b = (request.getfixturevalue("weir_factory")(settings=settings) if kind == "weir"
             else request.getfixturevalue("kafka_factory")(overrides=settings))
        with Kreq(b) as k:
            t = open_txn(k, f"{topic_name}-{kind}")
            _, pid, epoch = t.init()
            assert retrying(lambda: t.produce(pid, epoch, 12), "Produce") == 0
            results[kind] = t.describe()
            assert t.end(pid, epoch, True) == (0, pid, epoch + 1)
            t.wait_state("CompleteCommit")
            assert t.stable_equals_end()
        b.stop()
    assert results["weir"] == ("Ongoing", 0, [(f"{topic_name}-weir", 0)])
    assert results["kafka"] == ("Ongoing", 0, [(f"{topic_name}-kafka", 0)])


def test_txn_offset_commit_v5_adds_the_offsets_partition(tv2_broker, topic_name):
    group = f"{topic_name}-g"
    with Kreq(tv2_broker) as k:
        t = open_txn(k, topic_name)
        retrying(lambda: k.send("FindCoordinator", 3, {"CoordinatorKey": group, "CoordinatorType": 0})["ErrorCode"],
                 "FindCoordinator(group)")
        _, pid, epoch = t.init()

        def commit(version: int) -> int:
            r = k.send("TxnOffsetCommit", version, {
                "TransactionalID": TX, "Group": group, "ProducerID": pid, "ProducerEpoch": epoch,
                "Generation": -1, "MemberID": "", "Topics": [{"Topic": topic_name, "Partitions": [
                    {"Partition": 0, "Offset": 7, "LeaderEpoch": -1, "Metadata": ""}]}]})
            return r["Topics"][0]["Partitions"][0]["ErrorCode"]

        # v4 with verification on: the offsets partition is not in the transaction. FindCoordinator
        # can answer before the coordinator has loaded its partition (Kafka then answers
        # NOT_COORDINATOR for a while): wait for a real answer.
        assert retrying(lambda: commit(4), "TxnOffsetCommit v4") == 120  # TRANSACTION_ABORTABLE
        assert commit(3) == 48  # INVALID_TXN_STATE
        assert t.describe() == ("Empty", 0, [])
        # v5 adds it.
        assert retrying(lambda: commit(5), "TxnOffsetCommit") == 0
        state, _, parts = t.describe()
        assert state == "Ongoing" and len(parts) == 1 and parts[0][0] == "__consumer_offsets"
        assert t.end(pid, epoch, True) == (0, pid, epoch + 1)
        t.wait_state("CompleteCommit")

        def fetched():
            r = k.send("OffsetFetch", 7, {"Group": group, "RequireStable": True,
                                          "Topics": [{"Topic": topic_name, "Partitions": [0]}]})
            p = r["Topics"][0]["Partitions"][0]
            return p["ErrorCode"], p["Offset"]
        assert retrying(fetched, "OffsetFetch", {14, 15, 16, 88}) == (0, 7)


class Copier:
    """Kafka's TransactionalMessageCopier (the Java producer) over one partition, no aborts."""

    def __init__(self, broker, log_path, in_topic: str, out_topic: str, group: str, transactional_id: str):
        classpath = kafka_classpath_file().read_text().strip()
        self.log = open(log_path, "w")
        self.proc = procs.spawn(
            ["java", "-Xmx256m", "-cp", classpath, "org.apache.kafka.tools.TransactionalMessageCopier",
             "--broker-list", broker.bootstrap, "--input-topic", in_topic, "--input-partition", "0",
             "--output-topic", out_topic, "--consumer-group", group, "--transactional-id", transactional_id,
             "--transaction-size", "10", "--transaction-timeout", "30000", "--use-group-metadata",
             "--max-messages", "100"],
            stdout=self.log, stderr=self.log)

    def wait(self, timeout: float) -> int:
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise
        finally:
            procs.forget(self.proc)
            self.log.close()


@pytest.mark.timeout(240)
def test_java_producer_runs_transaction_v2(tv2_broker, tmp_path, topic_name):
    """100 records copied in transactions of 10 by the Java producer: on v2 each EndTxn bumps the
    epoch, so the transactional id ends at epoch 10 (0 after InitProducerId)."""
    in_topic, out_topic, group = f"{topic_name}-in", f"{topic_name}-out", f"{topic_name}-g"
    admin = AdminClient({"bootstrap.servers": tv2_broker.bootstrap})
    for name in (in_topic, out_topic):
        admin.create_topics([NewTopic(name, 1, 1)])[name].result(30)
    p = Producer({"bootstrap.servers": tv2_broker.bootstrap, "enable.idempotence": True})
    for i in range(100):
        p.produce(in_topic, value=f"v{i}")
    assert p.flush(60) == 0
    copier = Copier(tv2_broker, tmp_path / "copier.log", in_topic, out_topic, group, f"{topic_name}-copier")
    rc = copier.wait(180)
    assert rc == 0, (tmp_path / "copier.log").read_text()[-3000:]
    out = run_tool("kafka-transactions", "describe", "--transactional-id", f"{topic_name}-copier",
                   bootstrap=tv2_broker, check=True)
    header, row = out.lines[0].split(), out.lines[1].split()
    described = dict(zip(header, row))
    assert described["TransactionState"] == "CompleteCommit"
    assert described["ProducerEpoch"] == "10", out.stdout
    c = Consumer({"bootstrap.servers": tv2_broker.bootstrap, "group.id": f"{topic_name}-reader",
                  "isolation.level": "read_committed", "enable.partition.eof": True, "auto.offset.reset": "earliest"})
    try:
        c.assign([TopicPartition(out_topic, 0, 0)])
        values = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            m = c.poll(1.0)
            if m is None:
                continue
            if m.error():
                if m.error().code() == -191:  # partition EOF
                    break
                raise AssertionError(m.error())
            values.append(m.value().decode())
    finally:
        c.close()
    assert values == [f"v{i}" for i in range(100)]
    committed = Consumer({"bootstrap.servers": tv2_broker.bootstrap, "group.id": group}).committed(
        [TopicPartition(in_topic, 0)], timeout=30)
    assert committed[0].offset == 100
