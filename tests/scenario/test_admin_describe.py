"""Admin describe APIs against weir and Apache Kafka 4.3.1: DescribeTopicPartitions (what
kafka-topics --describe uses in Kafka 4), DescribeLogDirs (kafka-log-dirs) and DescribeProducers
(kafka-transactions describe-producers).

Each test runs against both brokers (the `broker` fixture) and asserts what Kafka 4.3.1 was seen
to answer: the tools' output, and raw answers (harness.kreq) for the inputs the tools never send
(cursors, partition limits, bad names, out-of-range partitions). Error codes and message texts
below are Kafka's.
"""
from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import pytest
from confluent_kafka import Producer

from harness import parse_table, run_tool
from harness.kreq import Kreq
from harness.paths import DATA

NONE = 0
UNKNOWN_SERVER_ERROR = -1
UNKNOWN_TOPIC_OR_PARTITION = 3
INVALID_TOPIC_EXCEPTION = 17
INVALID_REQUEST = 42

# Every topic operation (READ..ALTER_CONFIGS as a bit field): Kafka without an authorizer.
ALL_TOPIC_OPERATIONS = 3576
NO_OPERATIONS = -2147483648  # the field's default: Kafka's answer to a request it rejected whole
ZERO_UUID = [0] * 16

# Errors.UNKNOWN_TOPIC_OR_PARTITION.message(), sent with DescribeProducers' unknown topics.
UNKNOWN_TOPIC_MESSAGE = "This server does not host this topic-partition."
LONG_NAME = "a" * 250
# Kafka's Topic.validate messages, as DescribeProducers returns them.
INVALID_NAME_MESSAGES = {
    "bad/name": "Topic name is invalid: 'bad/name' contains one or more characters other than ASCII "
                "alphanumerics, '.', '_' and '-'",
    "": "Topic name is invalid: the empty string is not allowed",
    ".": "Topic name is invalid: '.' is not allowed",
    "..": "Topic name is invalid: '..' is not allowed",
    LONG_NAME: f"Topic name is invalid: the length of '{LONG_NAME}' is longer than the max allowed "
               f"length 249",
}
# Record timestamps the tests choose, so answers are exact: an hour before the run, well inside
# the default retention.ms (7 days). A fixed date in 2023 made the brokers' retention check delete
# the written segments whenever it ran between the writes and the describe (Kafka's first one runs
# 30 s after its start, then every 5 min), so sizes were sometimes 0.
BASE_TS = (int(time.time()) - 3600) * 1000


# ------------------------------------------------------------------------------------ helpers
def create_topics(k: Kreq, **partitions_by_name: int) -> None:
    """CreateTopics, then wait until the broker hosts every partition: Metadata shows its leader
    and DescribeLogDirs its log (Kafka creates the logs after the metadata is published)."""
    resp = k.send("CreateTopics", 7, {
        "Topics": [{"Topic": name, "NumPartitions": n, "ReplicationFactor": 1}
                   for name, n in partitions_by_name.items()],
        "TimeoutMillis": 15000})
    assert [t["ErrorCode"] for t in resp["Topics"]] == [NONE] * len(partitions_by_name), resp
    wanted = [{"Topic": name, "Partitions": list(range(n))} for name, n in partitions_by_name.items()]
    deadline = time.monotonic() + 15
    while True:
        md = k.send("Metadata", 12, {"Topics": [{"Topic": name} for name in partitions_by_name]})
        led = all(len(t["Partitions"]) == partitions_by_name[t["Topic"]]
                  and all(p["Leader"] >= 0 for p in t["Partitions"]) for t in md["Topics"])
        dirs = k.send("DescribeLogDirs", 4, {"Topics": wanted})
        hosted = {t["Topic"]: len(t["Partitions"]) for d in dirs["Dirs"] for t in d["Topics"]}
        if led and hosted == partitions_by_name:
            return
        assert time.monotonic() < deadline, (md, dirs)
        time.sleep(0.1)


def topic_ids(k: Kreq, *names: str) -> dict[str, list[int]]:
    md = k.send("Metadata", 12, {"Topics": [{"Topic": n} for n in names]})
    return {t["Topic"]: t["TopicID"] for t in md["Topics"]}


def produce_one_at_a_time(broker, topic: str, partition: int, count: int, *,
                          idempotent: bool = True, value_size: int = 10) -> None:
    """count records, each its own batch (flushed before the next), timestamps BASE_TS + i."""
    p = Producer({"bootstrap.servers": broker.bootstrap, "enable.idempotence": idempotent,
                  "acks": "all" if idempotent else "1", "linger.ms": 0})
    failures = []
    for i in range(count):
        p.produce(topic, key=f"k{i}".encode(), value=b"v" * value_size, partition=partition,
                  timestamp=BASE_TS + i,
                  on_delivery=lambda err, msg: failures.append(err) if err else None)
        assert p.flush(30) == 0
    assert failures == []


def describe_topic_partitions(k: Kreq, topics: list[str], *, cursor: tuple[str, int] | None = None,
                              limit: int | None = None) -> dict:
    body: dict = {"Topics": [{"Topic": t} for t in topics]}
    if cursor is not None:
        body["Cursor"] = {"Topic": cursor[0], "Partition": cursor[1]}
    if limit is not None:
        body["ResponsePartitionLimit"] = limit
    return k.send("DescribeTopicPartitions", 0, body)


def page(resp: dict) -> tuple[list[tuple], tuple | None]:
    """(topics as (name, error, [partition indexes]), next cursor as (topic, partition))."""
    topics = [(t["Topic"], t["ErrorCode"], [p["Partition"] for p in t["Partitions"]])
              for t in resp["Topics"]]
    nc = resp["NextCursor"]
    return topics, (nc["Topic"], nc["Partition"]) if nc is not None else None


def partition_entry(node_id: int, index: int) -> dict:
    return {"ErrorCode": NONE, "Partition": index, "LeaderID": node_id, "LeaderEpoch": 0,
            "Replicas": [node_id], "ISR": [node_id], "EligibleLeaderReplicas": [], "LastKnownELR": [],
            "OfflineReplicas": [], "UnknownTags": {}}


def unknown_topic_entry(name: str, error: int) -> dict:
    return {"ErrorCode": error, "Topic": name, "TopicID": ZERO_UUID, "IsInternal": False,
            "Partitions": [], "AuthorizedOperations": ALL_TOPIC_OPERATIONS, "UnknownTags": {}}


def rejected_entry(name: str, error: int) -> dict:
    return {"ErrorCode": error, "Topic": name, "TopicID": ZERO_UUID, "IsInternal": False,
            "Partitions": [], "AuthorizedOperations": NO_OPERATIONS, "UnknownTags": {}}


def log_files_size(broker, topic: str, partition: int) -> int:
    """Bytes of the partition's segment files (*.log) in the broker's data directory."""
    d = Path(broker.data_dir) / f"{topic}-{partition}"
    return sum(f.stat().st_size for f in d.glob("*.log"))


def log_dirs_json(res) -> dict:
    """The JSON document kafka-log-dirs prints after its two progress lines."""
    lines = [ln for ln in res.lines if ln.startswith("{")]
    assert len(lines) == 1, res.describe()
    return json.loads(lines[0])


def tool_partitions(doc: dict, node_id: int, topic_prefix: str) -> tuple[str, dict]:
    (b,) = doc["brokers"]
    assert b["broker"] == node_id
    (d,) = b["logDirs"]
    assert d["error"] is None
    parts = {p["partition"]: (p["size"], p["offsetLag"], p["isFuture"])
             for p in d["partitions"] if p["partition"].startswith(topic_prefix)}
    return d["logDir"], parts


def log_dirs_topics(resp: dict, prefix: str) -> dict[str, dict[int, int]]:
    """{topic: {partition: size}} of one DescribeLogDirs answer, for topics starting with prefix."""
    (d,) = resp["Dirs"]
    out: dict[str, dict[int, int]] = {}
    for t in d["Topics"]:
        if t["Topic"].startswith(prefix):
            for p in t["Partitions"]:
                assert (p["OffsetLag"], p["IsFuture"]) == (0, False), p
            out[t["Topic"]] = {p["Partition"]: p["Size"] for p in t["Partitions"]}
    return out


def describe_blocks(stdout: str) -> dict[str, list[str]]:
    """kafka-topics --describe output as {topic: its lines}, topic ids replaced by <id>."""
    blocks: dict[str, list[str]] = {}
    current = None
    for ln in stdout.splitlines():
        ln = re.sub(r"TopicId: \S+", "TopicId: <id>", ln.rstrip())
        m = re.match(r"Topic: (\S+)\tTopicId:", ln)
        if m:
            current = blocks.setdefault(m[1], [])
        if ln.strip():
            assert current is not None, stdout
            current.append(ln)
    return blocks


def producers_table(res) -> list[dict[str, str]]:
    return parse_table(res.stdout, header_first="ProducerId")


# ------------------------------------------------------------------------------- ApiVersions
def test_admin_describe_apis_are_advertised_with_kafkas_versions(broker):
    recorded = json.loads((DATA / "kafka-4.3.1-api-versions.json").read_text())
    want = {a["key"]: (a["min"], a["max"]) for a in recorded["api_keys"] if a["key"] in (35, 61, 75)}
    assert want == {35: (1, 5), 61: (0, 0), 75: (0, 0)}
    with Kreq(broker) as k:
        resp = k.send("ApiVersions", 3, {"ClientSoftwareName": "weir-tests", "ClientSoftwareVersion": "1"})
    got = {a["ApiKey"]: (a["MinVersion"], a["MaxVersion"]) for a in resp["ApiKeys"] if a["ApiKey"] in want}
    assert got == want


# -------------------------------------------------------------------- DescribeTopicPartitions
def test_kafka_topics_describe_shows_partitions_with_elr_lists(broker, topic_name):
    run_tool("kafka-topics", "--create", "--topic", topic_name, "--partitions", 3,
             "--replication-factor", 1, bootstrap=broker).check()
    res = run_tool("kafka-topics", "--describe", "--topic", topic_name, bootstrap=broker).check()

    n = broker.node_id
    # DescribeTopicPartitions answers empty ELR lists ("Elr: "); the Metadata fallback prints N/A.
    assert [re.sub(r"TopicId: \S+", "TopicId: <id>", ln) for ln in res.lines] == [
        f"Topic: {topic_name}\tTopicId: <id>\tPartitionCount: 3\tReplicationFactor: 1\t"
        f"Configs: min.insync.replicas=1",
    ] + [f"\tTopic: {topic_name}\tPartition: {i}\tLeader: {n}\tReplicas: {n}\tIsr: {n}\tElr: \tLastKnownElr:"
         for i in range(3)]


def test_kafka_topics_describe_all_topics_pages_like_one_answer(broker, topic_name):
    a, b = f"{topic_name}-a", f"{topic_name}-b"
    with Kreq(broker) as k:
        create_topics(k, **{a: 4, b: 1})

    whole = run_tool("kafka-topics", "--describe", bootstrap=broker).check()
    # One partition per DescribeTopicPartitions answer: the admin client follows the cursors.
    paged = run_tool("kafka-topics", "--describe", "--partition-size-limit-per-response", 1,
                     bootstrap=broker).check()
    assert paged.stdout == whole.stdout

    # Topics come in the admin client's hash order, each with its partitions in order.
    listed = run_tool("kafka-topics", "--list", bootstrap=broker).check().lines
    blocks = describe_blocks(whole.stdout)
    assert sorted(blocks) == sorted(listed)
    n = broker.node_id
    row = "\tTopic: {}\tPartition: {}\tLeader: {n}\tReplicas: {n}\tIsr: {n}\tElr: \tLastKnownElr:"
    assert {t: blocks[t] for t in (a, b)} == {
        a: [f"Topic: {a}\tTopicId: <id>\tPartitionCount: 4\tReplicationFactor: 1\tConfigs: min.insync.replicas=1"]
           + [row.format(a, i, n=n) for i in range(4)],
        b: [f"Topic: {b}\tTopicId: <id>\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: min.insync.replicas=1"]
           + [row.format(b, 0, n=n)],
    }


def test_kafka_topics_describe_of_an_unknown_topic_fails(broker, topic_name):
    res = run_tool("kafka-topics", "--describe", "--topic", topic_name, bootstrap=broker)
    assert res.rc == 1, res.describe()
    assert res.stdout.startswith(
        f"Error while executing topic command : Topic '{topic_name}' does not exist as expected"), res.describe()

    quiet = run_tool("kafka-topics", "--describe", "--topic", topic_name, "--if-exists", bootstrap=broker).check()
    assert quiet.stdout == ""


def test_describe_topic_partitions_answers_requested_topics_in_name_order(broker, topic_name):
    a, b, missing = f"{topic_name}-a", f"{topic_name}-b", f"{topic_name}-missing"
    n = broker.node_id
    with Kreq(broker) as k:
        create_topics(k, **{a: 2, b: 1})
        ids = topic_ids(k, a, b)
        resp = describe_topic_partitions(k, [b, missing, "bad/name", a, b, ".", LONG_NAME])

    assert resp["NextCursor"] is None
    # Unknown and invalid names are answered in their place in name order, duplicates once.
    assert resp["Topics"] == sorted([
        {"ErrorCode": NONE, "Topic": a, "TopicID": ids[a], "IsInternal": False,
         "Partitions": [partition_entry(n, 0), partition_entry(n, 1)],
         "AuthorizedOperations": ALL_TOPIC_OPERATIONS, "UnknownTags": {}},
        {"ErrorCode": NONE, "Topic": b, "TopicID": ids[b], "IsInternal": False,
         "Partitions": [partition_entry(n, 0)],
         "AuthorizedOperations": ALL_TOPIC_OPERATIONS, "UnknownTags": {}},
        unknown_topic_entry(missing, UNKNOWN_TOPIC_OR_PARTITION),
        unknown_topic_entry("bad/name", INVALID_TOPIC_EXCEPTION),
        unknown_topic_entry(".", INVALID_TOPIC_EXCEPTION),
        unknown_topic_entry(LONG_NAME, INVALID_TOPIC_EXCEPTION),
    ], key=lambda t: t["Topic"])
    assert ids[a] != ZERO_UUID and ids[b] != ZERO_UUID


def test_describe_topic_partitions_pages_follow_the_cursor(broker, topic_name):
    a, b, c = f"{topic_name}-a", f"{topic_name}-b", f"{topic_name}-c"  # c does not exist
    with Kreq(broker) as k:
        create_topics(k, **{a: 3, b: 2})
        pages = []
        cursor = None
        while True:
            topics, cursor = page(describe_topic_partitions(k, [c, b, a], cursor=cursor, limit=2))
            pages.append((topics, cursor))
            if cursor is None:
                break
        # A page that fills up exactly at a topic's end points at the start of the next topic.
        exact = page(describe_topic_partitions(k, [a, b, c], limit=3))

    assert pages == [
        ([(a, NONE, [0, 1])], (a, 2)),
        ([(a, NONE, [2]), (b, NONE, [0])], (b, 1)),
        ([(b, NONE, [1]), (c, UNKNOWN_TOPIC_OR_PARTITION, [])], None),
    ]
    assert exact == ([(a, NONE, [0, 1, 2])], (b, 0))


def test_describe_topic_partitions_of_every_topic_starts_at_the_cursor(broker, topic_name):
    a, b = f"{topic_name}-a", f"{topic_name}-b"
    with Kreq(broker) as k:
        create_topics(k, **{a: 3, b: 2})
        first = page(describe_topic_partitions(k, [], cursor=(a, 1), limit=3))
        # A cursor naming no topic starts at the first topic after it; limit 0 means 1.
        topics, cursor = page(describe_topic_partitions(k, [], cursor=(f"{topic_name}-aa", 7), limit=0))

    assert first == ([(a, NONE, [1, 2]), (b, NONE, [0])], (b, 1))
    assert topics == [(b, NONE, [0])] and cursor == (b, 1)


def test_describe_topic_partitions_refuses_bad_cursors(broker, topic_name):
    a, missing = f"{topic_name}-a", f"{topic_name}-missing"
    with Kreq(broker) as k:
        create_topics(k, **{a: 2})
        # The cursor's topic must be in the requested list: every requested topic gets INVALID_REQUEST.
        not_listed = describe_topic_partitions(k, [a, a], cursor=(missing, 0))
        negative = describe_topic_partitions(k, [a], cursor=(a, -1))
        # Describing every topic, the rejected request answers no topic at all.
        negative_all = describe_topic_partitions(k, [], cursor=(a, -1))
        # Past the topic's end: the topic, with no partitions and no next cursor.
        past_end = page(describe_topic_partitions(k, [a], cursor=(a, 5)))
        # An unknown topic named by the cursor is answered in its place.
        unknown_cursor = page(describe_topic_partitions(k, [missing, a], cursor=(missing, 3)))
        still_fine = page(describe_topic_partitions(k, [a]))

    assert not_listed["Topics"] == [rejected_entry(a, INVALID_REQUEST)] * 2
    assert not_listed["NextCursor"] is None
    assert negative["Topics"] == [rejected_entry(a, INVALID_REQUEST)]
    assert negative_all["Topics"] == [] and negative_all["NextCursor"] is None
    assert past_end == ([(a, NONE, [])], None)
    assert unknown_cursor == ([(missing, UNKNOWN_TOPIC_OR_PARTITION, [])], None)
    assert still_fine == ([(a, NONE, [0, 1])], None)


def test_describe_topic_partitions_with_an_empty_topic_name(broker, topic_name):
    a = f"{topic_name}-a"
    with Kreq(broker) as k:
        create_topics(k, **{a: 1})
        # Without a cursor Kafka fails the whole request on "" (UNKNOWN_SERVER_ERROR per topic).
        no_cursor = describe_topic_partitions(k, [a, ""])
        # With one, "" is an invalid name like any other, or skipped when before the cursor.
        cursor_on_it = describe_topic_partitions(k, [""], cursor=("", 0))
        before_cursor = page(describe_topic_partitions(k, ["", a], cursor=(a, 0)))

    assert no_cursor["Topics"] == [rejected_entry(a, UNKNOWN_SERVER_ERROR), rejected_entry("", UNKNOWN_SERVER_ERROR)]
    assert cursor_on_it["Topics"] == [unknown_topic_entry("", INVALID_TOPIC_EXCEPTION)]
    assert before_cursor == ([(a, NONE, [0])], None)


# ----------------------------------------------------------------------------- DescribeLogDirs
def test_kafka_log_dirs_describes_the_data_directory(broker, topic_name):
    other = f"{topic_name}-other"
    with Kreq(broker) as k:
        create_topics(k, **{topic_name: 2, other: 1})
    produce_one_at_a_time(broker, topic_name, 1, 3)

    res = run_tool("kafka-log-dirs", "--describe", bootstrap=broker).check()
    assert res.lines[:2] == ["Querying brokers for log directories information",
                             f"Received log directory information from brokers {broker.node_id}"]
    log_dir, parts = tool_partitions(log_dirs_json(res), broker.node_id, topic_name)
    assert log_dir == str(broker.data_dir)
    size = log_files_size(broker, topic_name, 1)
    assert size > 0
    assert parts == {f"{topic_name}-0": (0, 0, False), f"{topic_name}-1": (size, 0, False),
                     f"{other}-0": (0, 0, False)}

    only = run_tool("kafka-log-dirs", "--describe", "--topic-list", f"{topic_name},{topic_name}-missing",
                    bootstrap=broker).check()
    _, parts = tool_partitions(log_dirs_json(only), broker.node_id, "")
    assert parts == {f"{topic_name}-0": (0, 0, False), f"{topic_name}-1": (size, 0, False)}


def test_kafka_log_dirs_refuses_unknown_brokers(broker):
    res = run_tool("kafka-log-dirs", "--describe", "--broker-list", f"{broker.node_id},7", bootstrap=broker)
    assert res.rc == 1, res.describe()
    assert res.stderr.strip().splitlines()[-1] == (
        f"ERROR: The given brokers do not exist from --broker-list: 7. Current existent brokers: {broker.node_id}")


@pytest.mark.parametrize("version", [1, 2, 3, 4, 5])
def test_describe_log_dirs_every_version(broker, topic_name, version):
    with Kreq(broker) as k:
        create_topics(k, **{topic_name: 2})
        produce_one_at_a_time(broker, topic_name, 0, 2)
        resp = k.send("DescribeLogDirs", version, {"Topics": None})
    st = os.statvfs(broker.data_dir)

    assert resp["ErrorCode"] == NONE
    (d,) = resp["Dirs"]
    assert (d["ErrorCode"], d["Dir"], d["IsCordoned"]) == (NONE, str(broker.data_dir), False)
    assert log_dirs_topics(resp, topic_name) == {
        topic_name: {0: log_files_size(broker, topic_name, 0), 1: 0}}
    if version >= 4:
        assert d["TotalBytes"] == st.f_blocks * st.f_frsize
        assert 0 < d["UsableBytes"] <= d["TotalBytes"]
    else:
        assert (d["TotalBytes"], d["UsableBytes"]) == (-1, -1)  # not in these versions


def test_describe_log_dirs_answers_only_the_requested_partitions(broker, topic_name):
    other = f"{topic_name}-other"
    with Kreq(broker) as k:
        create_topics(k, **{topic_name: 3, other: 1})

        def ask(topics):
            return log_dirs_topics(k.send("DescribeLogDirs", 4, {"Topics": topics}), topic_name)

        # Unknown topics and partitions are left out, duplicates answered once.
        picked = ask([{"Topic": topic_name, "Partitions": [2, 0, 0, 9, -1]},
                      {"Topic": f"{topic_name}-missing", "Partitions": [0]},
                      {"Topic": "bad/name", "Partitions": [0]},
                      {"Topic": topic_name, "Partitions": [2]}])
        nothing = ask([])
        no_partitions = ask([{"Topic": topic_name, "Partitions": []}])
        everything = ask(None)

    assert picked == {topic_name: {0: 0, 2: 0}}
    assert nothing == {} and no_partitions == {}
    assert everything == {topic_name: {0: 0, 1: 0, 2: 0}, other: {0: 0}}


@pytest.mark.differential
def test_partition_sizes_match_kafka(weir, kafka, topic_name):
    sizes = {}
    for b in (weir, kafka):
        with Kreq(b) as k:
            create_topics(k, **{topic_name: 2})
            produce_one_at_a_time(b, topic_name, 0, 3, value_size=100)
            produce_one_at_a_time(b, topic_name, 1, 1, idempotent=False, value_size=5)
            sizes[b.kind] = log_dirs_topics(k.send("DescribeLogDirs", 5, {"Topics": None}), topic_name)
    assert sizes["weir"] == sizes["kafka"]
    assert all(size > 0 for size in sizes["weir"][topic_name].values())


# ---------------------------------------------------------------------------- DescribeProducers
def test_kafka_transactions_describe_producers(broker, topic_name):
    with Kreq(broker) as k:
        create_topics(k, **{topic_name: 2})
    produce_one_at_a_time(broker, topic_name, 1, 3)

    busy = run_tool("kafka-transactions", "describe-producers", "--topic", topic_name, "--partition", 1,
                    bootstrap=broker).check()
    (row,) = producers_table(busy)
    assert int(row.pop("ProducerId")) >= 0
    assert row == {"ProducerEpoch": "0", "LatestCoordinatorEpoch": "-1", "LastSequence": "2",
                   "LastTimestamp": str(BASE_TS + 2), "CurrentTransactionStartOffset": "None"}

    idle = run_tool("kafka-transactions", "describe-producers", "--topic", topic_name, "--partition", 0,
                    "--broker-id", broker.node_id, bootstrap=broker).check()
    assert idle.lines == ["ProducerId\tProducerEpoch\tLatestCoordinatorEpoch\tLastSequence\tLastTimestamp\t"
                          "CurrentTransactionStartOffset"]


def test_kafka_transactions_describe_producers_errors(broker, topic_name, tmp_path):
    with Kreq(broker) as k:
        create_topics(k, **{topic_name: 1})
    # The admin client retries UNKNOWN_TOPIC_OR_PARTITION until its timeout; keep that short.
    config = tmp_path / "admin.properties"
    config.write_text("default.api.timeout.ms=5000\nrequest.timeout.ms=5000\n")

    def describe(*args):
        res = run_tool("kafka-transactions", "--command-config", config, "describe-producers", *args,
                       bootstrap=broker)
        assert res.rc == 1, res.describe()
        return [ln for ln in (res.stdout + res.stderr).splitlines() if ln.startswith("Failed to describe producers")]

    assert describe("--topic", topic_name, "--partition", 5, "--broker-id", broker.node_id) == [
        f"Failed to describe producers for partition {topic_name}-5 on broker {broker.node_id}: Timed out "
        f"waiting for a node assignment. Call: describeProducers(api=DESCRIBE_PRODUCERS). Enable debug "
        f"logging for additional detail."]
    # Sent straight to the broker, an invalid name comes back with the broker's message.
    assert describe("--topic", "bad/name", "--partition", 0, "--broker-id", broker.node_id) == [
        f"Failed to describe producers for partition bad/name-0 on broker {broker.node_id}: Failed to fetch "
        f"metadata for partition bad/name-0 due to invalid topic error: {INVALID_NAME_MESSAGES['bad/name']}. "
        f"Enable debug logging for additional detail."]


def test_describe_producers_lists_idempotent_producers_per_partition(broker, topic_name):
    with Kreq(broker) as k:
        create_topics(k, **{topic_name: 3})
        produce_one_at_a_time(broker, topic_name, 1, 3)
        produce_one_at_a_time(broker, topic_name, 1, 2)  # a second idempotent producer
        produce_one_at_a_time(broker, topic_name, 2, 2, idempotent=False)  # no producer id
        resp = k.send("DescribeProducers", 0, {"Topics": [
            {"Topic": topic_name, "Partitions": [0, 1, 2, 1]},
            {"Topic": topic_name, "Partitions": []}]})

    first, second = resp["Topics"]
    assert second == {"Topic": topic_name, "Partitions": [], "UnknownTags": {}}
    assert first["Topic"] == topic_name
    p0, p1, p2, p1_again = first["Partitions"]
    for p, index in ((p0, 0), (p1, 1), (p2, 2), (p1_again, 1)):
        assert (p["Partition"], p["ErrorCode"], p["ErrorMessage"]) == (index, NONE, None)
    assert p0["ActiveProducers"] == [] and p2["ActiveProducers"] == []
    assert p1_again["ActiveProducers"] == p1["ActiveProducers"]
    producers = sorted(p1["ActiveProducers"], key=lambda s: s["ProducerID"])
    assert len({s["ProducerID"] for s in producers}) == 2
    assert [{k: v for k, v in s.items() if k != "ProducerID"} for s in producers] == [
        {"ProducerEpoch": 0, "LastSequence": 2, "LastTimestamp": BASE_TS + 2, "CoordinatorEpoch": -1,
         "CurrentTxnStartOffset": -1, "UnknownTags": {}},
        {"ProducerEpoch": 0, "LastSequence": 1, "LastTimestamp": BASE_TS + 1, "CoordinatorEpoch": -1,
         "CurrentTxnStartOffset": -1, "UnknownTags": {}},
    ]


def test_describe_producers_errors_for_unknown_topics_and_partitions(broker, topic_name):
    missing = f"{topic_name}-missing"
    bad_names = ["bad/name", "", ".", "..", LONG_NAME]
    with Kreq(broker) as k:
        create_topics(k, **{topic_name: 2})
        resp = k.send("DescribeProducers", 0, {"Topics": [
            {"Topic": topic_name, "Partitions": [2, -1, 1]},
            {"Topic": missing, "Partitions": [0, 1]},
        ] + [{"Topic": name, "Partitions": [0]} for name in bad_names]})

    def entry(index, error, message=None):
        return {"Partition": index, "ErrorCode": error, "ErrorMessage": message, "ActiveProducers": [],
                "UnknownTags": {}}

    assert resp["Topics"] == [
        # Partitions the topic does not have: no message.
        {"Topic": topic_name, "Partitions": [entry(2, UNKNOWN_TOPIC_OR_PARTITION),
                                             entry(-1, UNKNOWN_TOPIC_OR_PARTITION), entry(1, NONE)],
         "UnknownTags": {}},
        # An unknown topic: every partition, with the error's message.
        {"Topic": missing, "Partitions": [entry(0, UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN_TOPIC_MESSAGE),
                                          entry(1, UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN_TOPIC_MESSAGE)],
         "UnknownTags": {}},
    ] + [{"Topic": name, "Partitions": [entry(0, INVALID_TOPIC_EXCEPTION, INVALID_NAME_MESSAGES[name])],
          "UnknownTags": {}} for name in bad_names]
