"""Online migration between a classic group and a consumer (KIP-848) group with Kafka's own Java
console consumers, against weir and against Apache Kafka 4.3.1 with the same assertions:
  - two classic members (group.protocol=classic) share a 4-partition topic;
  - a rolling upgrade: one is restarted with group.protocol=consumer; the group becomes a consumer
    group (ConsumerGroupDescribe: one classic member, MemberType 0, and one consumer-protocol
    member, MemberType 1, both reconciled), the classic member keeps consuming; then the other
    is restarted too and every member uses the consumer protocol;
  - a downgrade: a classic member joins the consumer group, the consumer-protocol members leave,
    and the group is a classic group again (ListGroups type "classic"), the classic member
    reading every partition;
  - every record produced is read by some member (at least once: a restart may re-read what was
    not committed yet).
"""
from __future__ import annotations

import time

import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from harness.cluster import wait_for
from harness.java_console import BATCH, PARTITIONS, ConsoleMember, describe, owned, produce
from harness.kreq import Kreq


def member_types(broker, group: str) -> dict[str, int]:
    """client id -> MemberType (0 classic, 1 consumer) of a reconciled consumer group; {} while it
    is not one or not reconciled."""
    g = describe(broker, group, 1)
    if not owned(g) or g["State"] != "Stable":
        return {}
    return {m["ClientID"]: m["MemberType"] for m in g["Members"]}


def classic_state(broker, group: str) -> tuple[str, str, int]:
    """(ListGroups type, DescribeGroups state, members) of the group."""
    with Kreq(broker) as k:
        listed = {g["Group"]: g["GroupType"] for g in k.send("ListGroups", 5, {})["Groups"]}
        [d] = k.send("DescribeGroups", 5, {"Groups": [group]})["Groups"]
    return listed.get(group, ""), d["State"], len(d["Members"])


@pytest.mark.timeout(300)
def test_rolling_upgrade_to_the_consumer_protocol_and_back(broker, topic_name, tmp_path):
    group = f"g-{topic_name}"
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic(topic_name, num_partitions=PARTITIONS, replication_factor=1)])[topic_name].result(30)
    started = time.monotonic()
    members: list[ConsoleMember] = []

    def start(name: str, protocol: str) -> ConsoleMember:
        m = ConsoleMember(broker, group, topic_name, name, tmp_path, protocol=protocol)
        members.append(m)
        return m

    def values_read() -> set[str]:
        return {r[2] for m in members for r in m.records()}

    def all_read(upto: int) -> None:
        want = {f"v{i}" for i in range(upto)}
        wait_for(f"the first {upto} records to be read", lambda: values_read() >= want, 90,
                 describe=lambda: f"missing {sorted(want - values_read())}")

    def stage(what: str) -> None:
        print(f"{what} after {time.monotonic() - started:.1f}s")

    try:
        produce(broker, topic_name, 0, BATCH)
        a = start("classic-a", "classic")
        b = start("classic-b", "classic")
        wait_for("two classic members, Stable", lambda: classic_state(broker, group) == ("classic", "Stable", 2), 60,
                 describe=lambda: repr(classic_state(broker, group)))
        all_read(BATCH)
        stage("classic group stable")

        # Rolling upgrade, first member: the group converts, b stays a classic member.
        a.stop()
        a2 = start("consumer-a", "consumer")
        wait_for("a consumer group of one classic and one consumer member",
                 lambda: member_types(broker, group) == {"classic-b": 0, "consumer-a": 1}, 90,
                 describe=lambda: f"{describe(broker, group, 1)!r}; stderr: {a2.err.read_text()[-2000:]}")
        split = owned(describe(broker, group, 1))
        assert sorted(len(p) for p in split.values()) == [2, 2], split
        stage("upgraded")
        read_by_b = len(b.records())
        produce(broker, topic_name, BATCH, BATCH)
        all_read(2 * BATCH)
        late_b = {p for p, _, v in b.records()[read_by_b:] if int(v[1:]) >= BATCH}
        assert late_b and late_b <= set(split["classic-b"]), (late_b, split)

        # Second member: every member uses the consumer protocol.
        b.stop()
        b2 = start("consumer-b", "consumer")
        wait_for("two consumer-protocol members",
                 lambda: member_types(broker, group) == {"consumer-a": 1, "consumer-b": 1}, 90,
                 describe=lambda: f"{describe(broker, group, 1)!r}; stderr: {b2.err.read_text()[-2000:]}")
        stage("all consumer protocol")
        produce(broker, topic_name, 2 * BATCH, BATCH)
        all_read(3 * BATCH)

        # Downgrade: a classic member joins, the consumer-protocol members leave.
        c = start("classic-c", "classic")
        wait_for("a classic member in the consumer group",
                 lambda: member_types(broker, group) == {"consumer-a": 1, "consumer-b": 1, "classic-c": 0}, 90,
                 describe=lambda: f"{describe(broker, group, 1)!r}; stderr: {c.err.read_text()[-2000:]}")
        b2.stop()
        a2.stop()
        wait_for("a classic group again, Stable with its one member",
                 lambda: classic_state(broker, group) == ("classic", "Stable", 1), 90,
                 describe=lambda: repr(classic_state(broker, group)))
        gone = describe(broker, group, 1)
        assert gone["ErrorCode"] == 69, gone  # GROUP_ID_NOT_FOUND: not a consumer group any more
        stage("downgraded")
        read_by_c = len(c.records())
        produce(broker, topic_name, 3 * BATCH, BATCH)
        all_read(4 * BATCH)
        wait_for("the classic member to read every partition of the last batch",
                 lambda: {p for p, _, v in c.records()[read_by_c:] if int(v[1:]) >= 3 * BATCH} == set(range(PARTITIONS)),
                 60)
        c.stop()
        stage("done")
    finally:
        for m in members:
            m.kill()
