"""Zero-copy Fetch: record data goes from the segment files to the socket with sendfile(2).

weir only (what is checked is how weir sends, and its metrics; the answers themselves are compared
with Kafka's by test_fetch_sessions.py and the client tests). Each test checks what a client gets:
the bytes of every answer are the bytes of the segment file, at every Fetch version, for a client
that reads slowly, while the topic is deleted under the answer, and when a client hangs up halfway.
`weir_response_bytes_sent_total{source="files"}` shows the data went by sendfile.
"""
from __future__ import annotations

import base64
import socket
import struct
import time

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from harness import wire
from harness.kreq import Kreq
from test_kreq import create_topic, wait_for_leaders
from test_metrics import mweir, scrape  # noqa: F401 (mweir: weir with its metrics endpoint)

SEGMENT_BYTES = 1 << 20  # the smallest segment.bytes Kafka 4 and weir accept


def files_sent(broker) -> float:
    return scrape(broker).value("weir_response_bytes_sent_total", source="files")


def fill(broker, topic: str, partitions: int, records: int, value_size: int, *, segment_bytes: int | None = None,
         compression: str = "none") -> None:
    """Creates the topic and writes `records` records per partition with keys and headers."""
    with Kreq(broker) as k:
        body = {"Topics": [{"Topic": topic, "NumPartitions": partitions, "ReplicationFactor": 1, "Configs": []}],
                "TimeoutMillis": 15000}
        if segment_bytes:
            body["Topics"][0]["Configs"] = [{"Name": "segment.bytes", "Value": str(segment_bytes)}]
        [t] = k.send("CreateTopics", 7, body)["Topics"]
        assert t["ErrorCode"] == 0, t
        wait_for_leaders(k, topic, partitions)
    p = Producer({"bootstrap.servers": broker.bootstrap, "acks": "all", "linger.ms": 5,
                  "compression.type": compression, "batch.size": 64 * 1024})
    for part in range(partitions):
        for i in range(records):
            p.produce(topic, key=f"k{part}-{i}".encode(), value=payload(part, i, value_size), partition=part,
                      headers=[("h", str(i).encode())])
            if i % 1000 == 0:
                p.poll(0)
    assert p.flush(60) == 0


def payload(part: int, i: int, size: int) -> bytes:
    head = f"{part}:{i}:".encode()
    return head + bytes((i + j) % 251 for j in range(size - len(head)))


def log_file_bytes(broker, topic: str, partition: int) -> bytes:
    """The partition's segment files concatenated in offset order."""
    d = broker.data_dir / f"{topic}-{partition}"
    return b"".join(f.read_bytes() for f in sorted(d.glob("*.log")))


def test_consumer_reads_everything_sent_from_the_files(mweir):
    """confluent-kafka (CRCs checked) reads 4 partitions spread over several segments each; the
    record data it got went by sendfile."""
    topic = "zc-consume"
    per_partition = 3000
    fill(mweir, topic, 4, per_partition, 1000, segment_bytes=SEGMENT_BYTES)
    assert len(list((mweir.data_dir / f"{topic}-0").glob("*.log"))) >= 3
    before = files_sent(mweir)
    c = Consumer({"bootstrap.servers": mweir.bootstrap, "group.id": "zc", "enable.auto.commit": False,
                  "check.crcs": True, "fetch.max.bytes": 4 << 20, "max.partition.fetch.bytes": 1 << 20})
    c.assign([TopicPartition(topic, p, 0) for p in range(4)])
    seen = {p: 0 for p in range(4)}
    deadline = time.monotonic() + 60
    try:
        while sum(seen.values()) < 4 * per_partition and time.monotonic() < deadline:
            for m in c.consume(500, timeout=1.0):
                assert m.error() is None, m.error()
                part, i = m.partition(), seen[m.partition()]
                assert m.offset() == i
                assert m.key() == f"k{part}-{i}".encode()
                assert m.value() == payload(part, i, 1000)
                assert m.headers() == [("h", str(i).encode())]
                seen[part] += 1
    finally:
        c.close()
    assert seen == {p: per_partition for p in range(4)}
    sent = files_sent(mweir) - before
    on_disk = sum(len(log_file_bytes(mweir, topic, p)) for p in range(4))
    assert sent >= on_disk, (sent, on_disk)


@pytest.mark.parametrize("version", [4, 11, 12, 16, 17])
def test_every_fetch_version_answers_the_segment_bytes(weir, version):
    """Classic (int32) and compact (varint) record lengths around the data: the records of each
    answer are exactly the bytes of the segment file, batch after batch."""
    topic = f"zc-v{version}"
    fill(weir, topic, 2, 400, 700, compression="lz4")
    files = {p: log_file_bytes(weir, topic, p) for p in range(2)}
    with Kreq(weir) as k:
        md = wait_for_leaders(k, topic, 2)
        topic_id = md["Topics"][0]["TopicID"]
        got = {0: b"", 1: b""}
        offsets = {0: 0, 1: 0}
        for _ in range(100):
            if all(len(got[p]) == len(files[p]) for p in range(2)):
                break
            t = {"Topic": topic, "TopicID": topic_id, "Partitions": [
                {"Partition": p, "FetchOffset": offsets[p], "PartitionMaxBytes": 64 * 1024} for p in range(2)]}
            resp = k.send("Fetch", version, {"ReplicaID": -1, "MaxWaitMillis": 0, "MinBytes": 1,
                                             "MaxBytes": 1 << 20, "Topics": [t]})
            for rt in resp["Topics"]:
                for rp in rt["Partitions"]:
                    assert rp["ErrorCode"] == 0, rp
                    data = base64.b64decode(rp["RecordBatches"] or "")
                    got[rp["Partition"]] += data
                    offsets[rp["Partition"]] = next_offset(data, offsets[rp["Partition"]])
    for p in range(2):
        assert got[p] == files[p], f"partition {p}: {len(got[p])} bytes fetched, {len(files[p])} in the file"


def next_offset(data: bytes, current: int) -> int:
    """The offset after the last whole batch in data."""
    pos = 0
    while pos + 61 <= len(data):
        base, length = struct.unpack_from(">qi", data, pos)
        (last_delta,) = struct.unpack_from(">i", data, pos + 23)
        current = base + last_delta + 1
        pos += 12 + length
    return current


# ----------------------------------------------------------------- raw Fetch v4 on a slow socket
def fetch_v4(topic: str, partition: int, max_bytes: int, correlation_id: int = 7) -> bytes:
    w = wire.Writer()
    w.int32(-1).int32(0).int32(1).int32(max_bytes).int8(0)
    w.int32(1).string(topic).int32(1).int32(partition).int64(0).int32(max_bytes)
    return wire.frame(wire.request_header(1, 4, correlation_id, "zc-slow") + w.bytes())


def slow_socket(broker) -> socket.socket:
    """A connection whose receive buffer is small, so the broker's sends would block."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    host, port = broker.bootstrap.split(":")
    s.connect((host, int(port)))
    s.settimeout(30)
    return s


def recv_exact(s: socket.socket, n: int) -> bytes:
    out = bytearray()
    while len(out) < n:
        chunk = s.recv(min(1 << 20, n - len(out)))
        if not chunk:
            raise wire.ConnectionClosed(f"closed after {len(out)} of {n} bytes")
        out += chunk
    return bytes(out)


def records_of_v4(body: bytes) -> bytes:
    """The one partition's records of a Fetch v4 answer (after the correlation id)."""
    r = wire.Reader(body)
    r.int32()  # throttle
    assert r.array_len() == 1
    r.string()
    assert r.array_len() == 1
    r.int32()
    error = r.int16()
    assert error == 0, error
    r.int64(), r.int64()
    n = r.array_len()
    for _ in range(max(n, 0)):
        r.int64(), r.int64()
    size = r.int32()
    data = r._take(size)
    assert r.remaining() == 0
    return data


def test_slow_reader_gets_its_whole_answer_even_after_the_topic_is_deleted(mweir):
    """A client that does not read: the broker goes on serving others meanwhile; the topic is
    deleted while the answer waits (its files stay open); the client then reads every byte."""
    topic = "zc-slow"
    fill(mweir, topic, 1, 9000, 1000, segment_bytes=SEGMENT_BYTES)
    on_disk = log_file_bytes(mweir, topic, 0)
    want = 8 << 20  # above the socket buffers (Linux lets a send buffer grow to 4 MiB by default)
    before = files_sent(mweir)
    s = slow_socket(mweir)
    try:
        s.sendall(fetch_v4(topic, 0, want))
        time.sleep(0.5)
        sent_when_deleted = files_sent(mweir) - before
        with Kreq(mweir) as k:  # served while the slow answer is stuck in its socket
            [t] = k.send("DeleteTopics", 6, {"Topics": [{"Topic": topic}], "TimeoutMillis": 15000})["Topics"]
            assert t["ErrorCode"] == 0, t
            deadline = time.monotonic() + 15
            while (mweir.data_dir / f"{topic}-0").exists() and time.monotonic() < deadline:
                time.sleep(0.1)
            md = k.send("Metadata", 12, {"Topics": [{"Topic": topic}]})
            assert md["Topics"][0]["ErrorCode"] == 3, md
        (size,) = struct.unpack(">i", recv_exact(s, 4))
        body = recv_exact(s, size)
    finally:
        s.close()
    (correlation,) = struct.unpack_from(">i", body)
    assert correlation == 7
    data = records_of_v4(body[4:])
    assert len(data) >= want - (64 << 10), len(data)  # whole batches up to the limit
    assert data == on_disk[:len(data)]
    assert sent_when_deleted < len(data), "all of the answer had left before the topic was deleted"
    assert files_sent(mweir) - before >= len(data)


def test_client_hanging_up_halfway_leaves_the_broker_serving(mweir):
    topic = "zc-hangup"
    fill(mweir, topic, 1, 4000, 1000, segment_bytes=SEGMENT_BYTES)
    closed_before = scrape(mweir).value("weir_connections_closed_total")
    for _ in range(3):
        s = slow_socket(mweir)
        s.sendall(fetch_v4(topic, 0, 4 << 20))
        recv_exact(s, 100_000)
        s.close()
    deadline = time.monotonic() + 10
    while scrape(mweir).value("weir_connections_closed_total") < closed_before + 3:
        assert time.monotonic() < deadline, "the broker did not notice the clients leaving"
        time.sleep(0.1)
    s = slow_socket(mweir)
    try:
        s.sendall(fetch_v4(topic, 0, 1 << 20, correlation_id=9))
        (size,) = struct.unpack(">i", recv_exact(s, 4))
        body = recv_exact(s, size)
    finally:
        s.close()
    assert struct.unpack_from(">i", body)[0] == 9
    data = records_of_v4(body[4:])
    assert data == log_file_bytes(mweir, topic, 0)[:len(data)] and len(data) > 0
