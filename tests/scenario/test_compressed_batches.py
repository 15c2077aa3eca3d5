"""Compressed producer batches: a valid batch is accepted whatever it decompresses to within
weir's limits (validated by streaming decompression, off the shards' event loops, in request
order), and a batch past them -- weir.produce.max.decompressed.batch.bytes (default 256 MiB),
weir.produce.max.compression.ratio (default 5000) -- is refused with INVALID_RECORD, which clients
do not retry, with a message naming the limit. Kafka has no such limits; where a test is
differential (the `broker` fixture), Kafka accepts the same batch."""
from __future__ import annotations

import base64
import gzip
import http.client
import os
import re
import socket
import struct
import time
import zlib

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from harness.kreq import Kreq
from harness.ports import free_port
from harness.records import crc32c, varint
from harness.wire import Reader, Writer, frame, request_header

MIB = 1 << 20
INVALID_RECORD = 87
PRODUCE = 0
RETRIABLE = {3, 5, 6}  # a partition not led yet, right after creating the topic


# ------------------------------------------------------------------------------ record batches
def batch(records_section: bytes, count: int, attributes: int) -> bytes:
    """A RecordBatch v2 from a client (base offset 0, no producer id) around a records section."""
    ts = int(time.time() * 1000)
    after_crc = struct.pack(">hiqqqhii", attributes, count - 1, ts, ts, -1, -1, -1, count) + records_section
    after_length = struct.pack(">ibI", -1, 2, crc32c(after_crc)) + after_crc
    return struct.pack(">qi", 0, len(after_length)) + after_length


def plain_batch(value: bytes) -> bytes:
    body = b"\x00" + varint(0) + varint(0) + varint(-1) + varint(len(value)) + value + varint(0)
    return batch(varint(len(body)) + body, 1, 0)


def gzip_zeros_batch(records: int, value_bytes: int) -> bytes:
    """A gzip batch of `records` records whose values are `value_bytes` zeros, compressed as it is
    built (the decompressed section never exists here)."""
    z = zlib.compressobj(6, zlib.DEFLATED, 16 + 15)
    zeros = bytes(min(value_bytes, MIB))
    parts = []
    for i in range(records):
        body_head = b"\x00" + varint(0) + varint(i) + varint(-1) + varint(value_bytes)
        parts.append(z.compress(varint(len(body_head) + value_bytes + 1) + body_head))
        left = value_bytes
        while left:
            n = min(left, len(zeros))
            parts.append(z.compress(zeros[:n]))
            left -= n
        parts.append(z.compress(b"\x00"))  # no headers
    parts.append(z.flush())
    return batch(b"".join(parts), records, 1)


# ------------------------------------------------------------------------------ helpers
def create_topic(broker, topic: str) -> None:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(timeout=60)


def produce_raw(k: Kreq, topic: str, records: bytes) -> dict:
    """One Produce v9 request (acks=1) of `records` to partition 0; its partition answer."""
    deadline = time.monotonic() + 60
    while True:
        r = k.send("Produce", 9, {"TransactionID": None, "Acks": 1, "TimeoutMillis": 30000, "Topics": [
            {"Topic": topic, "Partitions": [{"Partition": 0, "Records": records}]}]})
        p = r["Topics"][0]["Partitions"][0]
        if p["ErrorCode"] not in RETRIABLE or time.monotonic() > deadline:
            return p
        time.sleep(0.5)


_SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def metric(broker, name: str, **labels: str) -> float:
    """The sum of the samples of `name` whose labels include `labels` (0 if none)."""
    conn = http.client.HTTPConnection("127.0.0.1", broker.metrics_port, timeout=10)
    try:
        conn.request("GET", "/metrics")
        resp = conn.getresponse()
        body = resp.read().decode()
        assert resp.status == 200, body
    finally:
        conn.close()
    total = 0.0
    for line in body.splitlines():
        m = _SAMPLE.match(line)
        if not m or m.group(1) != name:
            continue
        have = dict(_LABEL.findall(m.group(2) or ""))
        if all(have.get(k) == v for k, v in labels.items()):
            total += float(m.group(3))
    return total


def produce_requests(broker) -> float:
    return metric(broker, "weir_requests_total", api="Produce")


def peak_rss_bytes(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


@pytest.fixture
def mweir(weir_factory):
    """weir with the metrics endpoint on a free port; more settings with mweir(settings)."""
    def start(settings: dict | None = None):
        port = free_port()
        b = weir_factory(settings={"metrics.listener": f"127.0.0.1:{port}", **(settings or {})})
        b.metrics_port = port
        return b
    return start


# ------------------------------------------------------------------------------ scenarios
@pytest.mark.timeout(240)
def test_gzip_batch_decompressing_to_100_mib_is_accepted_and_reads_back(broker, topic_name):
    """librdkafka with compression.type=gzip sends 100 records of 1 MiB of zeros in one batch
    (about 100 KiB compressed, well under message.max.bytes); Kafka and weir both store it and
    hand it back. weir used to refuse it with CORRUPT_MESSAGE (its old limit was 64 MiB)."""
    create_topic(broker, topic_name)
    p = Producer({"bootstrap.servers": broker.bootstrap, "acks": "all", "compression.type": "gzip",
                  "linger.ms": 5000, "batch.num.messages": 1000, "batch.size": 200 * MIB,
                  "message.max.bytes": 200 * MIB, "queue.buffering.max.kbytes": 400 * 1024})
    reports = []
    value = bytes(MIB)
    for _ in range(100):
        p.produce(topic_name, value=value, on_delivery=lambda err, msg: reports.append((err, msg.offset())))
    assert p.flush(120) == 0
    assert [err for err, _ in reports if err is not None] == []
    assert sorted(off for _, off in reports) == list(range(100))

    # One batch of 100 records, gzip, stored as sent.
    with Kreq(broker) as k:
        r = k.send("Fetch", 11, {"ReplicaID": -1, "MaxWaitMillis": 0, "MinBytes": 1, "MaxBytes": 8 * MIB,
                                 "IsolationLevel": 0, "Topics": [{"Topic": topic_name, "Partitions": [
                                     {"Partition": 0, "FetchOffset": 0, "PartitionMaxBytes": 8 * MIB}]}]})
        records = base64.b64decode(r["Topics"][0]["Partitions"][0]["RecordBatches"])
    base_offset, length = struct.unpack_from(">qi", records, 0)
    attributes, last_offset_delta = struct.unpack_from(">hi", records, 21)
    assert (base_offset, attributes & 7, last_offset_delta) == (0, 1, 99)
    assert length + 12 == len(records) < MIB

    c = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "reader", "enable.auto.commit": False,
                  "fetch.max.bytes": 50 * MIB, "receive.message.max.bytes": 60 * MIB})
    c.assign([TopicPartition(topic_name, 0, 0)])
    got = 0
    deadline = time.monotonic() + 120
    try:
        while got < 100 and time.monotonic() < deadline:
            msg = c.poll(1.0)
            if msg is None:
                continue
            if msg.error():
                raise KafkaException(msg.error())
            assert msg.offset() == got and msg.value() == value
            got += 1
    finally:
        c.close()
    assert got == 100


def test_bomb_past_the_size_limit_is_invalid_record_and_not_retried(mweir, topic_name):
    """librdkafka (which retries retriable errors for message.timeout.ms) sends one gzip batch
    decompressing past weir.produce.max.decompressed.batch.bytes: the delivery fails with
    INVALID_RECORD after exactly one Produce request, and nothing is stored."""
    b = mweir({"weir.produce.max.decompressed.batch.bytes": str(16 * MIB)})
    create_topic(b, topic_name)
    p = Producer({"bootstrap.servers": b.bootstrap, "acks": "all", "compression.type": "gzip",
                  "message.max.bytes": 100 * MIB, "batch.size": 100 * MIB, "linger.ms": 0})
    p.list_topics(topic_name, timeout=30)
    before = produce_requests(b)
    errors = []
    p.produce(topic_name, value=bytes(32 * MIB), on_delivery=lambda err, msg: errors.append(err))
    assert p.flush(60) == 0
    assert len(errors) == 1 and errors[0] is not None
    assert errors[0].code() == KafkaError.INVALID_RECORD, errors[0]
    assert not errors[0].retriable()
    assert produce_requests(b) == before + 1
    assert metric(b, "weir_limit_hits_total", limit="weir.produce.max.decompressed.batch.bytes") == 1
    with Kreq(b) as k:
        r = k.send("ListOffsets", 7, {"ReplicaID": -1, "Topics": [
            {"Topic": topic_name, "Partitions": [{"Partition": 0, "Timestamp": -1}]}]})
        assert r["Topics"][0]["Partitions"][0]["Offset"] == 0


def test_bomb_past_the_default_limit_gets_invalid_record_naming_it_in_bounded_memory(mweir, topic_name):
    """One raw Produce request carrying a 300 KiB gzip batch that decompresses to 300 MiB (past the
    256 MiB default): INVALID_RECORD with a message naming the limit, and weir's peak RSS grows by
    far less than the batch (streaming validation); the connection and the broker keep serving."""
    b = mweir()
    create_topic(b, topic_name)
    bomb = gzip_zeros_batch(300, MIB)
    assert len(bomb) < MIB
    with Kreq(b) as k:
        assert produce_raw(k, topic_name, plain_batch(b"before"))["ErrorCode"] == 0
        rss_before = peak_rss_bytes(b.pid)
        p = produce_raw(k, topic_name, bomb)
        assert p["ErrorCode"] == INVALID_RECORD, p
        assert "weir.produce.max.decompressed.batch.bytes" in (p["ErrorMessage"] or ""), p
        assert peak_rss_bytes(b.pid) - rss_before < 64 * MIB
        after = produce_raw(k, topic_name, plain_batch(b"after"))
        assert (after["ErrorCode"], after["BaseOffset"]) == (0, 1)


def test_batch_past_the_ratio_limit_gets_invalid_record_naming_it(mweir, topic_name):
    """With weir.produce.max.compression.ratio=100, a gzip batch of zeros (about 1000:1) is refused
    with INVALID_RECORD naming the ratio limit, while a batch of random-ish text passes."""
    b = mweir({"weir.produce.max.compression.ratio": "100"})
    create_topic(b, topic_name)
    with Kreq(b) as k:
        p = produce_raw(k, topic_name, gzip_zeros_batch(4, MIB))
        assert p["ErrorCode"] == INVALID_RECORD, p
        assert "weir.produce.max.compression.ratio" in (p["ErrorMessage"] or ""), p
        value = os.urandom(2000)  # does not compress: ratio about 1
        body = b"\x00" + varint(0) + varint(0) + varint(-1) + varint(len(value)) + value + varint(0)
        ok = produce_raw(k, topic_name, batch(gzip.compress(varint(len(body)) + body), 1, 1))
        assert ok["ErrorCode"] == 0, ok
    assert metric(b, "weir_limit_hits_total", limit="weir.produce.max.compression.ratio") == 1


def test_corrupt_gzip_stream_is_corrupt_message(weir, topic_name):
    """Truly corrupt compressed data (a gzip header, then a deflate block of the reserved type 3)
    stays CORRUPT_MESSAGE, as before the limits existed. Not differential: Kafka 4.3.1 answers this
    batch UNKNOWN_SERVER_ERROR (-1), logging `KafkaException: Failed to decompress record stream`
    from LogValidator (checked with this very batch)."""
    create_topic(weir, topic_name)
    corrupt = batch(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff" + b"\x07" + bytes(40), 1, 1)
    with Kreq(weir) as k:
        assert produce_raw(k, topic_name, plain_batch(b"first"))["ErrorCode"] == 0
        p = produce_raw(k, topic_name, corrupt)
        assert p["ErrorCode"] == 2, p


# ------------------------------------------------------------------------------ ordering
def encode_produce_v3(correlation_id: int, topic: str, records: bytes) -> bytes:
    body = (Writer().string(None).int16(1).int32(30000)  # transactional id, acks=1, timeout
            .int32(1).string(topic).int32(1).int32(0).int32(len(records)).raw(records).bytes())
    return frame(request_header(PRODUCE, 3, correlation_id) + body)


def read_frame(sock: socket.socket) -> bytes:
    def exactly(n: int) -> bytes:
        out = b""
        while len(out) < n:
            chunk = sock.recv(n - len(out))
            assert chunk, "connection closed"
            out += chunk
        return out
    (size,) = struct.unpack(">i", exactly(4))
    return exactly(size)


def decode_produce_v3(data: bytes) -> tuple[int, int, int]:
    """(correlation id, error code, base offset) of a one-partition Produce v3 response."""
    r = Reader(data)
    correlation_id = r.int32()
    assert r.int32() == 1
    r.string()
    assert r.int32() == 1
    r.int32()  # partition
    error, base_offset = r.int16(), r.int64()
    return correlation_id, error, base_offset


def test_pipelined_produces_append_in_request_order_when_one_is_compressed(broker, topic_name):
    """A compressed batch (validated off the event loop) followed, on the same connection and
    without waiting, by five uncompressed ones: the appends keep the requests' order, as Kafka's
    (one request at a time per connection) do."""
    create_topic(broker, topic_name)
    with Kreq(broker) as k:  # wait until the partition is led
        assert produce_raw(k, topic_name, plain_batch(b"first"))["ErrorCode"] == 0
    requests = [gzip_zeros_batch(20, MIB)] + [plain_batch(f"small-{i}".encode()) for i in range(5)]
    with socket.create_connection((broker.host, broker.port), timeout=60) as sock:
        sock.sendall(b"".join(encode_produce_v3(i + 1, topic_name, r) for i, r in enumerate(requests)))
        answers = [decode_produce_v3(read_frame(sock)) for _ in requests]
    assert answers == [(1, 0, 1), (2, 0, 21), (3, 0, 22), (4, 0, 23), (5, 0, 24), (6, 0, 25)]
