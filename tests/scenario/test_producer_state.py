"""Idempotent producer state survives broker restarts: a batch retried after a graceful restart or a
kill -9 is answered with the offset it was first written at and is not written twice; a gap in
the sequence is refused with OUT_OF_ORDER_SEQUENCE_NUMBER. The batches are built by hand (producer
id, epoch, sequence) and sent with kreq after InitProducerId, so the retries are exact; the same
steps run against a real Kafka (restarted the same ways) and the answers must match."""
from __future__ import annotations

import struct
import time

import pytest

from harness.kreq import Kreq
from harness.records import crc32c, varint

OUT_OF_ORDER_SEQUENCE_NUMBER = 45
# Answers a restarted broker may give before it leads the partition again (retried: nothing was
# written).
RETRIABLE = {3, 5, 6, 14, 15}  # unknown partition, no leader, not leader, coordinator loading/unavailable
PRODUCE_VERSION = 9


# ------------------------------------------------------------------------------ record batches
def record(offset_delta: int, value: bytes) -> bytes:
    body = (b"\x00" + varint(0) + varint(offset_delta) + varint(-1)  # attributes, ts delta, delta, null key
            + varint(len(value)) + value + varint(0))  # value, no headers
    return varint(len(body)) + body


def idempotent_batch(producer_id: int, epoch: int, base_sequence: int, values: list[bytes],
                     timestamp_ms: int) -> bytes:
    """A RecordBatch v2 as an idempotent producer sends it (base offset 0, uncompressed)."""
    records = b"".join(record(i, v) for i, v in enumerate(values))
    after_crc = struct.pack(">hiqqqhii", 0, len(values) - 1, timestamp_ms, timestamp_ms, producer_id, epoch,
                            base_sequence, len(values)) + records
    after_length = struct.pack(">ibI", -1, 2, crc32c(after_crc)) + after_crc  # leader epoch, magic, crc
    return struct.pack(">qi", 0, len(after_length)) + after_length


# ------------------------------------------------------------------------------ requests
def _retrying(call, what: str, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    while True:
        code, result = call()
        if code not in RETRIABLE:
            return code, result
        assert time.monotonic() < deadline, f"{what}: still error {code} after {timeout}s"
        time.sleep(0.5)


def create_topic(k: Kreq, topic: str) -> None:
    resp = k.send("CreateTopics", 7, {
        "Topics": [{"Topic": topic, "NumPartitions": 1, "ReplicationFactor": 1}], "TimeoutMillis": 15000})
    assert resp["Topics"][0]["ErrorCode"] == 0, resp


def init_producer_id(k: Kreq) -> tuple[int, int]:
    def call():
        r = k.send("InitProducerID", 4, {"TransactionalID": None, "TransactionTimeoutMillis": 60000,
                                         "ProducerID": -1, "ProducerEpoch": -1})
        return r["ErrorCode"], (r["ProducerID"], r["ProducerEpoch"])
    code, ids = _retrying(call, "InitProducerId")
    assert code == 0
    return ids


def produce(k: Kreq, topic: str, batch: bytes) -> tuple[int, int]:
    """(error code, base offset) of an acks=all produce of one batch to partition 0."""
    def call():
        r = k.send("Produce", PRODUCE_VERSION, {
            "TransactionID": None, "Acks": -1, "TimeoutMillis": 15000,
            "Topics": [{"Topic": topic, "Partitions": [{"Partition": 0, "Records": batch}]}]})
        p = r["Topics"][0]["Partitions"][0]
        return p["ErrorCode"], p["BaseOffset"]
    return _retrying(call, "Produce")


def log_end_offset(k: Kreq, topic: str) -> int:
    def call():
        r = k.send("ListOffsets", 7, {"ReplicaID": -1, "Topics": [
            {"Topic": topic, "Partitions": [{"Partition": 0, "Timestamp": -1}]}]})
        p = r["Topics"][0]["Partitions"][0]
        return p["ErrorCode"], p["Offset"]
    code, offset = _retrying(call, "ListOffsets")
    assert code == 0
    return offset


# ------------------------------------------------------------------------------ the scenario
def run_restarts(broker, topic: str, restarts: list[str]) -> list[tuple]:
    """Produces batches A, B; then per restart (graceful or kill) retries every batch sent so far,
    a gap, and one new batch. Returns every answer (what, error code, base offset) and the log
    end offsets, so brokers can be compared."""
    answers: list[tuple] = []
    now = int(time.time() * 1000)
    with Kreq(broker) as k:
        create_topic(k, topic)
        pid, epoch = init_producer_id(k)
    sent: list[tuple[str, bytes]] = []
    next_seq = 0

    def send_new(k: Kreq, name: str, count: int) -> None:
        nonlocal next_seq
        batch = idempotent_batch(pid, epoch, next_seq, [f"{name}{i}".encode() for i in range(count)], now)
        next_seq += count
        sent.append((name, batch))
        answers.append((name,) + produce(k, topic, batch))

    with Kreq(broker) as k:
        send_new(k, "A", 3)
        send_new(k, "B", 2)
        answers.append(("end", log_end_offset(k, topic)))
    for n, how in enumerate(restarts):
        if how == "kill":
            broker.kill()
            broker.start()
        else:
            broker.restart()
        with Kreq(broker) as k:
            for name, batch in reversed(sent):  # the latest first: all are known after a replay
                answers.append((f"{how}{n}:retry-{name}",) + produce(k, topic, batch))
            gap = idempotent_batch(pid, epoch, next_seq + 1, [b"gap"], now)
            answers.append((f"{how}{n}:gap",) + produce(k, topic, gap))
            answers.append((f"{how}{n}:end", log_end_offset(k, topic)))
            send_new(k, f"{how}{n}:new", 2)
            answers.append((f"{how}{n}:end-after-new", log_end_offset(k, topic)))
    return answers


def offsets_of(answers: list[tuple]) -> dict:
    return {a[0]: a[1:] for a in answers}


@pytest.mark.timeout(120)
@pytest.mark.parametrize("how", ["graceful", "kill"])
def test_retried_batch_after_restart_is_answered_with_its_original_offset(weir_factory, topic_name, how):
    broker = weir_factory()
    got = offsets_of(run_restarts(broker, topic_name, [how, how]))

    assert got["A"] == (0, 0) and got["B"] == (0, 3) and got["end"] == (5,)
    # The producer's last batch is a duplicate: success with its first offset, nothing written.
    assert got[f"{how}0:retry-B"] == (0, 3)
    assert got[f"{how}0:gap"] == (OUT_OF_ORDER_SEQUENCE_NUMBER, -1)
    assert got[f"{how}0:end"] == (5,)
    assert got[f"{how}0:new"] == (0, 5) and got[f"{how}0:end-after-new"] == (7,)
    # Second restart: the batch written after the first one is a duplicate too.
    assert got[f"{how}1:retry-{how}0:new"] == (0, 5)
    assert got[f"{how}1:gap"] == (OUT_OF_ORDER_SEQUENCE_NUMBER, -1)
    assert got[f"{how}1:end"] == (7,)
    assert got[f"{how}1:new"] == (0, 7) and got[f"{how}1:end-after-new"] == (9,)
    # Which older batches are still known follows Kafka: a snapshot keeps one batch per producer
    # (its last), and the batches after the snapshot are replayed from the log. An older batch
    # that is not known is out of order, never written again.
    if how == "graceful":
        # Every start loads the clean-shutdown snapshot at the log end: only the last batch.
        older = {"0:retry-A": OUT_OF_ORDER_SEQUENCE_NUMBER, "1:retry-B": OUT_OF_ORDER_SEQUENCE_NUMBER,
                 "1:retry-A": OUT_OF_ORDER_SEQUENCE_NUMBER}
    else:
        # First kill: no snapshot yet, the whole log is replayed (A and B known); the rebuild
        # then wrote a snapshot at 5 (B), so the second kill knows B and what followed, not A.
        older = {"0:retry-A": 0, "1:retry-B": 0, "1:retry-A": OUT_OF_ORDER_SEQUENCE_NUMBER}
    expected_offset = {"A": 0, "B": 3}
    for key, code in older.items():
        want = (code, expected_offset[key[-1]] if code == 0 else -1)
        assert got[f"{how}{key}"] == want, key


@pytest.mark.timeout(900)
@pytest.mark.differential
def test_retries_after_restarts_answer_like_kafka(weir_factory, kafka_factory, topic_name):
    restarts = ["kill", "graceful", "kill"]
    weir_answers = run_restarts(weir_factory(), topic_name, restarts)
    kafka_answers = run_restarts(kafka_factory(), topic_name, restarts)

    assert [a[0] for a in weir_answers] == [a[0] for a in kafka_answers]
    print("weir: ", weir_answers)
    print("kafka:", kafka_answers)
    first_offset = {a[0]: a[2] for a in weir_answers if a[0] in ("A", "B") or a[0].endswith(":new")}
    for w, k in zip(weir_answers, kafka_answers):
        what = w[0]
        retried = what.split(":retry-", 1)[1] if ":retry-" in what else None
        if retried is not None and w != k:
            # The one deliberate difference: after a crash Kafka's log recovery rebuilds the
            # producer state through a snapshot, which keeps only each producer's last batch, so
            # a retry of an older batch still in flight is OUT_OF_ORDER_SEQUENCE_NUMBER there;
            # weir replays the batches themselves and answers it as the duplicate it is. Both
            # leave the log unchanged (the end offsets below are compared as they are).
            assert k[1:] == (OUT_OF_ORDER_SEQUENCE_NUMBER, -1), (w, k)
            assert w[1:] == (0, first_offset[retried]), (w, k)
            continue
        assert w == k


# ------------------------------------------------------------------------------ framing checks
def plain_batch(values: list[bytes], attributes: int = 0) -> bytes:
    """A non-idempotent RecordBatch v2 (no producer id) with the given attributes."""
    records = b"".join(record(i, v) for i, v in enumerate(values))
    ts = int(time.time() * 1000)
    after_crc = struct.pack(">hiqqqhii", attributes, len(values) - 1, ts, ts, -1, -1, -1, len(values)) + records
    after_length = struct.pack(">ibI", -1, 2, crc32c(after_crc)) + after_crc
    return struct.pack(">qi", 0, len(after_length)) + after_length


def test_produce_record_set_rules_as_kafka(broker, topic_name):
    """ProduceRequest.validateRecords: exactly one batch per partition from v3 (INVALID_RECORD),
    no zstd before v7 (UNSUPPORTED_COMPRESSION_TYPE); nothing is written."""
    with Kreq(broker) as k:
        create_topic(k, topic_name)
        one = plain_batch([b"a"])
        assert produce(k, topic_name, one) == (0, 0)

        def send(version, records):
            r = k.send("Produce", version, {
                "TransactionID": None, "Acks": -1, "TimeoutMillis": 15000,
                "Topics": [{"Topic": topic_name, "Partitions": [{"Partition": 0, "Records": records}]}]})
            return r["Topics"][0]["Partitions"][0]["ErrorCode"]

        assert send(9, one + plain_batch([b"b"])) == 87
        assert send(6, plain_batch([b"c"], attributes=4)) == 76
        assert log_end_offset(k, topic_name) == 1


# ------------------------------------------------------------------------------ compressed batches
def gzip_batch(records: list[tuple[int, bytes]], base_ts: int, header_max_ts: int) -> bytes:
    """A gzip RecordBatch v2 whose records have the given timestamp deltas; the header's max
    timestamp is whatever the caller says (a client's claim the broker must not trust)."""
    import gzip
    body = b""
    for i, (ts_delta, value) in enumerate(records):
        r = b"\x00" + varint(ts_delta) + varint(i) + varint(1) + b"k" + varint(len(value)) + value + varint(0)
        body += varint(len(r)) + r
    payload = gzip.compress(body)
    after_crc = struct.pack(">hiqqqhii", 1, len(records) - 1, base_ts, header_max_ts, -1, -1, -1,
                            len(records)) + payload
    after_length = struct.pack(">ibI", -1, 2, crc32c(after_crc)) + after_crc
    return struct.pack(">qi", 0, len(after_length)) + after_length


def test_compressed_batch_records_are_validated_as_kafka(broker, topic_name):
    """Kafka decompresses a compressed batch on produce: every record's timestamp is checked
    (INVALID_TIMESTAMP for one outside message.timestamp.before.max.ms even if the header's
    timestamps are fine), and the batch's max timestamp is the records' largest, not the header's
    claim (ListOffsets MAX_TIMESTAMP shows it)."""
    with Kreq(broker) as k:
        r = k.send("CreateTopics", 7, {"TimeoutMillis": 30000, "ValidateOnly": False, "Topics": [{
            "Topic": topic_name, "NumPartitions": 1, "ReplicationFactor": 1,
            "Configs": [{"Name": "message.timestamp.before.max.ms", "Value": "3600000"}]}]})
        assert r["Topics"][0]["ErrorCode"] == 0, r
        now = int(time.time() * 1000)
        stale = gzip_batch([(0, b"fresh"), (-7_200_000, b"two hours old")], now, now)

        def send(records):
            def call():
                r = k.send("Produce", 9, {
                    "TransactionID": None, "Acks": -1, "TimeoutMillis": 15000,
                    "Topics": [{"Topic": topic_name, "Partitions": [{"Partition": 0, "Records": records}]}]})
                p = r["Topics"][0]["Partitions"][0]
                return None if p["ErrorCode"] in (3, 5, 6) else (p["ErrorCode"], p["BaseOffset"])
            return _retrying(call, "produce")

        assert send(stale) == (32, -1)
        # Header max timestamp understated by a minute: the stored batch carries the records' max.
        understated = gzip_batch([(0, b"a"), (60_000, b"b")], now - 120_000, now - 120_000)
        assert send(understated) == (0, 0)
        r = k.send("ListOffsets", 7, {"ReplicaID": -1, "IsolationLevel": 0, "Topics": [{
            "Topic": topic_name, "Partitions": [{"Partition": 0, "Timestamp": -3}]}]})
        p = r["Topics"][0]["Partitions"][0]
        assert (p["ErrorCode"], p["Offset"], p["Timestamp"]) == (0, 1, now - 60_000), p
