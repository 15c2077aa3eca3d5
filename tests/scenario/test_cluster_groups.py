"""A consumer group across the loss of its coordinator in a 3-broker cluster under one Kafka 4.3.1
controller (issue 15; seed 000's group experiment on seed 004's replicated cluster).

Parametrized by broker kinds like test_cluster_isr.py: "kafka" (three Kafka brokers, the oracle;
`slow`) and "weir" (three weir brokers; not slow: it runs in `make test`).

  - test_group_survives_the_coordinator_broker_kill9: __consumer_offsets with RF=3 and 3
    partitions, a topic with RF=3, 3 partitions, min.insync.replicas=2 holding N numbered
    acks=all records. A group of two confluent-kafka consumers (enable.auto.commit=False) reads
    part of them, committing synchronously after each batch; then the broker leading the group's
    __consumer_offsets partition (its coordinator) is killed -9. The group keeps consuming: the
    coordinator moves to another replica of that partition, commits are accepted by it, every
    record is delivered at least once. The group's committed offsets, read from the coordinator
    after every successful commit, never go back (in particular not across the failover: the
    commits acknowledged before the kill were replicated), and end at each partition's end
    offset. The killed broker rejoins the ISR of the offsets partition and of the topic.
"""
from __future__ import annotations

import time

import pytest
from confluent_kafka import (Consumer, ConsumerGroupTopicPartitions, KafkaError, KafkaException,
                             Producer, TopicPartition)
from confluent_kafka.admin import AdminClient, NewTopic

from harness.cluster import wait_for
from harness.kafka_hash import partition_for

pytestmark = [pytest.mark.kafka]

LAG_MS = 3000
OFFSETS_PARTITIONS = 3
BROKER_OVERRIDES = {
    "replica.lag.time.max.ms": LAG_MS,
    "unclean.leader.election.enable": False,
    "auto.create.topics.enable": False,
    "offsets.topic.replication.factor": 3,
    "offsets.topic.num.partitions": OFFSETS_PARTITIONS,
}
# As in test_cluster_isr.py: leaderships stay where the fault put them.
CONTROLLER_OVERRIDES = {"auto.leader.rebalance.enable": False}
PARTITIONS = 3
N = 600             # records, N / PARTITIONS per partition
BATCH = 20          # records per consume() call, committed before the next one
BEFORE_KILL = N // 3
OFFSETS_TOPIC = "__consumer_offsets"


@pytest.fixture(params=[
    pytest.param(("kafka", "kafka", "kafka"), id="kafka", marks=pytest.mark.slow),
    pytest.param(("weir", "weir", "weir"), id="weir"),
])
def kinds(request):
    return list(request.param)


def offsets_partition(group: str) -> int:
    """Kafka's partitionFor(groupId) over offsets.topic.num.partitions."""
    return partition_for(group, OFFSETS_PARTITIONS)


def produce_numbered(bootstrap: str, topic: str, n: int) -> dict[str, tuple[int, int]]:
    """rec-00000..: record i to partition i % PARTITIONS, acks=all, idempotent; value -> (p, offset)."""
    acked: dict[str, tuple[int, int]] = {}
    failed: dict[str, KafkaError] = {}

    def report(err, msg):
        v = msg.value().decode()
        if err is None:
            acked[v] = (msg.partition(), msg.offset())
        else:
            failed[v] = err
    p = Producer({"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": True})
    for i in range(n):
        p.produce(topic, value=f"rec-{i:05d}".encode(), partition=i % PARTITIONS, on_delivery=report)
        p.poll(0)
    left = p.flush(120)
    assert left == 0, f"{left} records undelivered after 120 s"
    assert not failed, {v: str(e) for v, e in list(failed.items())[:10]}
    return acked


class Member:
    """One consumer of the group. Holds its partitions paused while `hold` is set (so nothing is
    consumed before both members have their share); logs what it was handed."""

    def __init__(self, name: str, bootstrap: str, group: str, topic: str, hold: dict) -> None:
        self.name, self.hold = name, hold
        self.assignments: list[list[int]] = []
        # partition -> next offset to commit: delivered, not yet committed (a refused commit is
        # retried with the next batch while the partition stays assigned)
        self.pending: dict[int, int] = {}
        self.c = Consumer({"bootstrap.servers": bootstrap, "group.id": group,
                           "client.id": f"member-{name}", "enable.auto.commit": False,
                           "auto.offset.reset": "earliest", "session.timeout.ms": 45000,
                           "enable.partition.eof": False})
        self.c.subscribe([topic], on_assign=self._on_assign, on_revoke=self._on_revoke)

    def _on_assign(self, consumer, partitions):
        consumer.assign(partitions)
        if self.hold["on"]:
            consumer.pause(partitions)
        self.assignments.append(sorted(tp.partition for tp in partitions))

    def _on_revoke(self, consumer, partitions):
        for tp in partitions:
            self.pending.pop(tp.partition, None)
        self.assignments.append([])

    def assigned(self) -> list[int]:
        return sorted(tp.partition for tp in self.c.assignment())

    def close(self) -> None:
        self.c.close()


@pytest.mark.timeout(300)
def test_group_survives_the_coordinator_broker_kill9(cluster_factory, kinds, topic_name):
    t0 = time.monotonic()
    cluster = cluster_factory(kinds, controllers=1, broker_overrides=BROKER_OVERRIDES,
                              controller_overrides=CONTROLLER_OVERRIDES)
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    futures = admin.create_topics([NewTopic(topic_name, PARTITIONS, 3, config={"min.insync.replicas": "2"})],
                                  request_timeout=60)
    futures[topic_name].result(90)
    cluster.wait_topic(topic_name, partitions=PARTITIONS, replicas=3)

    acked = produce_numbered(cluster.bootstrap, topic_name, N)
    by_position = {pos: v for v, pos in acked.items()}
    assert len(by_position) == N, "two acknowledged records at one offset"
    ends = {p: 1 + max(o for q, o in acked.values() if q == p) for p in range(PARTITIONS)}
    assert ends == {p: N // PARTITIONS for p in range(PARTITIONS)}, ends
    tps = [TopicPartition(topic_name, p) for p in range(PARTITIONS)]

    group = f"g-{topic_name}"
    opart = offsets_partition(group)
    hold = {"on": True}
    members = [Member(name, cluster.bootstrap, group, topic_name, hold) for name in ("a", "b")]
    # (phase, member, partition, offset, value) for every record delivered
    deliveries: list[tuple[str, str, int, int, str]] = []
    # the group's committed offsets (from the coordinator) after every successful commit
    committed_series: list[tuple[str, dict[int, int]]] = []
    commit_errors: list[tuple[str, str, int, KafkaError]] = []  # (phase, member, partition, error)
    consumer_errors: list[tuple[str, str, str]] = []
    phase = "before"

    def committed_now(m: Member) -> dict[int, int]:
        got = m.c.committed(tps, timeout=30)
        for tp in got:
            assert tp.error is None, f"OffsetFetch {tp}: {tp.error}"
        return {tp.partition: tp.offset for tp in got}

    def take(m: Member, msgs) -> int:
        n = 0
        for msg in msgs:
            if msg.error() is not None:
                assert not msg.error().fatal(), msg.error()
                consumer_errors.append((phase, m.name, str(msg.error())))
                continue
            deliveries.append((phase, m.name, msg.partition(), msg.offset(), msg.value().decode()))
            m.pending[msg.partition()] = msg.offset() + 1
            n += 1
        return n

    def step(m: Member) -> int:
        """One batch from m, then a synchronous commit of what it delivered; returns the count."""
        n = take(m, m.c.consume(num_messages=BATCH, timeout=0.5))
        if not m.pending:
            return n
        offsets = [TopicPartition(topic_name, p, o) for p, o in sorted(m.pending.items())]
        try:
            result = m.c.commit(offsets=offsets, asynchronous=False)
            errors = [(tp.partition, tp.error) for tp in result if tp.error is not None]
        except KafkaException as e:
            errors = [(-1, e.args[0])]
        if errors:
            commit_errors.extend((phase, m.name, p, e) for p, e in errors)
        else:
            for tp in offsets:
                if m.pending.get(tp.partition) == tp.offset:
                    del m.pending[tp.partition]
            committed_series.append((phase, committed_now(m)))
        return n

    try:
        # Both members join; nothing is consumed until the group is stable with a share for each.
        def formed():
            for m in members:  # serves the rebalance callbacks; paused, so nothing should come
                take(m, m.c.consume(num_messages=BATCH, timeout=0.2))
            shares = [m.assigned() for m in members]
            return shares if all(shares) and sorted(sum(shares, [])) == list(range(PARTITIONS)) else None
        shares = wait_for("both members of the group assigned", formed, 60,
                          describe=lambda: {m.name: (m.assigned(), m.assignments) for m in members})
        hold["on"] = False
        for m in members:
            m.c.resume(m.c.assignment())

        # The coordinator leads the group's __consumer_offsets partition, replicated on all three.
        def coordinator():
            d = admin.describe_consumer_groups([group], request_timeout=10)[group].result(15)
            return d.coordinator.id if d.coordinator is not None and d.coordinator.id >= 0 else None
        coord = wait_for(f"the coordinator of {group}", coordinator, 30)
        assert cluster.wait_isr(OFFSETS_TOPIC, opart, 3, timeout=60) == [1, 2, 3]
        assert cluster.leader_of(OFFSETS_TOPIC, opart) == coord, (
            f"coordinator {coord} of {group} is not the leader of {OFFSETS_TOPIC}-{opart}: "
            f"{cluster.partition(OFFSETS_TOPIC, opart)}")

        # Part of the records, committed batch by batch.
        deadline = time.monotonic() + 60
        while len(deliveries) < BEFORE_KILL:
            assert time.monotonic() < deadline, f"{len(deliveries)} records delivered in 60 s"
            for m in members:
                step(m)
        assert {d[1] for d in deliveries} == {"a", "b"}, "one member consumed everything"
        assert len(deliveries) < N, "everything was consumed before the kill"
        assert committed_series, f"no commit succeeded before the kill: {commit_errors}"
        before = committed_series[-1][1]
        assert commit_errors == [], f"commits refused before the kill: {commit_errors}"

        # kill -9 of the coordinator's broker; the group goes on at once.
        cluster.kill(coord)
        t_kill = time.monotonic()
        phase = "after"
        survivors = sorted(b for b in cluster.brokers if b != coord)
        deadline = t_kill + 120

        def undelivered() -> set[tuple[int, int]]:
            return set(by_position) - {(p, o) for _, _, p, o, _ in deliveries}

        def group_caught_up() -> bool:
            last = committed_series[-1] if committed_series else None
            return last is not None and last[0] == "after" and last[1] == ends

        while undelivered() or not group_caught_up():
            assert time.monotonic() < deadline, (
                f"120 s after the kill: {len(undelivered())} records never delivered, committed "
                f"{committed_series[-1] if committed_series else None} of ends {ends}, commit "
                f"errors {commit_errors[-10:]}, assignments {[(m.name, m.assigned()) for m in members]}")
            for m in members:
                step(m)
        failover_s = time.monotonic() - t_kill

        new_coord = wait_for(f"a coordinator of {group} other than {coord}",
                             lambda: (c := coordinator()) != coord and c, 60)
        assert new_coord in survivors
        leader = cluster.wait_leader(OFFSETS_TOPIC, opart, timeout=30, not_id=coord)
        assert leader == new_coord, f"coordinator {new_coord}, {OFFSETS_TOPIC}-{opart} led by {leader}"

        # The new coordinator has the group, both members in it.
        def described():
            d = admin.describe_consumer_groups([group], request_timeout=10)[group].result(15)
            return (d.state.name, sorted(m.client_id for m in d.members))
        wait_for(f"{group} stable with its two members on coordinator {new_coord}",
                 lambda: described() == ("STABLE", ["member-a", "member-b"]), 30, describe=described)

        # What the new coordinator answers, and what the group was answered.
        listed = admin.list_consumer_group_offsets(
            [ConsumerGroupTopicPartitions(group, tps)], request_timeout=30)[group].result(40)
        final = {tp.partition: tp.offset for tp in listed.topic_partitions}
        assert final == ends, f"committed {final}, end offsets {ends}"
        for p in range(PARTITIONS):
            seq = [s[1][p] for s in committed_series]
            assert seq == sorted(seq), f"committed offset of {topic_name}-{p} went back: {committed_series}"
        after = [s[1] for s in committed_series if s[0] == "after"]
        assert after, "no commit succeeded after the kill"
        assert all(after[0][p] >= before[p] for p in range(PARTITIONS)), (
            f"the new coordinator lost commits: last before the kill {before}, first after {after[0]}")

        # At least once: every record delivered, each at its acknowledged position; everything at
        # or past the last pre-kill commit of its partition delivered after the kill.
        for _, name, p, o, v in deliveries:
            assert by_position.get((p, o)) == v, f"member {name} got {v} at {p}/{o}, acknowledged {acked.get(v)}"
        assert undelivered() == set()
        after_kill = {(p, o) for ph, _, p, o, _ in deliveries if ph == "after"}
        missed = sorted((p, o) for (p, o) in by_position if o >= before[p] and (p, o) not in after_kill)
        assert missed == [], f"past the last commit before the kill but not delivered after it: {missed[:20]}"
        redelivered = len(deliveries) - N
        # A commit refused while the coordinator moved is retried with the next batch (the last
        # successful one is the end offsets, checked above); only coordinator-moving errors may be.
        refused = [(name, p, str(e)) for ph, name, p, e in commit_errors if ph == "after"]
        assert all(e.retriable() for ph, _, _, e in commit_errors if ph == "after"), (
            f"commits refused with non-retriable errors after the kill: {refused}")
    finally:
        for m in members:
            m.close()

    # The killed broker comes back and rejoins the ISR of the offsets partition and of the topic.
    cluster.start_broker(coord)
    assert cluster.wait_isr(OFFSETS_TOPIC, opart, [1, 2, 3], timeout=90) == [1, 2, 3]
    for p in range(PARTITIONS):
        assert cluster.wait_isr(topic_name, p, [1, 2, 3], timeout=90) == [1, 2, 3]
    print(f"\n[{kinds[0]}] shares {shares}, coordinator {coord} -> {new_coord} "
          f"({OFFSETS_TOPIC}-{opart}); failover to caught-up {failover_s:.1f}s; "
          f"{len(deliveries)} deliveries ({redelivered} again), {len(committed_series)} commits, "
          f"refused after the kill: {refused[:5]}{'...' if len(refused) > 5 else ''}; "
          f"consumer errors {consumer_errors[:5]}; assignments {[(m.name, m.assignments) for m in members]}; "
          f"total {time.monotonic() - t0:.1f}s")
