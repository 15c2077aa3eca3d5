"""Incremental fetch sessions (KIP-227): Fetch v7+ with session ids and epochs, driven with raw
requests (harness.kreq) against weir and the real Kafka, and by the Java consumer end to end.

Each scenario is a script of fetches whose answers become a transcript (session ids, topic ids and
names normalised, record batches reduced to their base offsets and record counts). The `broker`
tests assert what the transcript must say on either broker; the differential tests compare weir's
transcript with Kafka's field by field."""
from __future__ import annotations

import base64
import http.client
import re
import struct
import threading
import time

import pytest

from harness import run_tool
from harness.kreq import Kreq, as_uuid
from harness.ports import free_port
from test_kreq import create_topic, wait_for_leaders

FETCH_SESSION_ID_NOT_FOUND = 70
INVALID_FETCH_SESSION_EPOCH = 71
FETCH_SESSION_TOPIC_ID_ERROR = 106
UNKNOWN_TOPIC_OR_PARTITION = 3
INCONSISTENT_TOPIC_ID = 103
UNKNOWN_SERVER_ERROR = -1
MAX_BYTES = 1 << 20
# Session ids outside the ranges of Kafka's 8 fetch session cache shards (2**31 // 8 ids each).
OUTSIDE_SHARDS = [2**31 - 1, 8 * ((2**31 - 1) // 8), -(2**31), -((2**31 - 1) // 8)]


# ------------------------------------------------------------------------------ helpers
def batches(records_b64: str) -> list[tuple[int, int]]:
    """(base offset, record count) of each RecordBatch v2 in a Fetch answer's records."""
    raw = base64.b64decode(records_b64 or "")
    out = []
    pos = 0
    while pos + 61 <= len(raw):
        base_offset, length = struct.unpack_from(">qi", raw, pos)
        (count,) = struct.unpack_from(">i", raw, pos + 57)
        out.append((base_offset, count))
        pos += 12 + length
    return out


class Script:
    """Fetches on one connection, with topic names and ids of the test's topics at hand, recording
    every answer as a normalised transcript entry."""

    def __init__(self, broker, k: Kreq, version: int) -> None:
        self.broker = broker
        self.k = k
        self.version = version
        self.ids: dict[str, object] = {}  # topic name -> uuid.UUID
        self.transcript: list[dict] = []
        self._session_labels: dict[int, str] = {}

    def create(self, name: str, partitions: int) -> None:
        created = create_topic(self.k, name, partitions)
        wait_for_leaders(self.k, name, partitions)
        self.ids[name] = as_uuid(created["TopicID"])
        self.wait_readable(name, partitions)

    def start_session(self, name: str, partitions: int) -> int:
        """Creates the topic and a session over its partitions (a full fetch at epoch 0)."""
        self.create(name, partitions)
        return self.fetch(0, 0, [self.topic(name, range(partitions))])["SessionID"]

    def wait_readable(self, name: str, partitions: int, timeout: float = 30.0) -> None:
        """Until a sessionless fetch reads every partition without error (Kafka answers
        NOT_LEADER_OR_FOLLOWER for a moment after creating a topic)."""
        deadline = time.monotonic() + timeout
        while True:
            resp = self.k.send("Fetch", 12, {"MaxWaitMillis": 0, "MinBytes": 1, "MaxBytes": MAX_BYTES,
                                             "Topics": [self.topic(name, range(partitions))]})
            codes = [p["ErrorCode"] for t in resp["Topics"] for p in t["Partitions"]]
            if codes and all(c == 0 for c in codes):
                return
            assert time.monotonic() < deadline, f"{name} not readable: {resp}"
            time.sleep(0.2)

    def topic(self, name: str, partitions, offset: int = 0) -> dict:
        offsets = partitions if isinstance(partitions, dict) else {p: offset for p in partitions}
        return {"Topic": name, "TopicID": self.ids[name],
                "Partitions": [{"Partition": p, "FetchOffset": o, "PartitionMaxBytes": MAX_BYTES}
                               for p, o in offsets.items()]}

    def produce(self, name: str, partition: int, value: bytes = b"v") -> None:
        produce(self.k, name, partition, value)

    def fetch(self, session_id: int, epoch: int, topics=(), forgotten=(), max_wait_ms: int = 0,
              version: int | None = None) -> dict:
        body = {"MaxWaitMillis": max_wait_ms, "MinBytes": 1, "MaxBytes": MAX_BYTES, "SessionID": session_id,
                "SessionEpoch": epoch, "Topics": list(topics),
                "ForgottenTopics": [{"Topic": n, "TopicID": self.ids[n], "Partitions": list(ps)}
                                    for n, ps in forgotten]}
        resp = self.k.send("Fetch", version or self.version, body)
        self.transcript.append(self.normalise(resp))
        return resp

    def normalise(self, resp: dict) -> dict:
        names = {str(v): n for n, v in self.ids.items()}
        out = {"ErrorCode": resp["ErrorCode"], "SessionID": self.session_label(resp["SessionID"]),
               "ThrottleMillis": resp["ThrottleMillis"], "Topics": []}
        for t in resp["Topics"]:
            label = t["Topic"] or names.get(str(as_uuid(t["TopicID"])), "?")
            parts = []
            for p in t["Partitions"]:
                q = {k: v for k, v in p.items() if k not in ("RecordBatches", "UnknownTags")}
                q["RecordBatches"] = batches(p["RecordBatches"])
                parts.append(q)
            out["Topics"].append({"Topic": self.label(label), "Partitions": parts})
        return out

    def label(self, name: str) -> str:
        for i, n in enumerate(self.ids):
            if n == name:
                return f"topic{i}"
        return name

    def session_label(self, sid: int) -> str | int:
        if sid == 0 or not 0 < sid < (1 << 31) - 8:
            return sid
        return self._session_labels.setdefault(sid, f"S{len(self._session_labels) + 1}")


def produce(k: Kreq, name: str, partition: int, value: bytes) -> None:
    resp = k.send("Produce", 9, {"Acks": -1, "TimeoutMillis": 15000, "Topics": [{
        "Topic": name, "Partitions": [{"Partition": partition, "Records": record_batch(value)}]}]})
    [t] = resp["Topics"]
    [p] = t["Partitions"]
    assert p["ErrorCode"] == 0, resp


def record_batch(value: bytes) -> bytes:
    """One uncompressed RecordBatch v2 with one record (CRC32C computed here)."""
    record = b"\x00" + zigzag(0) + zigzag(0) + zigzag(-1) + zigzag(len(value)) + value + zigzag(0)
    body_after_crc = struct.pack(">hiqqqhii", 0, 0, 1_700_000_000_000, 1_700_000_000_000, -1, -1, -1, 1) + \
        zigzag(len(record)) + record
    crc = crc32c(body_after_crc)
    rest = struct.pack(">ibI", -1, 2, crc) + body_after_crc
    return struct.pack(">qi", 0, len(rest)) + rest


def zigzag(n: int) -> bytes:
    v = (n << 1) ^ (n >> 63)
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def crc32c(data: bytes) -> int:
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 & -(crc & 1))
    return crc ^ 0xFFFFFFFF


def parts_of(resp: dict) -> dict[tuple[str, int], dict]:
    """Partitions of an answer by (topic label or id, partition)."""
    out = {}
    for t in resp["Topics"]:
        for p in t["Partitions"]:
            out[(t["Topic"], p["Partition"])] = p
    return out


# ---------------------------------------------------------------------------- scenarios
def incremental_answers_only_news(broker, name: str, version: int) -> Script:
    with Kreq(broker) as k:
        s = Script(broker, k, version)
        s.create(name, 3)
        s.produce(name, 0)
        s.produce(name, 1)
        full = s.fetch(0, 0, [s.topic(name, range(3))])
        sid = full["SessionID"]
        # The client moves its offsets past what it got: nothing else changed, nothing to say.
        s.fetch(sid, 1, [s.topic(name, {0: 1, 1: 1})])
        s.produce(name, 2)
        s.fetch(sid, 2)  # lists nothing, reads the whole session: only partition 2 has news
        s.fetch(sid, 3, [s.topic(name, {2: 1})])
        s.produce(name, 0)
        s.produce(name, 0)
        s.fetch(sid, 4)
        return s


def forgotten_partitions(broker, name: str, version: int) -> Script:
    other = name + "-b"
    with Kreq(broker) as k:
        s = Script(broker, k, version)
        s.create(name, 1)
        s.create(other, 2)
        full = s.fetch(0, 0, [s.topic(name, [0]), s.topic(other, [0, 1])])
        sid = full["SessionID"]
        s.fetch(sid, 1, forgotten=[(other, [0])])
        s.produce(other, 0)  # no longer in the session
        s.produce(name, 0)
        s.fetch(sid, 2)
        s.fetch(sid, 3, forgotten=[(name, [0]), (other, [1])])  # nothing left: the session ends
        s.fetch(sid, 4)
        return s


def session_errors(broker, name: str, version: int) -> Script:
    with Kreq(broker) as k:
        s = Script(broker, k, version)
        sid = s.start_session(name, 1)
        s.fetch(sid, 5)                      # wrong epoch
        s.fetch(sid, -2)                     # wrong epoch
        s.fetch(sid + 1 if sid % 2 == 0 else sid - 1, 1)  # no such session
        s.fetch(0, 1)                        # no such session
        s.produce(name, 0)
        s.fetch(sid, 1)                      # still fine at the right epoch
        if version >= 13:
            s.fetch(sid, 2, version=12)      # topic ids in the session, none in the request
        s.fetch(sid, -1, [s.topic(name, [0], offset=1)])  # close: a sessionless full fetch
        s.fetch(sid, 2)                      # the closed session is gone
        for odd in OUTSIDE_SHARDS:
            s.fetch(odd, 1)
        return s


def long_poll(broker, name: str, version: int) -> Script:
    with Kreq(broker) as k:
        s = Script(broker, k, version)
        sid = s.start_session(name, 2)
        s.fetch(sid, 1, max_wait_ms=300)  # nothing arrives: an empty answer after the wait

        def produce_later():
            time.sleep(0.5)
            with Kreq(broker) as other:
                produce(other, name, 1, b"late")

        producer = threading.Thread(target=produce_later)
        producer.start()
        s.fetch(sid, 2, max_wait_ms=20000)  # woken by the append on partition 1
        producer.join()
        return s


def deleted_and_recreated(broker, name: str, version: int) -> Script:
    with Kreq(broker) as k:
        s = Script(broker, k, version)
        sid = s.start_session(name, 2)
        deleted = k.send("DeleteTopics", 6, {"Topics": [{"Topic": name}], "TimeoutMillis": 15000})
        assert deleted["Topics"][0]["ErrorCode"] == 0
        wait_gone(k, name)
        s.fetch(sid, 1)
        s.fetch(sid, 2)  # errors are always news
        old_id = s.ids[name]
        s.create(name, 2)
        new_id = s.ids[name]
        assert new_id != old_id
        s.ids[name] = old_id  # the session's id, for the transcript
        s.fetch(sid, 3)
        return s


def wait_gone(k: Kreq, name: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        md = k.send("Metadata", 12, {"Topics": [{"Topic": name}], "AllowAutoTopicCreation": False})
        if md["Topics"][0]["ErrorCode"] == UNKNOWN_TOPIC_OR_PARTITION:
            return
        assert time.monotonic() < deadline, f"{name} still there: {md}"
        time.sleep(0.2)


VERSIONS = [7, 12, 13, 17]


# ------------------------------------------------------------------ behaviour, each broker
@pytest.mark.parametrize("version", VERSIONS)
def test_incremental_fetch_answers_only_partitions_with_news(broker, topic_name, version):
    t = incremental_answers_only_news(broker, topic_name, version).transcript

    full, moved, new_data, caught_up, two_more = t
    assert full["ErrorCode"] == 0 and full["SessionID"] == "S1"
    assert [(p["Partition"], p["RecordBatches"]) for p in full["Topics"][0]["Partitions"]] == \
        [(0, [(0, 1)]), (1, [(0, 1)]), (2, [])]
    assert moved == {"ErrorCode": 0, "SessionID": "S1", "ThrottleMillis": 0, "Topics": []}
    [topic] = new_data["Topics"]
    assert [(p["Partition"], p["HighWatermark"], p["RecordBatches"]) for p in topic["Partitions"]] == \
        [(2, 1, [(0, 1)])]
    assert caught_up["Topics"] == []
    [topic] = two_more["Topics"]
    assert [(p["Partition"], p["HighWatermark"], p["RecordBatches"]) for p in topic["Partitions"]] == \
        [(0, 3, [(1, 1), (2, 1)])]


@pytest.mark.parametrize("version", [7, 13])
def test_forgotten_partitions_leave_the_session(broker, topic_name, version):
    t = forgotten_partitions(broker, topic_name, version).transcript

    full, forgot, news, emptied, after = t
    assert full["SessionID"] == "S1" and len(full["Topics"]) == 2
    assert forgot["Topics"] == [] and forgot["SessionID"] == "S1"
    # Only the partition still in the session is read, though the forgotten one has data too.
    assert [(x["Topic"], [p["Partition"] for p in x["Partitions"]]) for x in news["Topics"]] == [("topic0", [0])]
    assert emptied == {"ErrorCode": 0, "SessionID": 0, "ThrottleMillis": 0, "Topics": []}
    assert after["ErrorCode"] == FETCH_SESSION_ID_NOT_FOUND and after["Topics"] == []


@pytest.mark.parametrize("version", VERSIONS)
def test_session_errors_epochs_unknown_ids_and_closing(broker, topic_name, version):
    t = session_errors(broker, topic_name, version).transcript

    full = t.pop(0)
    assert full["SessionID"] == "S1"
    error = {"SessionID": 0, "ThrottleMillis": 0, "Topics": []}
    assert t.pop(0) == {"ErrorCode": INVALID_FETCH_SESSION_EPOCH, **error}
    assert t.pop(0) == {"ErrorCode": INVALID_FETCH_SESSION_EPOCH, **error}
    assert t.pop(0) == {"ErrorCode": FETCH_SESSION_ID_NOT_FOUND, **error}
    assert t.pop(0) == {"ErrorCode": FETCH_SESSION_ID_NOT_FOUND, **error}
    right_epoch = t.pop(0)
    assert right_epoch["ErrorCode"] == 0 and right_epoch["SessionID"] == "S1"
    assert right_epoch["Topics"][0]["Partitions"][0]["RecordBatches"] == [(0, 1)]
    if version >= 13:
        assert t.pop(0) == {"ErrorCode": FETCH_SESSION_TOPIC_ID_ERROR, **error}
    closed = t.pop(0)
    assert closed["ErrorCode"] == 0 and closed["SessionID"] == 0
    assert [p["Partition"] for p in closed["Topics"][0]["Partitions"]] == [0]
    assert t.pop(0) == {"ErrorCode": FETCH_SESSION_ID_NOT_FOUND, **error}
    # Ids beyond the cache's shards fail the request as a whole in Kafka, the id echoed.
    for odd in OUTSIDE_SHARDS:
        assert t.pop(0) == {"ErrorCode": UNKNOWN_SERVER_ERROR, "SessionID": odd, "ThrottleMillis": 0, "Topics": []}
    assert t == []


@pytest.mark.parametrize("version", [12, 17])
def test_incremental_fetch_long_polls_the_whole_session(broker, topic_name, version):
    t = long_poll(broker, topic_name, version).transcript

    full, quiet, woken = t
    assert full["SessionID"] == "S1"
    assert quiet == {"ErrorCode": 0, "SessionID": "S1", "ThrottleMillis": 0, "Topics": []}
    [topic] = woken["Topics"]
    assert [(p["Partition"], p["RecordBatches"]) for p in topic["Partitions"]] == [(1, [(0, 1)])]


@pytest.mark.parametrize("version", [12, 13])
def test_topic_deleted_and_recreated_under_a_session(broker, topic_name, version):
    t = deleted_and_recreated(broker, topic_name, version).transcript

    full, gone, still_gone, recreated = t
    assert full["SessionID"] == "S1"
    for answer in (gone, still_gone):
        assert answer["SessionID"] == "S1"
        assert [(p["Partition"], p["ErrorCode"], p["HighWatermark"]) for p in answer["Topics"][0]["Partitions"]] == \
            [(0, UNKNOWN_TOPIC_OR_PARTITION, -1), (1, UNKNOWN_TOPIC_OR_PARTITION, -1)]
    [topic] = recreated["Topics"]
    if version >= 13:
        # The session holds the old topic id; the name now belongs to another topic.
        assert [(p["Partition"], p["ErrorCode"]) for p in topic["Partitions"]] == \
            [(0, INCONSISTENT_TOPIC_ID), (1, INCONSISTENT_TOPIC_ID)]
    else:
        assert [(p["Partition"], p["ErrorCode"], p["HighWatermark"]) for p in topic["Partitions"]] == \
            [(0, 0, 0), (1, 0, 0)]


# --------------------------------------------------------------------- weir against Kafka
SCENARIOS = {
    "news": (incremental_answers_only_news, VERSIONS),
    "forgotten": (forgotten_partitions, [7, 12, 13, 17]),
    "errors": (session_errors, VERSIONS),
    "long-poll": (long_poll, [12, 17]),
    "recreated": (deleted_and_recreated, [12, 13, 17]),
}


@pytest.mark.differential
@pytest.mark.parametrize("scenario, version", [pytest.param(n, v, id=f"{n}-v{v}")
                                               for n, (_, vs) in SCENARIOS.items() for v in vs])
def test_session_transcripts_match_kafka(weir, kafka, topic_name, scenario, version):
    run, _ = SCENARIOS[scenario]
    # The same topic name on both, so that only what legitimately differs is normalised.
    transcripts = {b.kind: run(b, f"{topic_name}-v{version}", version).transcript for b in (weir, kafka)}
    assert transcripts["weir"] == transcripts["kafka"]


@pytest.mark.differential
def test_full_session_cache_answers_session_id_zero_like_kafka(weir_factory, kafka_factory, topic_name):
    """max.incremental.fetch.session.cache.slots=8 gives each of Kafka's 8 cache shards one slot;
    new sessions go to the shards in turn, so the ninth finds its shard full of a young session."""
    slots = {"max.incremental.fetch.session.cache.slots": 8}
    answers = {}
    for b in (weir_factory(settings=slots), kafka_factory(overrides=slots)):
        with Kreq(b) as k:
            s = Script(b, k, 13)
            s.create(topic_name, 1)
            ids = [s.fetch(0, 0, [s.topic(topic_name, [0])])["SessionID"] for _ in range(9)]
            described = k.send("DescribeConfigs", 4, {"Resources": [{
                "ResourceType": "BROKER", "ResourceName": str(b.node_id),
                "ConfigNames": ["max.incremental.fetch.session.cache.slots"]}]})
        assert all(i != 0 for i in ids[:8]) and len(set(ids[:8])) == 8, ids
        assert ids[8] == 0
        [res] = described["Resources"]
        [cfg] = res["Configs"]
        answers[b.kind] = (s.transcript, cfg["Value"], cfg["Source"], cfg["ReadOnly"])
    assert answers["weir"] == answers["kafka"]
    assert answers["weir"][1] == "8"


# ------------------------------------------------------------------------- Java consumer
def produce_keyed(broker, topic: str, n: int) -> list[str]:
    values = [f"m{i:05d}" for i in range(n)]
    lines = "".join(f"k{i}:{v}\n" for i, v in enumerate(values))
    # Small batches, so that small fetches take many rounds.
    run_tool("kafka-console-producer", "--topic", topic, "--property", "parse.key=true",
             "--property", "key.separator=:", "--producer-property", "batch.size=512",
             bootstrap=broker, input=lines, timeout=120).check()
    return values


@pytest.mark.timeout(300)
def test_java_consumer_reads_every_record_once_through_incremental_fetches(broker, weir_factory, topic_name):
    metrics_port = None
    if broker.kind == "weir":
        broker.stop()
        metrics_port = free_port()
        broker = weir_factory(extra_args=["--log-level", "debug"],
                              settings={"metrics.listener": f"127.0.0.1:{metrics_port}"})
    n = 3000
    with Kreq(broker) as k:
        create_topic(k, topic_name, 6)
        wait_for_leaders(k, topic_name, 6)
    values = produce_keyed(broker, topic_name, n)

    # Small fetches make the consumer fetch many times, incrementally after the first.
    res = run_tool("kafka-console-consumer", "--topic", topic_name, "--from-beginning",
                   "--max-messages", str(n), "--timeout-ms", "60000",
                   "--consumer-property", "max.partition.fetch.bytes=1024",
                   "--consumer-property", "fetch.max.bytes=4096",
                   bootstrap=broker, timeout=240).check()
    got = [line for line in res.lines if line.startswith("m")]
    assert len(got) == n
    assert sorted(got) == values  # every record exactly once

    if broker.kind == "weir":
        log = broker.log_path.read_text()
        created = re.findall(r"event=fetch_session_created id=(\d+) partitions=6 ", log)
        assert created, "no fetch session was created"
        incremental = re.findall(rf"event=incremental_fetch id=(?:{'|'.join(created)}) ", log)
        assert len(incremental) >= 3, f"{len(incremental)} incremental fetches"
        # The same count on the metrics endpoint (other fetches may have been incremental too).
        conn = http.client.HTTPConnection("127.0.0.1", metrics_port, timeout=10)
        conn.request("GET", "/metrics")
        body = conn.getresponse().read().decode()
        conn.close()
        counted = re.search(r"^weir_incremental_fetches_total (\d+)$", body, re.M)
        assert counted and int(counted.group(1)) >= len(incremental), body[-2000:]
        assert re.search(r"^weir_fetch_sessions \d+$", body, re.M), "no session gauge"
