"""The consumer group protocol (KIP-848, issue 16) with confluent-kafka's `group.protocol=consumer`,
against weir and against Apache Kafka 4.3.1, with the same assertions:
  - one member gets all four partitions of a topic and reads every record; a second member joins
    and the partitions split 2/2, no record read twice or lost across the change (each member
    commits what it processed when partitions are revoked); the first leaves and the second owns
    all four;
  - `kafka-consumer-groups` lists the group and describes it (through ConsumerGroupDescribe),
    and `--describe --state` shows it Stable with its member count;
  - a regular-expression subscription (librdkafka sends a `^` pattern to the broker as
    SubscribedTopicRegex): the member reads the matching topics and not the others, and a matching
    topic created later is assigned to it once the coordinator resolves the regex again (Kafka
    does that on a heartbeat at least 10 s after the last resolution, when topics were created);
  - an invalid regex is refused with INVALID_REGULAR_EXPRESSION and Kafka's message.
With this protocol librdkafka refuses session.timeout.ms, heartbeat.interval.ms and
partition.assignment.strategy (the broker owns them), so none is set here.
"""
from __future__ import annotations

import time
import uuid

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from harness import parse_table, run_tool
from harness.cluster import wait_for
from harness.kreq import Kreq

PARTITIONS = 4
BATCH = 40  # records produced per phase, spread evenly over the partitions


def create_topic(broker, topic: str) -> None:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    futures = admin.create_topics([NewTopic(topic, num_partitions=PARTITIONS, replication_factor=1)])
    futures[topic].result(30)


def produce(broker, topic: str, start: int, count: int) -> None:
    p = Producer({"bootstrap.servers": broker.bootstrap})
    for i in range(start, start + count):
        p.produce(topic, value=f"v{i}".encode(), partition=i % PARTITIONS)
    assert p.flush(30) == 0


class Member:
    """A consumer-protocol consumer that records what it reads and what it owns, and commits the
    partitions it processed when they are revoked (so the next owner starts where it stopped)."""

    def __init__(self, broker, group: str, topic: str, name: str):
        self.name = name
        self.topic = topic
        self.owned: set[int] = set()
        self.processed: dict[int, int] = {}  # partition -> next offset to read
        self.commit_on_revoke = True
        self.read: list[tuple[int, int, bytes]] = []  # (partition, offset, value)
        self.consumer = Consumer({
            "bootstrap.servers": broker.bootstrap,
            "group.id": group,
            "group.protocol": "consumer",
            "client.id": name,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        })
        self.consumer.subscribe([topic], on_assign=self._on_assign, on_revoke=self._on_revoke,
                                on_lost=self._on_lost)

    def _on_assign(self, consumer, partitions):
        self.owned |= {tp.partition for tp in partitions}

    def _on_revoke(self, consumer, partitions):
        done = [TopicPartition(self.topic, tp.partition, self.processed[tp.partition])
                for tp in partitions if tp.partition in self.processed]
        if done and self.commit_on_revoke:
            consumer.commit(offsets=done, asynchronous=False)
        self.owned -= {tp.partition for tp in partitions}

    def _on_lost(self, consumer, partitions):
        self.owned -= {tp.partition for tp in partitions}

    def poll(self, timeout: float = 0.5) -> None:
        m = self.consumer.poll(timeout)
        if m is None or m.error():
            return
        self.read.append((m.partition(), m.offset(), m.value()))
        self.processed[m.partition()] = m.offset() + 1

    def close(self, commit: bool = True) -> None:
        """Leave the group. commit=False: a test's cleanup that checks no offsets afterwards. (While
        closing, librdkafka may revoke after it has left: Kafka then answers the revocation's commit
        UNKNOWN_MEMBER_ID, which close() raises.)"""
        self.commit_on_revoke = commit
        self.consumer.close()


def values(*members: Member) -> list[bytes]:
    return sorted(v for m in members for (_, _, v) in m.read)


def expected(count: int) -> list[bytes]:
    return sorted(f"v{i}".encode() for i in range(count))


@pytest.mark.timeout(300)
def test_members_share_partitions_without_loss_or_duplicates(broker, topic_name):
    create_topic(broker, topic_name)
    group = f"g-{topic_name}"
    produce(broker, topic_name, 0, BATCH)

    first = Member(broker, group, topic_name, "member-1")
    second = None
    try:
        def first_read_everything():
            first.poll()
            return first.owned == set(range(PARTITIONS)) and len(first.read) >= BATCH
        wait_for("the only member to own every partition and read every record", first_read_everything, 90,
                 interval=0, describe=lambda: f"owned={first.owned} read={len(first.read)}")
        assert values(first) == expected(BATCH)

        # A second member: the partitions split 2/2, each read once by whoever owned it then.
        second = Member(broker, group, topic_name, "member-2")
        produce(broker, topic_name, BATCH, BATCH)

        def split_and_read():
            first.poll(0.2)
            second.poll(0.2)
            return (len(first.owned) == 2 and len(second.owned) == 2 and not first.owned & second.owned
                    and len(first.read) + len(second.read) >= 2 * BATCH)
        wait_for("the partitions to split 2/2 and every record to be read", split_and_read, 120, interval=0,
                 describe=lambda: f"owned {first.owned} / {second.owned}, read {len(first.read)} + {len(second.read)}")
        assert values(first, second) == expected(2 * BATCH)

        # The first leaves (committing what it read as it gives its partitions up): the second
        # owns every partition and reads the rest from where the first stopped.
        first.close()
        produce(broker, topic_name, 2 * BATCH, BATCH)

        def second_owns_all():
            second.poll(0.2)
            return second.owned == set(range(PARTITIONS)) and len(first.read) + len(second.read) >= 3 * BATCH
        wait_for("the remaining member to own every partition and read every record", second_owns_all, 120,
                 interval=0, describe=lambda: f"owned={second.owned} read {len(first.read)} + {len(second.read)}")
        assert values(first, second) == expected(3 * BATCH)
        positions = [(p, o) for m in (first, second) for (p, o, _) in m.read]
        assert len(positions) == len(set(positions)), "a record was read twice"
    finally:
        if second is not None:
            second.close()
        try:
            first.close()
        except RuntimeError:
            pass  # already closed


@pytest.mark.timeout(300)
def test_kafka_consumer_groups_describes_a_consumer_protocol_group(broker, topic_name):
    create_topic(broker, topic_name)
    group = f"g-{topic_name}"
    produce(broker, topic_name, 0, PARTITIONS)
    members = [Member(broker, group, topic_name, f"member-{i}") for i in (1, 2)]
    try:
        def assigned():
            for m in members:
                m.poll(0.2)
            return all(len(m.owned) == 2 for m in members)
        wait_for("both members to own two partitions", assigned, 120, interval=0,
                 describe=lambda: " / ".join(str(m.owned) for m in members))

        listed = run_tool("kafka-consumer-groups", "--list", bootstrap=broker).check()
        assert group in listed.stdout.splitlines(), listed.stdout

        def described():
            for m in members:
                m.poll(0.1)
            res = run_tool("kafka-consumer-groups", "--describe", "--group", group, bootstrap=broker)
            rows = parse_table(res.stdout, "GROUP") if res.ok else []
            owned = [r for r in rows if r.get("TOPIC") == topic_name and r.get("CONSUMER-ID", "-") != "-"]
            return (res, rows) if len(owned) == PARTITIONS else None
        res, rows = wait_for("kafka-consumer-groups --describe to show the four owned partitions", described, 120,
                             interval=0)
        assert sorted(int(r["PARTITION"]) for r in rows if r["TOPIC"] == topic_name) == list(range(PARTITIONS))
        assert {r["GROUP"] for r in rows} == {group}
        assert {r["CLIENT-ID"] for r in rows} == {"member-1", "member-2"}, res.stdout

        def stable():
            for m in members:
                m.poll(0.1)
            res = run_tool("kafka-consumer-groups", "--describe", "--state", "--group", group, bootstrap=broker)
            rows = parse_table(res.stdout, "GROUP") if res.ok else []
            return rows if rows and rows[0].get("STATE") == "Stable" else None
        rows = wait_for("kafka-consumer-groups --describe --state to show the group Stable", stable, 120, interval=0)
        assert len(rows) == 1 and rows[0]["GROUP"] == group, rows
        assert rows[0]["#MEMBERS"] == "2", rows
    finally:
        for m in members:
            m.close(commit=False)


@pytest.mark.timeout(300)
def test_regex_subscription_follows_the_matching_topics(broker, topic_name):
    prefix = f"{topic_name}-rx"
    first, second, later = f"{prefix}-a", f"{prefix}-b", f"{prefix}-c"
    other = f"{topic_name}-other"
    for t in (first, second, other):
        create_topic(broker, t)
        produce(broker, t, 0, PARTITIONS)
    consumer = Consumer({
        "bootstrap.servers": broker.bootstrap,
        "group.id": f"g-{topic_name}",
        "group.protocol": "consumer",
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
    })
    read: dict[str, int] = {}

    def poll() -> None:
        m = consumer.poll(0.2)
        if m is not None and not m.error():
            read[m.topic()] = read.get(m.topic(), 0) + 1

    def assigned() -> set[str]:
        return {tp.topic for tp in consumer.assignment()}

    try:
        consumer.subscribe([f"^{prefix}.*"])

        def matching_read():
            poll()
            return read.get(first) == PARTITIONS and read.get(second) == PARTITIONS
        wait_for("the records of both matching topics", matching_read, 90, interval=0,
                 describe=lambda: f"assigned={assigned()} read={read}")
        assert assigned() == {first, second}
        assert other not in read
        # The broker resolved it: the member's subscription is the regex (librdkafka puts each
        # pattern in parentheses), not topic names.
        with Kreq(broker) as k:
            described = k.send("ConsumerGroupDescribe", 0, {"Groups": [f"g-{topic_name}"]})["Groups"][0]
        assert [(m["SubscribedTopicRegex"], m["SubscribedTopics"]) for m in described["Members"]] == [
            (f"(^{prefix}.*)", [])], described

        # A matching topic created now: assigned once the regex is resolved again.
        create_topic(broker, later)
        produce(broker, later, 0, PARTITIONS)
        started = time.monotonic()

        def later_read():
            poll()
            return read.get(later) == PARTITIONS
        wait_for("the topic created later to be assigned and read", later_read, 60, interval=0,
                 describe=lambda: f"assigned={assigned()} read={read}")
        assert assigned() == {first, second, later}, f"after {time.monotonic() - started:.1f}s"
        assert other not in read
    finally:
        consumer.close()


@pytest.mark.timeout(120)
def test_an_invalid_regex_is_refused(broker, topic_name):
    group = f"g-{topic_name}"
    with Kreq(broker) as k:
        def coordinator():
            fc = k.send("FindCoordinator", 4, {"CoordinatorType": 0, "CoordinatorKeys": [group]})
            return fc["Coordinators"][0]["ErrorCode"] == 0
        wait_for("a group coordinator", coordinator, 60)

        def join(regex: str) -> dict:
            body = {"Group": group, "MemberID": str(uuid.uuid4()), "MemberEpoch": 0, "RebalanceTimeoutMillis": 30000,
                    "SubscribedTopicNames": None, "SubscribedTopicRegex": regex, "Topics": []}
            return wait_for("a heartbeat answer from the coordinator",
                            lambda: (r := k.send("ConsumerGroupHeartbeat", 1, body))["ErrorCode"] not in (14, 15, 16)
                            and r, 30)

        for regex, why in (("[a", "missing closing ]"), ("a{1001}", "invalid repeat count"),
                           ("(a", "missing closing )")):
            r = join(regex)
            assert r["ErrorCode"] == 128, r  # INVALID_REGULAR_EXPRESSION
            assert r["ErrorMessage"] == f"SubscribedTopicRegex `{regex}` is not a valid regular expression: {why}.", r
        d = k.send("ConsumerGroupDescribe", 0, {"Groups": [group]})
        assert d["Groups"][0]["ErrorCode"] == 69, d  # GROUP_ID_NOT_FOUND: nothing was created
