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
from harness.consumer_protocol import Member, expected, values
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


def offset_delete(k: Kreq, group: str, topics: dict[str, list[int]]) -> tuple[int, dict[str, dict[int, int]]]:
    """OffsetDelete v0: (error code, {topic: {partition: error code}})."""
    r = k.send("OffsetDelete", 0, {"Group": group, "Topics": [
        {"Topic": t, "Partitions": [{"Partition": p} for p in ps]} for t, ps in topics.items()]})
    return r["ErrorCode"], {t["Topic"]: {p["Partition"]: p["ErrorCode"] for p in t["Partitions"]}
                            for t in r["Topics"]}


def committed_offsets(k: Kreq, group: str, topics: list[str]) -> dict[tuple[str, int], int]:
    """Committed offsets of `topics` (OffsetFetch v8 as an admin: no member), -1 for none."""
    r = k.send("OffsetFetch", 8, {"Groups": [{"Group": group, "Topics": [
        {"Topic": t, "Partitions": list(range(PARTITIONS))} for t in topics]}]})
    g = r["Groups"][0]
    assert g["ErrorCode"] == 0, r
    return {(t["Topic"], p["Partition"]): p["Offset"] for t in g["Topics"] for p in t["Partitions"]}


@pytest.mark.timeout(300)
def test_offset_delete_spares_the_topics_a_consumer_group_subscribes_to(broker, topic_name):
    """OffsetDelete (API 47) on consumer-protocol groups: a topic a member subscribes to, by name or
    through a regex the broker resolved, answers GROUP_SUBSCRIBED_TO_TOPIC (86) per partition and
    keeps its offsets; other topics' offsets are deleted (each requested partition answered 0,
    whether it had an offset or not); once the group is empty everything may go; an unknown group
    is GROUP_ID_NOT_FOUND. The same through kafka-consumer-groups --delete-offsets."""
    subscribed, other = f"{topic_name}-sub", f"{topic_name}-other"
    for t in (subscribed, other):
        create_topic(broker, t)
    by_name, by_regex = f"g-{topic_name}", f"gr-{topic_name}"
    members = [Member(broker, by_name, subscribed, "by-name"), Member(broker, by_regex, f"^{subscribed}$", "by-regex")]
    try:
        def owned():
            for m in members:
                m.poll(0.2)
            return all(m.owned == set(range(PARTITIONS)) for m in members)
        wait_for("each member to own every partition of the subscribed topic", owned, 120, interval=0,
                 describe=lambda: " / ".join(str(m.owned) for m in members))
        for m in members:
            m.consumer.commit(offsets=[TopicPartition(subscribed, 0, 3), TopicPartition(subscribed, 1, 3),
                                       TopicPartition(other, 0, 5)], asynchronous=False)

        with Kreq(broker) as k:
            for group in (by_name, by_regex):
                err, parts = offset_delete(k, group, {subscribed: [0, 1], other: [0, 1]})
                assert err == 0, (group, err)
                # other-1 had no offset: answered all the same (Kafka writes no record for it).
                assert parts == {subscribed: {0: 86, 1: 86}, other: {0: 0, 1: 0}}, (group, parts)
                assert committed_offsets(k, group, [subscribed, other]) == {
                    **{(subscribed, p): 3 if p < 2 else -1 for p in range(PARTITIONS)},
                    **{(other, p): -1 for p in range(PARTITIONS)}}, group
            assert offset_delete(k, f"nosuch-{topic_name}", {other: [0]}) == (69, {})  # GROUP_ID_NOT_FOUND

            refused = run_tool("kafka-consumer-groups", "--delete-offsets", "--group", by_regex,
                               "--topic", f"{subscribed}:0", bootstrap=broker).check()
            refused_rows = [ln.split(None, 2) for ln in refused.lines if ln.startswith(subscribed)]

            for m in members:
                m.close(commit=False)

            def empty():
                d = k.send("ConsumerGroupDescribe", 0, {"Groups": [by_name, by_regex]})
                return all(g["ErrorCode"] == 0 and g["State"] == "Empty" for g in d["Groups"])
            wait_for("both groups to be empty", empty, 60)
            assert offset_delete(k, by_name, {subscribed: [0, 1]}) == (0, {subscribed: {0: 0, 1: 0}})
            assert committed_offsets(k, by_name, [subscribed])[(subscribed, 0)] == -1
            done = run_tool("kafka-consumer-groups", "--delete-offsets", "--group", by_regex,
                            "--topic", subscribed, bootstrap=broker).check()
            assert committed_offsets(k, by_regex, [subscribed]) == {(subscribed, p): -1 for p in range(PARTITIONS)}
        assert refused.lines[0] == "Error: Encountered some partition-level error, see the follow-up details.", \
            refused.stdout
        assert refused_rows == [[subscribed, "0", "Error: org.apache.kafka.common.errors.GroupSubscribedToTopicException: "
                                 "Deleting offsets of a topic is forbidden while the consumer group is actively "
                                 "subscribed to it."]], refused.stdout
        assert done.lines[0] == f"Request succeeded for deleting offsets from group {by_regex}.", done.stdout
        assert parse_table(done.stdout, header_first="TOPIC") == [
            {"TOPIC": subscribed, "PARTITION": str(p), "STATUS": "Successful"} for p in range(PARTITIONS)], done.stdout
    finally:
        for m in members:
            try:
                m.close(commit=False)
            except RuntimeError:
                pass  # already closed
