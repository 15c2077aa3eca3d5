"""weir's own metrics: the Prometheus endpoint on `metrics.listener` (GET /metrics).

weir only: these are weir's metrics, Apache Kafka exposes JMX instead. Each scenario drives weir
with real clients (confluent-kafka) or raw requests (harness.kreq, harness.wire), scrapes, and
asserts the values that are deterministic after what it did.
"""
from __future__ import annotations

import http.client
import re
import socket
import struct
import time

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from harness import wire
from harness.cluster import wait_for
from harness.kreq import Kreq
from harness.ports import free_port

UNKNOWN_TOPIC_OR_PARTITION = 3
INVALID_SESSION_TIMEOUT = 26
MEMBER_ID_REQUIRED = 79
COORDINATOR_NOT_READY = {14, 15, 16}

_SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


class Metrics:
    """One scrape: samples by name and labels."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.samples: dict[str, list[tuple[dict[str, str], float]]] = {}
        for line in text.splitlines():
            if not line or line.startswith("#"):
                continue
            m = _SAMPLE.match(line)
            assert m, f"not a Prometheus sample line: {line!r}"
            labels = dict(_LABEL.findall(m.group(2) or ""))
            self.samples.setdefault(m.group(1), []).append((labels, float(m.group(3))))

    def all(self, name: str, **labels: str) -> list[tuple[dict[str, str], float]]:
        return [(lab, v) for lab, v in self.samples.get(name, [])
                if all(lab.get(k) == str(val) for k, val in labels.items())]

    def value(self, name: str, **labels: str) -> float:
        """The one sample matching labels; 0 if there is none (counters not yet touched)."""
        found = self.all(name, **labels)
        assert len(found) <= 1, f"{name}{labels} matches {found}"
        return found[0][1] if found else 0.0

    def sum(self, name: str, **labels: str) -> float:
        return sum(v for _, v in self.all(name, **labels))


def http_get(port: int, path: str, method: str = "GET") -> tuple[int, str]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request(method, path)
        resp = conn.getresponse()
        return resp.status, resp.read().decode()
    finally:
        conn.close()


def scrape(broker) -> Metrics:
    status, body = http_get(broker.metrics_port, "/metrics")
    assert status == 200, body
    return Metrics(body)


@pytest.fixture
def mweir(weir_factory):
    """weir with the metrics endpoint on a free port."""
    port = free_port()
    b = weir_factory(settings={"metrics.listener": f"127.0.0.1:{port}"})
    b.metrics_port = port
    return b


def create_topic(broker, topic: str, partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(timeout=30)


def produce(broker, topic: str, n: int) -> None:
    p = Producer({"bootstrap.servers": broker.bootstrap, "acks": "all", "linger.ms": 5})
    for i in range(n):
        p.produce(topic, key=f"k{i}".encode(), value=f"value-{i}".encode())
    assert p.flush(30) == 0


def consume_and_commit(broker, topic: str, group: str, n: int) -> Consumer:
    """A group member that has read n records and committed synchronously; left open (joined)."""
    c = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": group, "auto.offset.reset": "earliest",
                  "enable.auto.commit": False})
    c.subscribe([topic])
    got = 0
    deadline = time.monotonic() + 60
    while got < n:
        assert time.monotonic() < deadline, f"consumed {got} of {n}"
        m = c.poll(1.0)
        if m is not None and not m.error():
            got += 1
    c.commit(asynchronous=False)
    return c


# ------------------------------------------------------------------------------------ scenarios
def test_produce_consume_commit_are_counted(mweir, topic_name):
    n = 60
    group = f"g-{topic_name}"
    create_topic(mweir, topic_name, 3)
    produce(mweir, topic_name, n)
    consumer = consume_and_commit(mweir, topic_name, group, n)
    try:
        m = scrape(mweir)
    finally:
        consumer.close()

    # Requests per API.
    assert m.value("weir_requests_total", api="Produce") >= 1
    assert m.value("weir_request_errors_total", api="Produce") == 0
    assert m.all("weir_errors_total", api="Produce") == []
    assert m.value("weir_request_bytes_total", api="Produce") > 0
    assert m.value("weir_response_bytes_total", api="Produce") > 0
    assert m.value("weir_requests_total", api="OffsetCommit") >= 1
    assert m.value("weir_requests_total", api="JoinGroup") >= 1
    assert m.value("weir_request_latency_seconds_count", api="Produce") == m.value("weir_requests_total",
                                                                                   api="Produce")
    # The scrape is not a Kafka request: nothing is in flight once the clients have their answers
    # except long-polling fetches and heartbeats.
    for labels, v in m.all("weir_requests_in_flight"):
        assert v >= 0, labels
    assert m.value("weir_connections_active") >= 1
    assert m.value("weir_connections_opened_total") >= m.value("weir_connections_active")

    # Partitions: the records are all there, once.
    parts = {lab["partition"]: v for lab, v in m.all("weir_partition_log_end_offset", topic=topic_name)}
    assert sorted(parts) == ["0", "1", "2"]
    assert sum(parts.values()) == n
    for p, leo in parts.items():
        assert m.value("weir_partition_high_watermark", topic=topic_name, partition=p) == leo
        assert m.value("weir_partition_log_start_offset", topic=topic_name, partition=p) == 0
        assert m.value("weir_partition_segments", topic=topic_name, partition=p) == 1
    assert m.sum("weir_partition_messages_in_total", topic=topic_name) == n
    assert m.sum("weir_partition_bytes_in_total", topic=topic_name) > 0
    assert m.sum("weir_partition_size_bytes", topic=topic_name) == m.sum("weir_partition_bytes_in_total",
                                                                        topic=topic_name)
    assert m.sum("weir_partition_bytes_out_total", topic=topic_name) > 0

    # The group: one member, a generation, offsets committed at the log end, no lag.
    assert m.value("weir_group_members", group=group) == 1
    assert m.value("weir_group_generation", group=group) >= 1
    assert m.value("weir_group_state", group=group, state="Stable") == 1
    assert m.value("weir_group_rebalances_total", group=group) >= 1
    assert m.value("weir_group_last_rebalance_seconds", group=group) >= 0
    for p, leo in parts.items():
        assert m.value("weir_group_committed_offset", group=group, topic=topic_name, partition=p) == leo
        assert m.value("weir_group_lag", group=group, topic=topic_name, partition=p) == 0


def test_error_answers_are_counted_by_code_and_logged(mweir, topic_name):
    before = scrape(mweir)
    with Kreq(mweir) as k:
        # Produce to a topic that does not exist (Produce never creates topics): the partition's
        # entry carries UNKNOWN_TOPIC_OR_PARTITION.
        r = k.send("Produce", 9, {"TransactionID": None, "Acks": -1, "TimeoutMillis": 5000, "Topics": [
            {"Topic": topic_name, "Partitions": [{"Partition": 7, "Records": b""}]}]})
        assert r["Topics"][0]["Partitions"][0]["ErrorCode"] == UNKNOWN_TOPIC_OR_PARTITION
        # A request refused as a whole, by a limit (group.min.session.timeout.ms).
        code = join_with_session_timeout(k, f"g-{topic_name}", 1)
        assert code == INVALID_SESSION_TIMEOUT
    after = scrape(mweir)

    produce_error = dict(api="Produce", error="UNKNOWN_TOPIC_OR_PARTITION", code="3", scope="entry")
    assert after.value("weir_errors_total", **produce_error) == before.value("weir_errors_total", **produce_error) + 1
    assert (after.value("weir_request_errors_total", api="Produce")
            == before.value("weir_request_errors_total", api="Produce") + 1)
    join_error = dict(api="JoinGroup", error="INVALID_SESSION_TIMEOUT", code="26", scope="request")
    assert after.value("weir_errors_total", **join_error) == 1
    assert after.value("weir_limit_hits_total", limit="group.session.timeout.ms") == 1

    # One structured line for the request refused as a whole (not for a partition's error).
    log = mweir.log_path.read_text()
    lines = [ln for ln in log.splitlines() if "event=request_rejected" in ln and "api=JoinGroup" in ln]
    assert len(lines) == 1, lines
    assert "error=INVALID_SESSION_TIMEOUT" in lines[0] and "api_version=5" in lines[0], lines[0]
    assert not [ln for ln in log.splitlines() if "event=request_rejected" in ln and "api=Produce" in ln]


def join_with_session_timeout(k: Kreq, group: str, session_timeout_ms: int, timeout: float = 30.0) -> int:
    """JoinGroup v5 once the group's coordinator is up; its error code."""
    deadline = time.monotonic() + timeout
    while True:
        coord = k.send("FindCoordinator", 2, {"CoordinatorType": 0, "CoordinatorKey": group})
        if coord["ErrorCode"] == 0:
            resp = k.send("JoinGroup", 5, {
                "Group": group, "SessionTimeoutMillis": session_timeout_ms, "RebalanceTimeoutMillis": 10000,
                "MemberID": "", "ProtocolType": "consumer", "Protocols": [{"Name": "range", "Metadata": b"m"}]})
            if resp["ErrorCode"] not in COORDINATOR_NOT_READY:
                return resp["ErrorCode"]
        assert time.monotonic() < deadline, f"no coordinator for {group}: {coord}"
        time.sleep(0.2)


def test_malformed_frames_are_counted_and_weir_keeps_serving(mweir):
    # The harness's readiness probe closed its connection; weir counts that close when it reads
    # the end, which may come after the probe returned: the counts start once it has.
    before = wait_for("the readiness probe's connection to be closed on weir's side",
                      lambda: m if (m := scrape(mweir)).value("weir_connections_active") == 0 else None, 30)
    # An ApiVersions v3 header whose body stops inside the client software name.
    header = struct.pack(">hhih", 18, 3, 1, 4) + b"kreq" + b"\x00"
    body = b"\x10abc"
    with wire.Connection(mweir.host, mweir.port) as c:
        c.send_raw(struct.pack(">i", len(header + body)) + header + body)
        assert c.wait_closed(10)
    # A header naming an API key nobody knows.
    with wire.Connection(mweir.host, mweir.port) as c:
        frame = struct.pack(">hhih", 999, 0, 2, -1)
        c.send_raw(struct.pack(">i", len(frame)) + frame)
        assert c.wait_closed(10)
    # A size above socket.request.max.bytes: closed before the body is read.
    with wire.Connection(mweir.host, mweir.port) as c:
        c.send_raw(struct.pack(">i", 0x7FFFFFF0))
        assert c.wait_closed(10)

    after = scrape(mweir)
    for reason in ("body", "unknown_api"):
        assert (after.value("weir_malformed_requests_total", reason=reason)
                == before.value("weir_malformed_requests_total", reason=reason) + 1), reason
    assert (after.value("weir_limit_hits_total", limit="socket.request.max.bytes")
            == before.value("weir_limit_hits_total", limit="socket.request.max.bytes") + 1)
    # Each was a rejected request with its own log line; each close is a connection error line.
    log = mweir.log_path.read_text()
    assert len([ln for ln in log.splitlines() if "event=request_rejected" in ln and "api=ApiVersions" in ln]) == 1
    assert len([ln for ln in log.splitlines() if "event=request_rejected" in ln and "api_key=999" in ln]) == 1
    assert len([ln for ln in log.splitlines() if "event=connection_closed" in ln]) == 3
    # weir still answers.
    assert wire.api_versions(mweir.host, mweir.port, 3).api_keys
    # The three connections were all closed by weir before the clients saw their end.
    assert after.value("weir_connections_opened_total") == before.value("weir_connections_opened_total") + 3
    assert after.value("weir_connections_closed_total") == before.value("weir_connections_closed_total") + 3
    assert after.value("weir_connections_active") == 0


def test_bad_http_requests_get_4xx_and_the_endpoint_keeps_serving(mweir):
    port = mweir.metrics_port
    assert http_get(port, "/")[0] == 404
    assert http_get(port, "/metrics/extra")[0] == 404
    assert http_get(port, "/metric")[0] == 404
    assert http_get(port, "/metrics", method="POST")[0] == 405
    for raw in (b"NOT HTTP\r\n\r\n", b"GET /metrics HTTP/1.1\r\nHost: x\r\nX: " + b"a" * 20000 + b"\r\n\r\n",
                b"\x00\xff\xfe\r\n\r\n"):
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            s.sendall(raw)
            data = b""
            while chunk := s.recv(4096):
                data += chunk
        assert data.startswith(b"HTTP/1.1 400 "), data[:100]
    m = scrape(mweir)
    assert m.value("weir_shards") >= 1
    # The HELP/TYPE lines come once per family, before its samples.
    types = [ln.split()[2] for ln in m.text.splitlines() if ln.startswith("# TYPE ")]
    assert len(types) == len(set(types))
    # And Kafka still answers on its own port.
    assert wire.api_versions(mweir.host, mweir.port, 3).api_keys


def test_metrics_listener_is_off_by_default(weir):
    # A weir-only broker key, reported by DescribeConfigs as weir's other keys are: null, default.
    with Kreq(weir) as k:
        r = k.send("DescribeConfigs", 4, {"Resources": [
            {"ResourceType": "BROKER", "ResourceName": str(weir.node_id), "ConfigNames": ["metrics.listener"]}]})
    [res] = r["Resources"]
    assert res["ErrorCode"] == 0
    [entry] = res["Configs"]
    assert (entry["Name"], entry["Value"], entry["Source"]) == ("metrics.listener", None, "DEFAULT_CONFIG"), entry
    assert "event=metrics_listening" not in weir.log_path.read_text()


def test_requests_are_counted_by_version(mweir):
    """weir_requests_by_version_total, as Kafka's RequestsPerSec{request,version}: each version a
    client used, and no line for versions nobody used."""
    with Kreq(mweir) as k:
        for _ in range(3):
            k.send("Metadata", 1, {"Topics": []})
        for _ in range(2):
            k.send("Metadata", 12, {"Topics": []})
        k.send("ApiVersions", 0, {})
    m = scrape(mweir)
    assert m.value("weir_requests_by_version_total", api="Metadata", version="1") == 3
    assert m.value("weir_requests_by_version_total", api="Metadata", version="12") == 2
    assert m.value("weir_requests_by_version_total", api="ApiVersions", version="0") >= 1
    assert m.all("weir_requests_by_version_total", api="Metadata", version="5") == []
    by_version = sum(v for _, v in m.all("weir_requests_by_version_total", api="Metadata"))
    assert by_version == m.value("weir_requests_total", api="Metadata")
