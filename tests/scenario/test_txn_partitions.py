"""The partition side of transactions, without a transaction coordinator: transactional batches
built by hand (an idempotent producer id from InitProducerId, the transactional bit set, a
transactional.id in the Produce request), ended with raw WriteTxnMarkers (as `kafka-transactions
abort` sends them), then read back: Fetch at read_committed and read_uncommitted (batches,
last stable offset, aborted transactions), ListOffsets at both isolation levels, DescribeProducers
(coordinator epoch, open transaction's start offset), the LSO with DeleteRecords past an open
transaction, and the Java console consumer hiding an aborted record at read_committed.

Each runs on weir and on Kafka with transaction.partition.verification.enable=false (Kafka would
otherwise ask its coordinator about the made-up transactional.id), and the transcripts must match."""
from __future__ import annotations

import base64
import struct
import time

import pytest

from harness import run_tool
from harness.kreq import Kreq
from harness.records import crc32c, varint

NO_VERIFICATION = {"transaction.partition.verification.enable": "false"}
UNKNOWN_TOPIC_OR_PARTITION = 3
TRANSACTION_COORDINATOR_FENCED = 52
RETRIABLE = {3, 5, 6, 14, 15}  # a new topic's leader not known yet, coordinator loading


@pytest.fixture(params=[
    pytest.param("weir", id="weir"),
    pytest.param("kafka", id="kafka", marks=(pytest.mark.kafka, pytest.mark.differential)),
])
def txn_broker(request):
    """weir or a Kafka of the test's own, both without KIP-890 verification."""
    if request.param == "weir":
        return request.getfixturevalue("weir_factory")(settings=NO_VERIFICATION)
    return request.getfixturevalue("kafka_factory")(overrides=NO_VERIFICATION)


# ------------------------------------------------------------------------------ record batches
def _record(offset_delta: int, value: bytes) -> bytes:
    body = (b"\x00" + varint(0) + varint(offset_delta) + varint(-1)  # attributes, ts delta, delta, null key
            + varint(len(value)) + value + varint(0))  # value, no headers
    return varint(len(body)) + body


def batch(values: list[bytes], producer_id: int = -1, epoch: int = -1, base_sequence: int = -1,
          transactional: bool = False, timestamp: int | None = None) -> bytes:
    """A RecordBatch v2 as a producer sends it (base offset 0, uncompressed, CreateTime `timestamp`,
    now by default)."""
    now = int(time.time() * 1000) if timestamp is None else timestamp
    attributes = 0x10 if transactional else 0
    records = b"".join(_record(i, v) for i, v in enumerate(values))
    after_crc = struct.pack(">hiqqqhii", attributes, len(values) - 1, now, now, producer_id, epoch,
                            base_sequence, len(values)) + records
    after_length = struct.pack(">ibI", -1, 2, crc32c(after_crc)) + after_crc
    return struct.pack(">qi", 0, len(after_length)) + after_length


def batches_of(data: bytes) -> list[tuple[int, str]]:
    """(base offset, kind) of each batch: 'data', 'txn', 'commit' or 'abort'."""
    out = []
    pos = 0
    while pos + 12 <= len(data):
        base_offset, length = struct.unpack_from(">qi", data, pos)
        attributes = struct.unpack_from(">h", data, pos + 21)[0]
        kind = "txn" if attributes & 0x10 else "data"
        if attributes & 0x20:
            # One control record: length, attributes, ts delta, offset delta, key length, key.
            rec = pos + 61
            key_at = rec + 1 + 1 + 1 + 1 + 1  # varints of small values are one byte each
            key_type = struct.unpack_from(">h", data, key_at + 2)[0]
            kind = {0: "abort", 1: "commit"}[key_type]
        out.append((base_offset, kind))
        pos += 12 + length
    return out


# ------------------------------------------------------------------------------ requests
def _retrying(call, what: str, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    while True:
        code, result = call()
        if code not in RETRIABLE:
            return code, result
        assert time.monotonic() < deadline, f"{what}: still error {code} after {timeout}s"
        time.sleep(0.3)


class Txns:
    def __init__(self, k: Kreq, topic: str):
        self.k = k
        self.topic = topic

    def create(self, partitions: int = 1) -> None:
        resp = self.k.send("CreateTopics", 7, {"Topics": [
            {"Topic": self.topic, "NumPartitions": partitions, "ReplicationFactor": 1}], "TimeoutMillis": 15000})
        assert resp["Topics"][0]["ErrorCode"] == 0, resp

    def producer(self) -> tuple[int, int]:
        def call():
            r = self.k.send("InitProducerID", 4, {"TransactionalID": None, "TransactionTimeoutMillis": 60000,
                                                  "ProducerID": -1, "ProducerEpoch": -1})
            return r["ErrorCode"], (r["ProducerID"], r["ProducerEpoch"])
        code, ids = _retrying(call, "InitProducerId")
        assert code == 0
        return ids

    def produce(self, records: bytes, transactional_id: str | None = None, version: int = 9) -> tuple[int, int]:
        def call():
            r = self.k.send("Produce", version, {
                "TransactionID": transactional_id, "Acks": -1, "TimeoutMillis": 15000,
                "Topics": [{"Topic": self.topic, "Partitions": [{"Partition": 0, "Records": records}]}]})
            p = r["Topics"][0]["Partitions"][0]
            return p["ErrorCode"], p["BaseOffset"]
        return _retrying(call, "Produce")

    def markers(self, markers: list[tuple[int, int, bool, int, list[tuple[str, list[int]]]]]) -> list:
        """WriteTxnMarkers v1: (producer id, epoch, commit, coordinator epoch, topics) each; the
        answer as (producer id, topic, partition, error code), sorted."""
        resp = self.k.send("WriteTxnMarkers", 1, {"Markers": [
            {"ProducerID": pid, "ProducerEpoch": epoch, "Committed": commit, "CoordinatorEpoch": coordinator_epoch,
             "Topics": [{"Topic": t, "Partitions": ps} for t, ps in topics]}
            for pid, epoch, commit, coordinator_epoch, topics in markers]})
        return sorted((m["ProducerID"], t["Topic"], p["Partition"], p["ErrorCode"])
                      for m in resp["Markers"] for t in m["Topics"] for p in t["Partitions"])

    def fetch(self, offset: int, isolation: int) -> dict:
        resp = self.k.send("Fetch", 11, {
            "ReplicaID": -1, "MaxWaitMillis": 0, "MinBytes": 0, "MaxBytes": 1 << 20, "IsolationLevel": isolation,
            "SessionID": 0, "SessionEpoch": -1,
            "Topics": [{"Topic": self.topic, "Partitions": [{
                "Partition": 0, "CurrentLeaderEpoch": -1, "FetchOffset": offset, "LogStartOffset": -1,
                "PartitionMaxBytes": 1 << 20}]}]})
        p = resp["Topics"][0]["Partitions"][0]
        aborted = p["AbortedTransactions"]
        return {
            "error": p["ErrorCode"], "hw": p["HighWatermark"], "lso": p["LastStableOffset"],
            "log_start": p["LogStartOffset"],
            "aborted": None if aborted is None else sorted((a["ProducerID"], a["FirstOffset"]) for a in aborted),
            "batches": batches_of(base64.b64decode(p["RecordBatches"] or "")),
        }

    def latest(self, isolation: int) -> int:
        resp = self.k.send("ListOffsets", 7, {"ReplicaID": -1, "IsolationLevel": isolation, "Topics": [
            {"Topic": self.topic, "Partitions": [{"Partition": 0, "CurrentLeaderEpoch": -1, "Timestamp": -1}]}]})
        p = resp["Topics"][0]["Partitions"][0]
        assert p["ErrorCode"] == 0, p
        return p["Offset"]

    def producers(self) -> list[tuple]:
        resp = self.k.send("DescribeProducers", 0, {"Topics": [{"Topic": self.topic, "Partitions": [0]}]})
        p = resp["Topics"][0]["Partitions"][0]
        assert p["ErrorCode"] == 0, p
        return sorted((a["ProducerID"], a["ProducerEpoch"], a["LastSequence"], a["CoordinatorEpoch"],
                       a["CurrentTxnStartOffset"]) for a in p["ActiveProducers"])

    def delete_records(self, before: int) -> tuple[int, int]:
        resp = self.k.send("DeleteRecords", 2, {"Topics": [
            {"Topic": self.topic, "Partitions": [{"Partition": 0, "Offset": before}]}], "TimeoutMillis": 15000})
        p = resp["Topics"][0]["Partitions"][0]
        return p["ErrorCode"], p["LowWatermark"]


def run_markers_script(b, topic: str) -> list:
    """Two transactions (one aborted, one committed) around a plain batch, then stale and
    misdirected markers, a third transaction left open and DeleteRecords past it. Producer ids are
    replaced by their order of appearance so brokers can be compared."""
    out: list = []
    with Kreq(b) as k:
        s = Txns(k, topic)
        s.create()
        (a, a_epoch), (bb, b_epoch) = s.producer(), s.producer()
        name = {a: "A", bb: "B", -1: "-"}

        def named(rows):
            return [tuple(name.get(x, x) if i == 0 else x for i, x in enumerate(r)) for r in rows]

        out.append(("produce A", s.produce(batch([b"a0", b"a1"], a, a_epoch, 0, True), "tx-a")))
        out.append(("produce plain", s.produce(batch([b"p0"]))))
        out.append(("produce B", s.produce(batch([b"b0"], bb, b_epoch, 0, True), "tx-b")))
        out.append(("latest", s.latest(0), s.latest(1)))
        out.append(("fetch open committed", s.fetch(0, 1)))
        out.append(("producers open", named(s.producers())))
        out.append(("abort A", named(s.markers([(a, a_epoch, False, 3, [(topic, [0])])]))))
        out.append(("latest after abort", s.latest(0), s.latest(1)))
        out.append(("commit B", named(s.markers([(bb, b_epoch, True, 3, [(topic, [0])])]))))
        committed = s.fetch(0, 1)
        committed["aborted"] = named(committed["aborted"])
        out.append(("fetch committed", committed))
        out.append(("fetch uncommitted", s.fetch(0, 0)))
        out.append(("fetch committed from 5", {**s.fetch(5, 1), "batches": None}))
        # A coordinator epoch below the producer's last marker is fenced; a marker for a producer
        # without an open transaction is written; unknown partitions and topics.
        out.append(("stale and misdirected", named(s.markers([
            (a, a_epoch, True, 2, [(topic, [0])]),
            (bb, b_epoch, True, 4, [(topic, [0, 7]), (topic + "-missing", [0])]),
        ]))))
        out.append(("producers", named(s.producers())))
        # A third transaction stays open; DeleteRecords past its first offset leaves the LSO at
        # the log start.
        out.append(("produce A again", s.produce(batch([b"a2"], a, a_epoch, 2, True), "tx-a")))
        out.append(("produce plain 2", s.produce(batch([b"p1", b"p2"]))))
        out.append(("latest open", s.latest(0), s.latest(1)))
        # (At a batch boundary: a log start inside a batch puts Kafka's LSO at that batch's base.)
        out.append(("delete records", s.delete_records(8)))
        out.append(("latest after delete", s.latest(0), s.latest(1)))
        after_delete = s.fetch(8, 1)
        out.append(("fetch after delete", after_delete))
        out.append(("producers after delete", named(s.producers())))
    return out


@pytest.mark.differential
def test_markers_lso_and_read_committed_as_kafka(txn_broker, topic_name):
    transcript = run_markers_script(txn_broker, topic_name)
    got = dict((row[0], row[1:]) for row in transcript)
    # What Kafka answers (the same script passes on both brokers); spelled out to read it.
    assert got["produce A"] == ((0, 0),)
    assert got["latest"] == (4, 0)
    assert got["fetch open committed"][0] == {"error": 0, "hw": 4, "lso": 0, "log_start": 0, "aborted": [],
                                              "batches": []}
    assert got["abort A"] == ([("A", topic_name, 0, 0)],)
    assert got["latest after abort"] == (5, 3)
    assert got["fetch committed"][0] == {
        "error": 0, "hw": 6, "lso": 6, "log_start": 0, "aborted": [("A", 0)],
        "batches": [(0, "txn"), (2, "data"), (3, "txn"), (4, "abort"), (5, "commit")]}
    assert got["fetch uncommitted"][0]["aborted"] is None
    assert got["fetch uncommitted"][0]["batches"] == got["fetch committed"][0]["batches"]
    assert got["fetch committed from 5"][0]["aborted"] == [], "the aborted transaction ended before offset 5"
    assert got["producers open"] == ([("A", 0, 1, -1, 0), ("B", 0, 0, -1, 3)],)
    assert got["producers"] == ([("A", 0, 1, 3, -1), ("B", 0, 0, 4, -1)],)
    assert got["stale and misdirected"] == ([
        ("A", topic_name, 0, TRANSACTION_COORDINATOR_FENCED),
        ("B", topic_name, 0, 0),
        ("B", topic_name, 7, UNKNOWN_TOPIC_OR_PARTITION),
        ("B", topic_name + "-missing", 0, UNKNOWN_TOPIC_OR_PARTITION),
    ],)
    assert got["latest open"] == (10, 7)
    assert got["delete records"] == ((0, 8),)
    assert got["latest after delete"] == (10, 8), "the open transaction holds the LSO at the log start"
    assert got["fetch after delete"][0]["lso"] == 8
    assert ("A", 0, 2, 3, 7) in got["producers after delete"][0]


def test_console_consumer_hides_the_aborted_record_at_read_committed(txn_broker, topic_name):
    with Kreq(txn_broker) as k:
        s = Txns(k, topic_name)
        s.create()
        (a, ae), (bb, be) = s.producer(), s.producer()
        assert s.produce(batch([b"aborted-1"], a, ae, 0, True), "tx-a")[0] == 0
        assert s.produce(batch([b"plain-1"]))[0] == 0
        assert s.produce(batch([b"committed-1"], bb, be, 0, True), "tx-b")[0] == 0
        assert s.markers([(a, ae, False, 0, [(topic_name, [0])])])[0][3] == 0
        assert s.markers([(bb, be, True, 0, [(topic_name, [0])])])[0][3] == 0

    def consume(*extra: str) -> list[str]:
        result = run_tool("kafka-console-consumer", "--topic", topic_name, "--from-beginning",
                          "--max-messages", str(3 if not extra else 2), "--timeout-ms", "20000", *extra,
                          bootstrap=txn_broker)
        return [line for line in result.stdout.splitlines() if line]

    assert consume() == ["aborted-1", "plain-1", "committed-1"]
    assert consume("--isolation-level", "read_committed") == ["plain-1", "committed-1"]
