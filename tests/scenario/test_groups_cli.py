"""kafka-consumer-groups (Apache Kafka 4.3.1's ConsumerGroupCommand) against weir and Kafka.

Each test runs against both brokers and asserts what the tool prints against Kafka: --list,
--describe (offsets, lag, members, --verbose, --state), --delete, --delete-offsets and
--reset-offsets with its strategies, dry run and execute. Records are produced to explicit
partitions, so offsets are known; committed offsets are checked through the admin client
(OffsetFetch), independently of the tool.

Each JVM start costs seconds: the tool runs with the C1 compiler only and a serial GC (faster
start, same behaviour), and the independent invocations of a test run side by side.
"""
from __future__ import annotations

import datetime
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from confluent_kafka import Consumer, ConsumerGroupTopicPartitions, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from harness import parse_table, run_tool

TOOL_ENV = {"KAFKA_JVM_PERFORMANCE_OPTS": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Djava.awt.headless=true"}
DESCRIBE_COLUMNS = ["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG",
                    "CONSUMER-ID", "HOST", "CLIENT-ID"]
MEMBERS_COLUMNS = ["GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS"]
VERBOSE_MEMBERS_COLUMNS = MEMBERS_COLUMNS + ["CURRENT-EPOCH", "CURRENT-ASSIGNMENT", "TARGET-EPOCH",
                                             "TARGET-ASSIGNMENT"]
RESET_COLUMNS = ["GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"]
CLIENT_HOST = "/127.0.0.1"  # InetAddress.toString() of the test process's address


# ------------------------------------------------------------------------------------ helpers
def cg(broker, *args):
    """kafka-consumer-groups with args; the tool reports most errors with exit code 0."""
    return run_tool("kafka-consumer-groups", *args, bootstrap=broker, env=TOOL_ENV, timeout=90).check()


def cg_parallel(broker, *invocations):
    """Several invocations that do not depend on each other, side by side; results in order."""
    with ThreadPoolExecutor(max_workers=3) as pool:
        return list(pool.map(lambda args: cg(broker, *args), invocations))


def header(text: str, first: str) -> list[str]:
    return next(ln.split() for ln in text.splitlines() if ln.split()[:1] == [first])


def rows_by_partition(text: str, topic: str) -> dict[int, dict[str, str]]:
    rows = parse_table(text, header_first="GROUP")
    assert all(r["TOPIC"] == topic for r in rows), text
    out = {int(r["PARTITION"]): r for r in rows}
    assert len(out) == len(rows), text
    return out


def state_row(text: str, group: str) -> tuple[str, str, str, int]:
    """--describe --state: (coordinator "host:port (id)", assignment strategy, state, #members)."""
    m = re.search(rf"^{re.escape(group)}\s+(\S+)\s+\((-?\d+)\)\s+(\S+)\s+(\S+)\s+(\d+)\s*$", text, re.M)
    assert m, text
    return f"{m[1]} ({m[2]})", m[3], m[4], int(m[5])


def reset_table(text: str, group: str, topic: str) -> dict[int, int]:
    assert header(text, "GROUP") == RESET_COLUMNS, text
    rows = parse_table(text, header_first="GROUP")
    assert rows and all((r["GROUP"], r["TOPIC"]) == (group, topic) for r in rows), text
    return {int(r["PARTITION"]): int(r["NEW-OFFSET"]) for r in rows}


def create_topic(broker, name: str, partitions: int) -> None:
    client = admin(broker)
    client.create_topics([NewTopic(name, partitions, 1)])[name].result(30)


def produce(broker, topic: str, counts: dict[int, int], timestamps=None) -> None:
    """counts: {partition: number of records}; timestamps(partition, i) -> ms, optional."""
    p = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 0})
    for partition, n in counts.items():
        for i in range(n):
            kw = {"timestamp": timestamps(partition, i)} if timestamps else {}
            p.produce(topic, value=f"{partition}-{i}".encode(), partition=partition, **kw)
    assert p.flush(30) == 0


def admin(broker) -> AdminClient:
    # The caller must keep the client referenced until its futures are done.
    return AdminClient({"bootstrap.servers": broker.bootstrap})


def committed(broker, group: str) -> dict[int, int]:
    """The group's committed offsets {partition: offset} (one topic per test), via OffsetFetch."""
    client = admin(broker)
    [fut] = client.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)]).values()
    return {tp.partition: tp.offset for tp in fut.result(30).topic_partitions}


def commit(broker, group: str, topic: str, offsets: dict[int, int]) -> None:
    """Commit as an admin does (OffsetCommit with generation -1): the group must be empty."""
    req = ConsumerGroupTopicPartitions(group, [TopicPartition(topic, p, o) for p, o in offsets.items()])
    client = admin(broker)
    [fut] = client.alter_consumer_group_offsets([req]).values()
    assert all(tp.error is None for tp in fut.result(30).topic_partitions)


def listed_groups(broker) -> set[str]:
    client = admin(broker)
    result = client.list_consumer_groups().result(30)
    return {g.group_id for g in result.valid}


def consume_and_commit(broker, group: str, topic: str, expect: int, client_id: str) -> None:
    """A consumer reads `expect` records, commits what it read and leaves the group."""
    c = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": group, "client.id": client_id,
                  "auto.offset.reset": "earliest", "enable.auto.commit": False})
    try:
        c.subscribe([topic])
        seen, deadline = 0, time.monotonic() + 60
        while seen < expect:
            assert time.monotonic() < deadline, f"consumed {seen} of {expect}"
            m = c.poll(0.2)
            if m is not None and m.error() is None:
                seen += 1
        c.commit(asynchronous=False)
    finally:
        c.close()


class LiveConsumer:
    """A consumer kept in the group by a background thread (all its calls happen there): it
    reads `expect` records, commits them once, and keeps polling until close()."""

    def __init__(self, broker, group: str, topic: str, expect: int, client_id: str) -> None:
        self.consumer = Consumer({
            "bootstrap.servers": broker.bootstrap, "group.id": group, "client.id": client_id,
            "auto.offset.reset": "earliest", "enable.auto.commit": False})
        self.topic, self.expect = topic, expect
        self.seen = 0
        self.assignment: list[int] = []
        self.committed = threading.Event()
        self.stopping = threading.Event()
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name=f"consumer-{client_id}", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            self.consumer.subscribe([self.topic])
            while not self.stopping.is_set():
                m = self.consumer.poll(0.2)
                if m is not None and m.error() is None:
                    self.seen += 1
                if self.seen >= self.expect and not self.committed.is_set():
                    self.consumer.commit(asynchronous=False)
                    self.assignment = sorted(tp.partition for tp in self.consumer.assignment())
                    self.committed.set()
        except BaseException as e:  # reported by wait_committed()/close()
            self.error = e
        finally:
            self.consumer.close()

    def wait_committed(self, timeout: float = 60.0) -> None:
        assert self.committed.wait(timeout) and self.error is None, \
            f"consumer saw {self.seen} of {self.expect} records (error: {self.error!r})"

    def close(self) -> None:
        self.stopping.set()
        self.thread.join(30)
        assert not self.thread.is_alive() and self.error is None, self.error


@pytest.fixture
def group(topic_name):
    return f"g-{topic_name}"


# ---------------------------------------------------------------------------------- describe
def test_list_and_describe_committed_offsets_then_lag(broker, topic_name, group):
    create_topic(broker, topic_name, 2)
    produce(broker, topic_name, {0: 5, 1: 3})
    consume_and_commit(broker, group, topic_name, 8, client_id="cg-describe")

    listing, desc, state = cg_parallel(
        broker, ["--list"], ["--describe", "--group", group], ["--describe", "--group", group, "--state"])

    assert group in listing.lines
    assert header(desc.stdout, "GROUP") == DESCRIBE_COLUMNS
    rows = rows_by_partition(desc.stdout, topic_name)
    assert {p: (r["GROUP"], r["CURRENT-OFFSET"], r["LOG-END-OFFSET"], r["LAG"]) for p, r in rows.items()} == \
        {0: (group, "5", "5", "0"), 1: (group, "3", "3", "0")}
    assert all((r["CONSUMER-ID"], r["HOST"], r["CLIENT-ID"]) == ("-", "-", "-") for r in rows.values())
    assert f"Consumer group '{group}' has no active members." in desc.stdout + desc.stderr

    assert state_row(state.stdout, group) == (f"{broker.host}:{broker.port} ({broker.node_id})", "-", "Empty", 0)
    assert f"Consumer group '{group}' has no active members." in state.stdout + state.stderr

    # More records: the lag grows, the committed offsets stay.
    produce(broker, topic_name, {0: 4, 1: 1})
    again = cg(broker, "--describe", "--group", group)
    rows = rows_by_partition(again.stdout, topic_name)
    assert {p: (r["CURRENT-OFFSET"], r["LOG-END-OFFSET"], r["LAG"]) for p, r in rows.items()} == \
        {0: ("5", "9", "4"), 1: ("3", "4", "1")}


def test_describe_members_of_a_live_consumer(broker, topic_name, group):
    client_id = "cg-live"
    create_topic(broker, topic_name, 3)
    produce(broker, topic_name, {0: 2, 1: 2, 2: 2})
    live = LiveConsumer(broker, group, topic_name, expect=6, client_id=client_id)
    try:
        live.wait_committed()
        assert live.assignment == [0, 1, 2]

        desc, members, verbose, state, delete, reset = cg_parallel(
            broker,
            ["--describe", "--group", group],
            ["--describe", "--group", group, "--members"],
            ["--describe", "--group", group, "--members", "--verbose"],
            ["--describe", "--group", group, "--state"],
            ["--delete", "--group", group],
            ["--reset-offsets", "--group", group, "--topic", topic_name, "--to-earliest", "--execute"])

        rows = rows_by_partition(desc.stdout, topic_name)
        assert sorted(rows) == [0, 1, 2]
        [member_id] = {r["CONSUMER-ID"] for r in rows.values()}
        assert re.fullmatch(rf"{client_id}-[0-9a-f]{{8}}(-[0-9a-f]{{4}}){{3}}-[0-9a-f]{{12}}", member_id)
        assert {(r["CURRENT-OFFSET"], r["LOG-END-OFFSET"], r["LAG"], r["HOST"], r["CLIENT-ID"])
                for r in rows.values()} == {("2", "2", "0", CLIENT_HOST, client_id)}
        assert "has no active members" not in desc.stdout + desc.stderr

        assert header(members.stdout, "GROUP") == MEMBERS_COLUMNS
        assert parse_table(members.stdout, header_first="GROUP") == [dict(zip(MEMBERS_COLUMNS, [
            group, member_id, CLIENT_HOST, client_id, "3"]))]

        # --verbose: a classic group has no epochs or target assignment.
        assert header(verbose.stdout, "GROUP") == VERBOSE_MEMBERS_COLUMNS
        assert parse_table(verbose.stdout, header_first="GROUP") == [dict(zip(VERBOSE_MEMBERS_COLUMNS, [
            group, member_id, CLIENT_HOST, client_id, "3", "-", f"{topic_name}:0,1,2", "-", "-"]))]

        assert state_row(state.stdout, group) == \
            (f"{broker.host}:{broker.port} ({broker.node_id})", "range", "Stable", 1)

        # A live group can be neither deleted nor reset.
        assert delete.lines == [
            "Error: Deletion of some consumer groups failed:",
            f"* Group '{group}' could not be deleted due to: "
            "org.apache.kafka.common.errors.GroupNotEmptyException: The group is not empty."]
        assert (f"Error: Assignments can only be reset if the group '{group}' is inactive, "
                "but the current state is Stable.") in reset.lines
        assert parse_table(reset.stdout, header_first="GROUP") == []
        assert committed(broker, group) == {0: 2, 1: 2, 2: 2}
        assert group in listed_groups(broker)
    finally:
        live.close()


# ------------------------------------------------------------------------------------ delete
def test_delete_offsets_and_delete_groups(broker, topic_name, group):
    doomed, unknown = f"{group}-doomed", f"{group}-unknown"
    create_topic(broker, topic_name, 2)
    produce(broker, topic_name, {0: 4, 1: 4})
    commit(broker, group, topic_name, {0: 3, 1: 2})
    commit(broker, doomed, topic_name, {0: 1, 1: 1})
    assert {group, doomed} <= listed_groups(broker)

    offsets, deleted, not_found = cg_parallel(
        broker,
        ["--delete-offsets", "--group", group, "--topic", f"{topic_name}:1"],
        ["--delete", "--group", doomed],
        ["--delete", "--group", unknown])

    assert offsets.lines[0] == f"Request succeeded for deleting offsets from group {group}."
    assert parse_table(offsets.stdout, header_first="TOPIC") == [
        {"TOPIC": topic_name, "PARTITION": "1", "STATUS": "Successful"}]
    assert committed(broker, group) == {0: 3}

    assert deleted.lines == [f"Deletion of requested consumer groups ('{doomed}') was successful."]
    assert committed(broker, doomed) == {}
    groups = listed_groups(broker)
    assert group in groups and doomed not in groups and unknown not in groups

    assert not_found.lines == [
        "Error: Deletion of some consumer groups failed:",
        f"* Group '{unknown}' could not be deleted due to: "
        "org.apache.kafka.common.errors.GroupIdNotFoundException: The group id does not exist."]


# ------------------------------------------------------------------------------------- reset
def test_reset_offsets_strategies_dry_run_and_execute(broker, topic_name, group):
    create_topic(broker, topic_name, 2)
    # Record timestamps an hour ago, one (partition 0) or two (partition 1) seconds apart.
    base = (int(time.time()) - 3600) * 1000
    produce(broker, topic_name, {0: 6, 1: 3},
            timestamps=lambda p, i: base + i * (1000 if p == 0 else 2000))
    twin = f"{group}-twin"
    for g in (group, twin):
        commit(broker, g, topic_name, {0: 4, 1: 1})

    # The same reset, dry run and executed (on a twin group) side by side: both print the plan,
    # only --execute commits it.
    dry, executed = cg_parallel(
        broker,
        ["--reset-offsets", "--group", group, "--topic", topic_name, "--to-earliest", "--dry-run"],
        ["--reset-offsets", "--group", twin, "--topic", topic_name, "--to-earliest", "--execute"])
    assert reset_table(dry.stdout, group, topic_name) == {0: 0, 1: 0}
    assert reset_table(executed.stdout, twin, topic_name) == {0: 0, 1: 0}
    assert committed(broker, group) == {0: 4, 1: 1}
    assert committed(broker, twin) == {0: 0, 1: 0}

    def reset(*args) -> dict[int, int]:
        res = cg(broker, "--reset-offsets", "--group", group, *args)
        return reset_table(res.stdout, group, topic_name)

    assert reset("--all-topics", "--to-latest", "--execute") == {0: 6, 1: 3}
    assert committed(broker, group) == {0: 6, 1: 3}

    assert reset("--topic", f"{topic_name}:1", "--to-offset", "2", "--execute") == {1: 2}
    assert committed(broker, group) == {0: 6, 1: 2}

    # Shifting below the log start (the earliest offset) stops at it.
    assert reset("--topic", topic_name, "--shift-by", "-3", "--execute") == {0: 3, 1: 0}
    assert committed(broker, group) == {0: 3, 1: 0}

    # The first record at or after the time (UTC when no zone is given).
    when = datetime.datetime.fromtimestamp((base + 2500) / 1000, datetime.timezone.utc)
    assert reset("--topic", topic_name, "--to-datetime", when.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3],
                 "--execute") == {0: 3, 1: 2}
    assert committed(broker, group) == {0: 3, 1: 2}
